-- sync_shareholder_parsing_status: a claimed parse shows as parsing, as its job_types row says
-- (set_shareholder_research_status).
CREATE OR REPLACE FUNCTION processing.sync_shareholder_parsing_status() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, pg_temp
AS $$ BEGIN PERFORM processing.set_shareholder_research_status(NEW.entity_id, NEW.type); RETURN NULL; END $$;

CREATE OR REPLACE TRIGGER sync_shareholder_parsing_status
    AFTER UPDATE ON processing.processing_jobs
    FOR EACH ROW
    WHEN (OLD.status = 'queued' AND NEW.status = 'running' AND NEW.type = 'shareholder_parsing')
    EXECUTE FUNCTION processing.sync_shareholder_parsing_status();

REVOKE EXECUTE ON FUNCTION processing.sync_shareholder_parsing_status() FROM PUBLIC;
