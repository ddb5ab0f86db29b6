-- Roles and privileges. The owner (who runs the migrations) owns every object.
--   hreg_app     the application: creates searches and sees only its own (row-level security on
--                user_id, taken from the setting hreg.user_id), reads content, and may move an
--                entity from discovered to basic_discovery_running.
--   hreg_worker  the workers: claim and report jobs, write content.
-- Both are NOLOGIN group roles: grant them to login roles, or SET ROLE to them.

DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'hreg_app') THEN
        CREATE ROLE hreg_app NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'hreg_worker') THEN
        CREATE ROLE hreg_worker NOLOGIN;
    END IF;
END
$$;

GRANT USAGE ON SCHEMA public, content, processing TO hreg_app, hreg_worker;

-- The application.
GRANT SELECT, INSERT ON public.searches TO hreg_app;
GRANT SELECT ON content.entities, content.entity_revisions, content.shareholder_lists,
                content.shareholders TO hreg_app;
GRANT UPDATE (processing_status) ON content.entities TO hreg_app;
GRANT SELECT ON processing.job_types TO hreg_app;

-- The workers.
GRANT SELECT, UPDATE ON public.searches TO hreg_worker;
GRANT SELECT, INSERT, UPDATE ON content.entities, content.raw_documents, content.entity_revisions,
                                content.shareholder_lists, content.shareholders TO hreg_worker;
GRANT SELECT, INSERT, UPDATE ON processing.processing_jobs TO hreg_worker;
GRANT SELECT ON processing.job_types, processing.job_step_history TO hreg_worker;

-- Row-level security. The owner is exempt (it does not FORCE), so triggers, which run as the
-- owner, see every row.
ALTER TABLE public.searches ENABLE ROW LEVEL SECURITY;
CREATE POLICY searches_own_rows ON public.searches
    FOR ALL TO hreg_app
    USING (user_id = nullif(current_setting('hreg.user_id', true), '')::uuid)
    WITH CHECK (user_id = nullif(current_setting('hreg.user_id', true), '')::uuid);
CREATE POLICY searches_worker ON public.searches FOR ALL TO hreg_worker USING (true) WITH CHECK (true);

ALTER TABLE content.entities ENABLE ROW LEVEL SECURITY;
CREATE POLICY entities_read ON content.entities FOR SELECT TO hreg_app USING (true);
-- The application may only ask for discovery of a discovered entity.
CREATE POLICY entities_request_discovery ON content.entities
    FOR UPDATE TO hreg_app
    USING (processing_status = 'discovered')
    WITH CHECK (processing_status = 'basic_discovery_running');
CREATE POLICY entities_worker ON content.entities FOR ALL TO hreg_worker USING (true) WITH CHECK (true);
