-- sync_shareholder_download_status: a claimed download shows as downloading.
CREATE OR REPLACE FUNCTION processing.sync_shareholder_download_status() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
BEGIN
    UPDATE content.entities SET shareholder_research_status = 'downloading', updated_at = now()
     WHERE id = NEW.entity_id;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER sync_shareholder_download_status
    AFTER UPDATE ON processing.processing_jobs
    FOR EACH ROW
    WHEN (OLD.status = 'queued' AND NEW.status = 'running' AND NEW.type = 'shareholder_download')
    EXECUTE FUNCTION processing.sync_shareholder_download_status();

REVOKE EXECUTE ON FUNCTION processing.sync_shareholder_download_status() FROM PUBLIC;
