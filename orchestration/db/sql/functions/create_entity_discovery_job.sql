-- create_entity_discovery_job: a user asks for fresh data of a discovered entity.
CREATE OR REPLACE FUNCTION processing.create_entity_discovery_job() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
BEGIN
    INSERT INTO processing.processing_jobs (type, status, entity_id, data)
    VALUES ('basic_discovery', 'queued', NEW.id, jsonb_build_object(
        'trigger_source', 'user_discovery',
        'search_mode', 'exact_match',
        'max_results', 1,
        'search_term', NEW.name,
        'court_code', NEW.court_code,
        'register_type', NEW.register_type,
        'register_number', NEW.register_number))
    ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER create_entity_discovery_job
    AFTER UPDATE OF processing_status ON content.entities
    FOR EACH ROW
    WHEN (NEW.processing_status = 'basic_discovery_running' AND OLD.processing_status = 'discovered')
    EXECUTE FUNCTION processing.create_entity_discovery_job();

REVOKE EXECUTE ON FUNCTION processing.create_entity_discovery_job() FROM PUBLIC;
