-- People first: the portal's 60 retrievals an hour go where a person waits.
--   processing.job_priority: interactive (a person waits) or background; per job type a default,
--   per job the priority it is claimed and rate-limited by. The claim serves interactive first.
--   background_slots: how many background jobs of a type may hold a claim at once, so that
--   background jobs waiting for the rate limit never hold every worker while a person waits.
--   Rate-limited types are claimed one job at a time (batch_size 1): a run waiting for a token
--   holds no other job.
--   public.search_results: every row a search found, in the register's order.
--   content.entities: what a result row says besides name, seat and status.
CREATE TYPE processing.job_priority AS ENUM ('interactive', 'background');

ALTER TABLE processing.job_types
    ADD COLUMN priority processing.job_priority NOT NULL DEFAULT 'interactive',
    ADD COLUMN background_slots integer CHECK (background_slots > 0);
UPDATE processing.job_types SET batch_size = 1, background_slots = 1
 WHERE type IN ('basic_discovery', 'shareholder_download');

-- Jobs already queued were queued before priorities: interactive. A new job without a priority
-- gets its type's (fill_job_defaults).
ALTER TABLE processing.processing_jobs ADD COLUMN priority processing.job_priority NOT NULL DEFAULT 'interactive';
ALTER TABLE processing.processing_jobs ALTER COLUMN priority DROP DEFAULT;
ALTER TABLE processing.job_archive ADD COLUMN priority processing.job_priority NOT NULL DEFAULT 'interactive';
ALTER TABLE processing.job_archive ALTER COLUMN priority DROP DEFAULT;
-- The claim's order: interactive first, then by due time.
DROP INDEX processing.processing_jobs_due_idx;
CREATE INDEX processing_jobs_due_idx ON processing.processing_jobs (type, priority, next_attempt_at, id)
    WHERE status = 'queued';

ALTER TABLE processing.rate_limits
    ADD COLUMN background_taken_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    ADD COLUMN background_owed_until timestamptz;
-- A database upgraded from 0007 has the bucket without priorities; its replacement is a definition.
DROP FUNCTION IF EXISTS processing.take_rate_limit_token(text, double precision, double precision);
-- A monitoring rule asks for shareholders as background work: the function takes a priority.
DROP FUNCTION IF EXISTS processing.request_shareholder_research(uuid, uuid);

ALTER TABLE content.entities
    ADD COLUMN documents_offered text[],
    ADD COLUMN earlier_names jsonb NOT NULL DEFAULT '[]'::jsonb;

ALTER TABLE public.searches ADD COLUMN result_pages integer CHECK (result_pages BETWEEN 1 AND 100);

CREATE TABLE public.search_results (
    search_id  uuid NOT NULL REFERENCES public.searches (id) ON DELETE CASCADE,
    position   integer NOT NULL CHECK (position > 0),
    entity_id  uuid NOT NULL REFERENCES content.entities (id) ON DELETE CASCADE,
    PRIMARY KEY (search_id, position)
);
CREATE INDEX search_results_entity_idx ON public.search_results (entity_id);
GRANT SELECT ON public.search_results TO hreg_app;
GRANT SELECT, INSERT, UPDATE ON public.search_results TO hreg_worker;
-- The application sees the results of its own searches only (the policy on searches applies).
ALTER TABLE public.search_results ENABLE ROW LEVEL SECURITY;
CREATE POLICY search_results_own_searches ON public.search_results FOR SELECT TO hreg_app
    USING (EXISTS (SELECT 1 FROM public.searches s WHERE s.id = search_id));
CREATE POLICY search_results_worker ON public.search_results FOR ALL TO hreg_worker USING (true) WITH CHECK (true);
