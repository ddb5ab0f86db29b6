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
BEGIN
    IF NOT EXISTS (SELECT 1 FROM content.entities WHERE id = p_entity_id) THEN
        RAISE EXCEPTION 'entity % does not exist', p_entity_id USING ERRCODE = 'no_data_found';
    END IF;
    RETURN processing.request_entity_job('printout_download', p_entity_id, p_requested_by, 'printout requested', p_priority);
END
$$;

REVOKE EXECUTE ON FUNCTION processing.request_printout(uuid, uuid, processing.job_priority) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION processing.request_printout(uuid, uuid, processing.job_priority) TO hreg_app;
