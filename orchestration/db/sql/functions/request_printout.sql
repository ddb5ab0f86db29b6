-- request_printout: what the application calls when a user asks for a company's current printout
-- (AD, interactive); a monitoring rule or an unattended caller asks as background work. The job
-- reuses a printout retrieved within the freshness window (HREG_DOCUMENT_FRESH_HOURS) instead of
-- retrieving it again. Returns the job's id, the active one when the printout is already asked for.
CREATE OR REPLACE FUNCTION processing.request_printout(p_entity_id uuid, p_requested_by uuid DEFAULT NULL,
                                                       p_priority processing.job_priority DEFAULT 'interactive')
RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
DECLARE
    job_id uuid;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM content.entities WHERE id = p_entity_id) THEN
        RAISE EXCEPTION 'entity % does not exist', p_entity_id USING ERRCODE = 'no_data_found';
    END IF;
    INSERT INTO processing.processing_jobs (type, status, entity_id, trigger, requested_by, reason, priority)
    VALUES ('printout_download', 'queued', p_entity_id,
            CASE WHEN p_requested_by IS NULL THEN 'automatic' ELSE 'manual' END,
            p_requested_by,
            CASE WHEN p_requested_by IS NULL THEN NULL ELSE 'printout requested' END,
            p_priority)
    ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING
    RETURNING id INTO job_id;
    IF job_id IS NULL THEN  -- already queued or running: hand back the active job
        SELECT id INTO job_id FROM processing.processing_jobs
         WHERE work_key = processing.job_work_key('printout_download', NULL, p_entity_id, NULL, NULL)
           AND status IN ('queued', 'running');
    END IF;
    RETURN job_id;
END
$$;

REVOKE EXECUTE ON FUNCTION processing.request_printout(uuid, uuid, processing.job_priority) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION processing.request_printout(uuid, uuid, processing.job_priority) TO hreg_app;
