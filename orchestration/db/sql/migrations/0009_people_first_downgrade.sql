-- The current views read the priority column; the next upgrade applies them again.
DROP VIEW IF EXISTS processing.due_jobs, processing.dead_letter;
DROP TABLE public.search_results;
ALTER TABLE public.searches DROP COLUMN result_pages;
ALTER TABLE content.entities DROP COLUMN documents_offered, DROP COLUMN earlier_names;
DROP FUNCTION IF EXISTS processing.take_rate_limit_token(text, double precision, double precision, processing.job_priority,
                                               double precision, double precision);
DROP FUNCTION IF EXISTS processing.open_entity(uuid, processing.job_priority, uuid, text, text);
DROP FUNCTION IF EXISTS processing.request_shareholder_research(uuid, uuid, processing.job_priority);
DROP FUNCTION IF EXISTS processing.request_entity_job(text, uuid, uuid, text, processing.job_priority);
ALTER TABLE processing.rate_limits DROP COLUMN background_taken_at, DROP COLUMN background_owed_until;
DROP INDEX processing.processing_jobs_due_idx;
CREATE INDEX processing_jobs_due_idx ON processing.processing_jobs (type, next_attempt_at, id) WHERE status = 'queued';
ALTER TABLE processing.job_archive DROP COLUMN priority;
ALTER TABLE processing.processing_jobs DROP COLUMN priority;
UPDATE processing.job_types SET batch_size = 5 WHERE type IN ('basic_discovery', 'shareholder_download');
ALTER TABLE processing.job_types DROP COLUMN priority, DROP COLUMN background_slots;
DROP TYPE processing.job_priority;
