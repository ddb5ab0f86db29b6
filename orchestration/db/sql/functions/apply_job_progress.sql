-- apply_job_progress: the paths the seeds imply but do not spell out, for whole batches at once.
-- What a job shows comes from its type's processing.job_types row: a new type needs a row, not a
-- branch here.
--   a search's job claimed / completed -> search running / completed with result_count
--   a job claimed / completed          -> its entity's processing_status as the row says
--                                         (entity_status_running / _completed: xml_parsing
--                                         claimed -> xml_parsing, completed -> parsed)
--   a job completed                    -> shareholder_research_status as the row says
--                                         (shareholder_parsing -> completed); a claim shows there
--                                         through the seed's sync_shareholder_*_status triggers
--   a job completed, its row naming a continued_by type
--                                      -> a job of that type for the document its result names,
--                                         of the same request (trigger, requested_by, reason,
--                                         priority): shareholder_download -> shareholder_parsing
CREATE OR REPLACE FUNCTION processing.apply_job_progress() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, public, pg_temp
AS $$
BEGIN
    -- A search's status is its job's.
    UPDATE public.searches s
       SET status = CASE WHEN n.status = 'running' THEN 'running' ELSE 'completed' END,
           result_count = CASE WHEN n.status = 'completed'
                               THEN coalesce((n.result ->> 'result_count')::integer, 0)
                               ELSE s.result_count END,
           updated_at = now()
      FROM new_rows n JOIN old_rows o ON o.id = n.id
     WHERE s.id = n.search_id
       AND n.status IN ('running', 'completed') AND o.status IS DISTINCT FROM n.status;

    -- The entities are found by primary key (ANY of an array): as a join, the planner reads the
    -- whole entity table for a batch of a few thousand jobs whenever that looks cheaper on paper.
    WITH steps AS MATERIALIZED (
        SELECT * FROM (
            SELECT n.entity_id, n.raw_document_id, n.type,
                   CASE WHEN n.status = 'running' THEN jt.entity_status_running
                        ELSE jt.entity_status_completed END AS entity_status
              FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN processing.job_types jt ON jt.type = n.type
             WHERE jt.entity_status_column = 'processing_status'
               AND n.status IN ('running', 'completed') AND o.status IS DISTINCT FROM n.status
               -- Re-work (parser_change, manual) leaves a parsed entity readable as parsed.
               AND (n.status = 'completed' OR n.trigger IN ('automatic', 'upload'))) step
         WHERE entity_status IS NOT NULL)
    UPDATE content.entities e
       SET processing_status = p.entity_status, updated_at = now()
      FROM steps p
     WHERE e.id = ANY (ARRAY(SELECT entity_id FROM steps)) AND e.id = p.entity_id
       AND e.processing_status IS DISTINCT FROM p.entity_status
       -- A parse of an older document never overrides a newer download. Per-type logic, not a
       -- row's setting: it compares the parse's document with the entity's current SI document,
       -- which only a parse is of (a discovery fetches the current one); a flag column would be
       -- this type's name again.
       AND (p.type <> 'xml_parsing' OR e.current_si_document_id IS NOT DISTINCT FROM p.raw_document_id);

    -- The next job continues the completed one's request: a person's request stays theirs
    -- (trigger manual, requested_by, reason) through to it, and it points back at the job.
    INSERT INTO processing.processing_jobs
        (type, status, entity_id, raw_document_id, trigger, requested_by, reason, previous_job_id, priority)
    SELECT jt.continued_by, 'queued', n.entity_id, (n.result ->> 'raw_document_id')::uuid,
           n.trigger, n.requested_by, n.reason, n.id, n.priority
      FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN processing.job_types jt ON jt.type = n.type
     WHERE jt.continued_by IS NOT NULL AND n.status = 'completed' AND o.status <> 'completed'
    ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING;

    UPDATE content.entities e
       SET shareholder_research_status = jt.entity_status_completed, updated_at = now()
      FROM new_rows n JOIN old_rows o ON o.id = n.id JOIN processing.job_types jt ON jt.type = n.type
     WHERE e.id = n.entity_id AND jt.entity_status_column = 'shareholder_research_status'
       AND jt.entity_status_completed IS NOT NULL
       AND n.status = 'completed' AND o.status <> 'completed';
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER apply_job_progress
    AFTER UPDATE ON processing.processing_jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION processing.apply_job_progress();

REVOKE EXECUTE ON FUNCTION processing.apply_job_progress() FROM PUBLIC;
