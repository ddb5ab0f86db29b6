-- create_basic_discovery_job: every new search gets a queued basic_discovery job.
CREATE OR REPLACE FUNCTION processing.create_basic_discovery_job() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, public, pg_temp
AS $$
BEGIN
    INSERT INTO processing.processing_jobs (type, status, search_id, data)
    VALUES ('basic_discovery', 'queued', NEW.id, jsonb_build_object(
        'user_id', NEW.user_id,
        'query', NEW.query,
        'search_mode', NEW.mode,
        'register_type', NEW.register_type,
        'court', NEW.court,
        'include_deleted', NEW.include_deleted,
        'result_pages', NEW.result_pages));
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER create_basic_discovery_job
    AFTER INSERT ON public.searches
    FOR EACH ROW EXECUTE FUNCTION processing.create_basic_discovery_job();

REVOKE EXECUTE ON FUNCTION processing.create_basic_discovery_job() FROM PUBLIC;
