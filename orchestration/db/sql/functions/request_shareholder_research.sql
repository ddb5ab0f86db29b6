-- request_shareholder_research: what the application calls when a user asks for shareholders
-- (interactive); a monitoring rule asks as background work.
CREATE OR REPLACE FUNCTION processing.request_shareholder_research(p_entity_id uuid, p_requested_by uuid DEFAULT NULL,
                                                                   p_priority processing.job_priority DEFAULT 'interactive')
RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
DECLARE
    job_id uuid;
BEGIN
    UPDATE content.entities SET shareholder_research_status = 'requested', updated_at = now()
     WHERE id = p_entity_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'entity % does not exist', p_entity_id USING ERRCODE = 'no_data_found';
    END IF;
    INSERT INTO processing.processing_jobs (type, status, entity_id, trigger, requested_by, reason, priority)
    VALUES ('shareholder_download', 'queued', p_entity_id,
            CASE WHEN p_requested_by IS NULL THEN 'automatic' ELSE 'manual' END,
            p_requested_by,
            CASE WHEN p_requested_by IS NULL THEN NULL ELSE 'shareholder research requested' END,
            p_priority)
    ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING
    RETURNING id INTO job_id;
    IF job_id IS NULL THEN  -- already queued or running: hand back the active job
        SELECT id INTO job_id FROM processing.processing_jobs
         WHERE work_key = processing.job_work_key('shareholder_download', NULL, p_entity_id, NULL, NULL)
           AND status IN ('queued', 'running');
    END IF;
    RETURN job_id;
END
$$;

REVOKE EXECUTE ON FUNCTION processing.request_shareholder_research(uuid, uuid, processing.job_priority) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION processing.request_shareholder_research(uuid, uuid, processing.job_priority)
    TO hreg_app, hreg_worker;
