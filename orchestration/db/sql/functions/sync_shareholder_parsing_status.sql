-- sync_shareholder_parsing_status: a claimed parse shows as parsing.
CREATE OR REPLACE FUNCTION processing.sync_shareholder_parsing_status() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
BEGIN
    UPDATE content.entities SET shareholder_research_status = 'parsing', updated_at = now()
     WHERE id = NEW.entity_id;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER sync_shareholder_parsing_status
    AFTER UPDATE ON processing.processing_jobs
    FOR EACH ROW
    WHEN (OLD.status = 'queued' AND NEW.status = 'running' AND NEW.type = 'shareholder_parsing')
    EXECUTE FUNCTION processing.sync_shareholder_parsing_status();

REVOKE EXECUTE ON FUNCTION processing.sync_shareholder_parsing_status() FROM PUBLIC;
