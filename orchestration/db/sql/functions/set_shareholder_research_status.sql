-- set_shareholder_research_status: the one body of the seed's two trigger functions
-- sync_shareholder_download_status and sync_shareholder_parsing_status, which show a claimed
-- shareholder job on its entity.
CREATE OR REPLACE FUNCTION processing.set_shareholder_research_status(p_entity_id uuid, p_status text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
BEGIN
    UPDATE content.entities SET shareholder_research_status = p_status, updated_at = now()
     WHERE id = p_entity_id;
END
$$;

REVOKE EXECUTE ON FUNCTION processing.set_shareholder_research_status(uuid, text) FROM PUBLIC;
