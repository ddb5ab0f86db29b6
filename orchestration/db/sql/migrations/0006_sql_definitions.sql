-- Failure classes (seeds/002) as a table that the retry trigger and the workers both read, in
-- place of a CHECK list here and a second list in Python.
CREATE TABLE processing.failure_classes (
    failure_class  text PRIMARY KEY,
    -- Permanent: retrying cannot help; the job waits for a new parser or a manual job.
    permanent      boolean NOT NULL,
    description    text NOT NULL
);
INSERT INTO processing.failure_classes (failure_class, permanent, description) VALUES
    ('timeout',                false, 'The work took longer than allowed; a later attempt may finish.'),
    ('lease_expired',          false, 'The worker stopped renewing its lease (crashed or cancelled).'),
    ('dependency_unavailable', false, 'The register, the database or another service was unreachable.'),
    ('invalid_file',           true,  'The document is not what it claims to be (not XML, corrupt, hostile).'),
    ('unsupported_version',    true,  'The document is of a version the parser does not know.'),
    ('parser_error',           true,  'The parser could not read a document of a known kind.');
GRANT SELECT ON processing.failure_classes TO hreg_app, hreg_worker;

ALTER TABLE processing.processing_jobs
    DROP CONSTRAINT processing_jobs_failure_class_check,
    ADD CONSTRAINT processing_jobs_failure_class_fkey
        FOREIGN KEY (failure_class) REFERENCES processing.failure_classes (failure_class);

-- The work key, spelled once: the column calls processing.job_work_key, which the queries that
-- look for active work call as well. Recomputing a stored column means adding it anew.
DROP INDEX processing.processing_jobs_active_work_key;
ALTER TABLE processing.processing_jobs DROP COLUMN work_key;
ALTER TABLE processing.processing_jobs ADD COLUMN work_key text GENERATED ALWAYS AS (
    processing.job_work_key(type, raw_document_id, entity_id, search_id, parser_version)) STORED;
CREATE UNIQUE INDEX processing_jobs_active_work_key ON processing.processing_jobs (work_key)
    WHERE status IN ('queued', 'running');
