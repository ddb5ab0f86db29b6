-- name: in_scope
-- Part of the queries below: the companies a re-parse scope names that have a stored SI document.
-- A scope's fields are :entity_ids, :courts (register courts without a department letter, see
-- orchestration.records.courts), :search_id and :since; a field that is NULL does not narrow it.
e.current_si_document_id IS NOT NULL
    AND (CAST(:entity_ids AS uuid[]) IS NULL OR e.id = ANY(CAST(:entity_ids AS uuid[])))
    AND (CAST(:courts AS text[]) IS NULL OR left(e.court_code, 5) = ANY(CAST(:courts AS text[])))
    AND (CAST(:search_id AS uuid) IS NULL OR e.discovered_by_search_id = CAST(:search_id AS uuid))
    AND (CAST(:since AS timestamptz) IS NULL OR e.updated_at >= CAST(:since AS timestamptz))

-- name: enqueue_reparse
-- Queue xml_parsing jobs of :parser_version for the companies in scope (only the stale ones with :stale_only), each linked to the job it redoes.
-- One statement for any scope. "stale" picks companies whose current document no job of this
-- parser version has taken yet (in any state): what a parser change leaves to do.
INSERT INTO processing.processing_jobs
    (type, status, entity_id, raw_document_id, parser_version, trigger, requested_by, reason, previous_job_id)
SELECT 'xml_parsing', 'queued', e.id, e.current_si_document_id, :parser_version, :trigger,
       :requested_by, :reason, previous.id
  FROM content.entities e
  LEFT JOIN LATERAL (
        SELECT j.id FROM processing.processing_jobs j
         WHERE j.entity_id = e.id AND j.type = 'xml_parsing'
         ORDER BY j.created_at DESC LIMIT 1) previous ON true
 WHERE {in_scope}
   AND (NOT :stale_only OR NOT EXISTS (
            SELECT 1 FROM processing.processing_jobs done
             WHERE done.entity_id = e.id AND done.type = 'xml_parsing'
               AND done.raw_document_id = e.current_si_document_id
               AND done.parser_version = :parser_version)
        -- A completed job may have moved to the archive.
        AND NOT EXISTS (
            SELECT 1 FROM processing.job_archive done
             WHERE done.entity_id = e.id AND done.type = 'xml_parsing'
               AND done.raw_document_id = e.current_si_document_id
               AND done.parser_version = :parser_version))
ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING

-- name: count_active
-- How many companies in scope have a queued or running xml_parsing job of :parser_version for their document.
-- The work key is the one the unique index on active work compares: these are the companies
-- whose re-parse an enqueue would skip as already queued or running.
SELECT count(*)
  FROM content.entities e
 WHERE {in_scope}
   AND EXISTS (
        SELECT 1 FROM processing.processing_jobs j
         WHERE j.work_key = processing.job_work_key('xml_parsing', e.current_si_document_id, e.id, NULL,
                                                     :parser_version)
           AND j.status IN ('queued', 'running'))

-- name: newest_list
-- Part of the queries below: the newest stored shareholder list of company e.
SELECT d.id FROM content.raw_documents d
 WHERE d.entity_id = e.id AND d.kind = 'shareholder_list'
 ORDER BY d.retrieved_at DESC LIMIT 1

-- name: enqueue_list_rereads
-- Queue shareholder_parsing jobs of :parser_version for the newest lists of the companies :entity_ids, each linked to the job it redoes.
INSERT INTO processing.processing_jobs
    (type, status, entity_id, raw_document_id, parser_version, trigger, previous_job_id)
SELECT 'shareholder_parsing', 'queued', e.id, list.id, :parser_version, 'parser_change', previous.id
  FROM content.entities e
  CROSS JOIN LATERAL ({newest_list}) list
  LEFT JOIN LATERAL (
        SELECT j.id FROM processing.processing_jobs j
         WHERE j.entity_id = e.id AND j.type = 'shareholder_parsing'
         ORDER BY j.created_at DESC LIMIT 1) previous ON true
 WHERE e.id = ANY(CAST(:entity_ids AS uuid[]))
ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING
