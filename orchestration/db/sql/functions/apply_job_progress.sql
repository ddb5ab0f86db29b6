-- apply_job_progress: the paths the seeds imply but do not spell out, for whole batches at once.
--   basic_discovery (search) claimed    -> search running
--   basic_discovery (search) completed  -> search completed with result_count
--   xml_parsing claimed                 -> entity xml_parsing
--   xml_parsing completed               -> entity parsed
--   shareholder_download completed      -> a shareholder_parsing job for the stored list, of the
--                                          same request (trigger, requested_by, reason, priority)
--   shareholder_parsing completed       -> shareholder research completed
CREATE OR REPLACE FUNCTION processing.apply_job_progress() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, public, pg_temp
AS $$
BEGIN
    UPDATE public.searches s
       SET status = CASE WHEN n.status = 'running' THEN 'running' ELSE 'completed' END,
           result_count = CASE WHEN n.status = 'completed'
                               THEN coalesce((n.result ->> 'result_count')::integer, 0)
                               ELSE s.result_count END,
           updated_at = now()
      FROM new_rows n JOIN old_rows o ON o.id = n.id
     WHERE s.id = n.search_id AND n.type = 'basic_discovery'
       AND n.status IN ('running', 'completed') AND o.status IS DISTINCT FROM n.status;

    -- The entities are found by primary key (ANY of an array): as a join, the planner reads the
    -- whole entity table for a batch of a few thousand jobs whenever that looks cheaper on paper.
    WITH parse_steps AS MATERIALIZED (
        SELECT n.entity_id, n.raw_document_id,
               CASE WHEN n.status = 'running' THEN 'xml_parsing' ELSE 'parsed' END AS entity_status
          FROM new_rows n JOIN old_rows o ON o.id = n.id
         WHERE n.type = 'xml_parsing'
           AND n.status IN ('running', 'completed') AND o.status IS DISTINCT FROM n.status
           -- A re-parse (parser_change, manual) leaves a parsed entity readable as parsed.
           AND (n.status = 'completed' OR n.trigger IN ('automatic', 'upload')))
    UPDATE content.entities e
       SET processing_status = p.entity_status, updated_at = now()
      FROM parse_steps p
     WHERE e.id = ANY (ARRAY(SELECT entity_id FROM parse_steps)) AND e.id = p.entity_id
       AND e.processing_status IS DISTINCT FROM p.entity_status
       -- A parse of an older document never overrides a newer download.
       AND e.current_si_document_id IS NOT DISTINCT FROM p.raw_document_id;

    -- The parse continues the download's request: a person's request stays theirs (trigger
    -- manual, requested_by, reason) through to the parse, which points back at the download.
    INSERT INTO processing.processing_jobs
        (type, status, entity_id, raw_document_id, trigger, requested_by, reason, previous_job_id, priority)
    SELECT 'shareholder_parsing', 'queued', n.entity_id, (n.result ->> 'raw_document_id')::uuid,
           n.trigger, n.requested_by, n.reason, n.id, n.priority
      FROM new_rows n JOIN old_rows o ON o.id = n.id
     WHERE n.type = 'shareholder_download' AND n.status = 'completed' AND o.status <> 'completed'
    ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING;

    UPDATE content.entities e
       SET shareholder_research_status = 'completed', updated_at = now()
      FROM new_rows n JOIN old_rows o ON o.id = n.id
     WHERE e.id = n.entity_id AND n.type = 'shareholder_parsing'
       AND n.status = 'completed' AND o.status <> 'completed';
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER apply_job_progress
    AFTER UPDATE ON processing.processing_jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION processing.apply_job_progress();

REVOKE EXECUTE ON FUNCTION processing.apply_job_progress() FROM PUBLIC;
