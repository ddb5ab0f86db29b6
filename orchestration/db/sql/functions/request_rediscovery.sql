-- request_rediscovery: fresh register data for one company, the re-check of a monitoring rule.
-- A discovered company takes the application's path (create_entity_discovery_job fires on
-- discovered -> basic_discovery_running); any other gets its basic_discovery job directly, since
-- that trigger does not fire for it. Returns the active job, also when one was already queued.
CREATE OR REPLACE FUNCTION automation.request_rediscovery(p_entity_id uuid, p_requested_by uuid DEFAULT NULL,
                                               p_reason text DEFAULT NULL)
RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
DECLARE
    entity content.entities;
    job_id uuid;
BEGIN
    UPDATE content.entities SET processing_status = 'basic_discovery_running', updated_at = now()
     WHERE id = p_entity_id AND processing_status = 'discovered';
    IF NOT FOUND THEN
        SELECT * INTO entity FROM content.entities WHERE id = p_entity_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'entity % does not exist', p_entity_id USING ERRCODE = 'no_data_found';
        END IF;
        INSERT INTO processing.processing_jobs (type, status, entity_id, trigger, requested_by, reason, data)
        VALUES ('basic_discovery', 'queued', entity.id,
                CASE WHEN p_requested_by IS NULL THEN 'automatic' ELSE 'manual' END,
                p_requested_by,
                CASE WHEN p_requested_by IS NULL THEN NULL
                     ELSE coalesce(nullif(btrim(p_reason), ''), 'register data re-check requested') END,
                jsonb_build_object(
                    'trigger_source', 'monitoring_rule',
                    'search_mode', 'exact_match',
                    'max_results', 1,
                    'search_term', entity.name,
                    'court_code', entity.court_code,
                    'register_type', entity.register_type,
                    'register_number', entity.register_number))
        ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING;
    END IF;
    SELECT id INTO job_id FROM processing.processing_jobs
     WHERE type = 'basic_discovery' AND entity_id = p_entity_id AND status IN ('queued', 'running');
    RETURN job_id;
END
$$;

REVOKE EXECUTE ON FUNCTION automation.request_rediscovery(uuid, uuid, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION automation.request_rediscovery(uuid, uuid, text) TO hreg_app, hreg_worker;
