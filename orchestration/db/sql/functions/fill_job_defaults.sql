-- Fills a new job's max_retries, parser version and priority from processing.job_types; a
-- re-parse after a parser change is background work.
CREATE OR REPLACE FUNCTION processing.fill_job_defaults() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, pg_temp
AS $$
DECLARE
    jt processing.job_types;
BEGIN
    SELECT * INTO STRICT jt FROM processing.job_types WHERE type = NEW.type;
    NEW.max_retries := coalesce(NEW.max_retries, jt.max_retries);
    NEW.parser_version := coalesce(NEW.parser_version, jt.current_version);
    NEW.priority := coalesce(NEW.priority,
                             CASE WHEN NEW.trigger = 'parser_change' THEN 'background'::processing.job_priority END,
                             jt.priority);
    RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER fill_job_defaults
    BEFORE INSERT ON processing.processing_jobs
    FOR EACH ROW EXECUTE FUNCTION processing.fill_job_defaults();

REVOKE EXECUTE ON FUNCTION processing.fill_job_defaults() FROM PUBLIC;
