-- Undo 0006. The definitions stay as they are: they describe the head schema.
DROP VIEW IF EXISTS processing.due_jobs;  -- reads work_key; the next upgrade to head restores it
DROP INDEX processing.processing_jobs_active_work_key;
ALTER TABLE processing.processing_jobs DROP COLUMN work_key;
ALTER TABLE processing.processing_jobs ADD COLUMN work_key text GENERATED ALWAYS AS (
    type || ':' || coalesce(raw_document_id::text, entity_id::text, search_id::text, id::text)
    || ':' || coalesce(parser_version, '')) STORED;
CREATE UNIQUE INDEX processing_jobs_active_work_key ON processing.processing_jobs (work_key)
    WHERE status IN ('queued', 'running');
DROP FUNCTION processing.job_work_key(text, uuid, uuid, uuid, text);

ALTER TABLE processing.processing_jobs
    DROP CONSTRAINT processing_jobs_failure_class_fkey,
    ADD CONSTRAINT processing_jobs_failure_class_check CHECK (failure_class IN (
        'timeout', 'lease_expired', 'dependency_unavailable', 'invalid_file', 'unsupported_version', 'parser_error'));
DROP TABLE processing.failure_classes;
