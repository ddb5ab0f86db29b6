-- request_entity_job: one job of p_type for an entity, asked for by a person (p_requested_by, with
-- p_reason) or as background work (both NULL). What processing.request_shareholder_research and
-- processing.request_printout share; they check the entity and run as their definer. Returns the
-- job's id, the active one when that work is already queued or running.
CREATE OR REPLACE FUNCTION processing.request_entity_job(p_type text, p_entity_id uuid, p_requested_by uuid,
                                                         p_reason text, p_priority processing.job_priority)
RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, pg_temp
AS $$
DECLARE
    job_id uuid;
BEGIN
    INSERT INTO processing.processing_jobs (type, status, entity_id, trigger, requested_by, reason, priority)
    VALUES (p_type, 'queued', p_entity_id,
            CASE WHEN p_requested_by IS NULL THEN 'automatic' ELSE 'manual' END,
            p_requested_by,
            CASE WHEN p_requested_by IS NULL THEN NULL ELSE p_reason END,
            p_priority)
    ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING
    RETURNING id INTO job_id;
    IF job_id IS NULL THEN  -- already queued or running: hand back the active job
        SELECT id INTO job_id FROM processing.processing_jobs
         WHERE work_key = processing.job_work_key(p_type, NULL, p_entity_id, NULL, NULL)
           AND status IN ('queued', 'running');
    END IF;
    RETURN job_id;
END
$$;

REVOKE EXECUTE ON FUNCTION processing.request_entity_job(text, uuid, uuid, text, processing.job_priority) FROM PUBLIC;
