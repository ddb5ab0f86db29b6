-- Completed jobs older than a retention period move to processing.job_archive
-- (functions/archive_completed_jobs.sql), so the queue table stays small at register scale while
-- the step history keeps every attempt.

-- The archive has the job table's columns in the same order, after the time of the move: a
-- column added to both later comes last in both, so a move copies rows as they are.
CREATE TABLE processing.job_archive (
    archived_at      timestamptz NOT NULL DEFAULT now(),
    id               uuid PRIMARY KEY,
    type             text NOT NULL,
    status           text NOT NULL,
    search_id        uuid,
    entity_id        uuid,
    raw_document_id  uuid,
    parser_version   text,
    data             jsonb NOT NULL,
    result           jsonb,
    retry_count      integer NOT NULL,
    max_retries      integer NOT NULL,
    worker_id        text,
    started_at       timestamptz,
    completed_at     timestamptz,
    lease_until      timestamptz,
    next_attempt_at  timestamptz NOT NULL,
    trigger          text NOT NULL,
    requested_by     uuid,
    reason           text,
    previous_job_id  uuid,
    failure_class    text,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    work_key         text NOT NULL
);
-- The stage gate and the re-parse scope ask whether an entity's job of a type succeeded.
CREATE INDEX job_archive_entity_idx ON processing.job_archive (entity_id, type);
GRANT SELECT ON processing.job_archive TO hreg_worker;

-- The archive takes the oldest completed jobs first.
CREATE INDEX processing_jobs_completed_idx ON processing.processing_jobs (completed_at)
    WHERE status = 'completed';

-- previous_job_id may point at an archived job, so it is no longer a foreign key (which would set
-- it NULL when its job moves). The dead letter asks which failed jobs were retried.
ALTER TABLE processing.processing_jobs DROP CONSTRAINT processing_jobs_previous_job_id_fkey;
CREATE INDEX processing_jobs_previous_job_idx ON processing.processing_jobs (previous_job_id)
    WHERE previous_job_id IS NOT NULL;
