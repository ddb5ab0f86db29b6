-- open_entity: fresh register data for one entity (its SI document), as a job of p_priority.
-- A person opening an entity (`hreg entity open`, or the application's own update of a
-- discovered entity to basic_discovery_running) asks as interactive; a monitoring rule's re-check
-- (automation.request_rediscovery) as background. A discovered entity takes the application's
-- path of seed 000 (create_entity_discovery_job fires on discovered -> basic_discovery_running);
-- any other gets its basic_discovery job directly, since that trigger does not fire for it. An
-- active job serves the most urgent of those who asked: a person's open lifts a queued
-- background re-check to interactive. Returns the active job.
CREATE OR REPLACE FUNCTION processing.open_entity(p_entity_id uuid,
                                                  p_priority processing.job_priority DEFAULT 'interactive',
                                                  p_requested_by uuid DEFAULT NULL, p_reason text DEFAULT NULL,
                                                  p_trigger_source text DEFAULT 'user_discovery')
RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
DECLARE
    entity content.entities;
    active_before uuid;
    job_id uuid;
    v_reason text := CASE WHEN p_requested_by IS NOT NULL
                        THEN coalesce(nullif(btrim(p_reason), ''), 'register data requested') END;
BEGIN
    SELECT id INTO active_before FROM processing.processing_jobs
     WHERE type = 'basic_discovery' AND entity_id = p_entity_id AND status IN ('queued', 'running');
    UPDATE content.entities SET processing_status = 'basic_discovery_running', updated_at = now()
     WHERE id = p_entity_id AND processing_status = 'discovered';
    IF NOT FOUND THEN
        SELECT * INTO entity FROM content.entities WHERE id = p_entity_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'entity % does not exist', p_entity_id USING ERRCODE = 'no_data_found';
        END IF;
        INSERT INTO processing.processing_jobs (type, status, entity_id, priority, data)
        VALUES ('basic_discovery', 'queued', entity.id, p_priority, jsonb_build_object(
                    'trigger_source', p_trigger_source,
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
    IF active_before IS NULL THEN
        -- The job is this request's: its priority and requester (its data is seed 000's).
        UPDATE processing.processing_jobs
           SET priority = p_priority,
               trigger = CASE WHEN p_requested_by IS NULL THEN 'automatic' ELSE 'manual' END,
               requested_by = p_requested_by, reason = v_reason, updated_at = now()
         WHERE id = job_id;
    ELSE
        UPDATE processing.processing_jobs SET priority = p_priority, updated_at = now()
         WHERE id = job_id AND priority > p_priority;
    END IF;
    RETURN job_id;
END
$$;

REVOKE EXECUTE ON FUNCTION processing.open_entity(uuid, processing.job_priority, uuid, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION processing.open_entity(uuid, processing.job_priority, uuid, text, text)
    TO hreg_app, hreg_worker;
