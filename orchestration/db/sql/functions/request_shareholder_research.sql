-- request_shareholder_research: what the application calls when a user asks for shareholders
-- (interactive); a monitoring rule asks as background work.
CREATE OR REPLACE FUNCTION processing.request_shareholder_research(p_entity_id uuid, p_requested_by uuid DEFAULT NULL,
                                                                   p_priority processing.job_priority DEFAULT 'interactive')
RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
BEGIN
    UPDATE content.entities SET shareholder_research_status = 'requested', updated_at = now()
     WHERE id = p_entity_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'entity % does not exist', p_entity_id USING ERRCODE = 'no_data_found';
    END IF;
    RETURN processing.request_entity_job('shareholder_download', p_entity_id, p_requested_by, 'shareholder research requested', p_priority);
END
$$;

REVOKE EXECUTE ON FUNCTION processing.request_shareholder_research(uuid, uuid, processing.job_priority) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION processing.request_shareholder_research(uuid, uuid, processing.job_priority)
    TO hreg_app, hreg_worker;
