-- set_shareholder_research_status: the one body of the seed's two trigger functions
-- sync_shareholder_download_status and sync_shareholder_parsing_status, which show a claimed
-- shareholder job on its entity: the research status its type's row names for a running job
-- (processing.job_types.entity_status_running; NULL leaves the research as it is).
CREATE OR REPLACE FUNCTION processing.set_shareholder_research_status(p_entity_id uuid, p_job_type text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
BEGIN
    UPDATE content.entities e SET shareholder_research_status = jt.entity_status_running, updated_at = now()
      FROM processing.job_types jt
     WHERE e.id = p_entity_id AND jt.type = p_job_type
       AND jt.entity_status_column = 'shareholder_research_status' AND jt.entity_status_running IS NOT NULL;
END
$$;

REVOKE EXECUTE ON FUNCTION processing.set_shareholder_research_status(uuid, text) FROM PUBLIC;
