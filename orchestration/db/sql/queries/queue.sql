-- name: mark_claimed
-- The end of every claim: what it does to the jobs it picked (the ids of a CTE "picked"), and the columns it returns.
-- Ids as text: workers pass them on as strings, so no uuid object is built per id. The columns are
-- queue.ClaimedJob's fields in their order.
UPDATE processing.processing_jobs j
   SET status = 'running',
       worker_id = :worker_id,
       started_at = now(),
       completed_at = NULL,
       lease_until = now() + make_interval(secs => :lease_seconds),
       updated_at = now()
 -- By primary key, however large the table.
 WHERE j.id = ANY (ARRAY(SELECT id FROM picked))
RETURNING j.id::text, j.type, j.search_id::text, j.entity_id::text, j.raw_document_id::text, j.parser_version,
          j.data, j.retry_count, j.max_retries, j.trigger, j.previous_job_id::text, j.lease_until,
          j.priority::text

-- name: claim
-- Claim up to :limit due jobs of :job_type in claim order from the position :start_* on, background ones only when :background_allowed.
-- Due jobs (the stage gate of seeds/003) are the view processing.due_jobs (db/sql/views/due_jobs.sql).
-- Claim order: interactive jobs by due time, then background ones by due time, the order of
-- (priority, next_attempt_at, id). A run requested for a batch starts at the batch's head
-- (queue.BatchHead.start); from the queue's head, the start is ('interactive', -infinity, nil).
-- Each priority is its own scan of processing_jobs_due_idx (type, priority, next_attempt_at, id),
-- so the index answers type, priority, due time and start together, and in claim order; one scan
-- with priority in the ORDER BY leaves the due time to a filter, and with statistics taken while
-- nothing was queued the planner then prefers another index and sorts (a backfill's claims went
-- quadratic).
WITH people AS (
    SELECT j.id
      FROM processing.due_jobs j
     WHERE j.type = :job_type AND j.priority = 'interactive'
       AND (j.priority, j.next_attempt_at, j.id)
           >= (CAST(:start_priority AS processing.job_priority), CAST(:start_due AS timestamptz),
               CAST(:start_id AS uuid))
     ORDER BY j.next_attempt_at, j.id
     LIMIT :limit
       FOR UPDATE OF j SKIP LOCKED
), background AS (
    SELECT j.id
      FROM processing.due_jobs j
     WHERE j.type = :job_type AND j.priority = 'background' AND :background_allowed
       AND (j.priority, j.next_attempt_at, j.id)
           >= (CAST(:start_priority AS processing.job_priority), CAST(:start_due AS timestamptz),
               CAST(:start_id AS uuid))
     ORDER BY j.next_attempt_at, j.id
     LIMIT :limit - (SELECT count(*) FROM people)
       FOR UPDATE OF j SKIP LOCKED
), picked AS (
    SELECT id FROM people UNION ALL SELECT id FROM background
)
{mark_claimed}

-- name: claim_for_entities
-- Claim the queued jobs of :job_type and :parser_version for :entity_ids, due or still in backoff.
-- What a backfill run queued for itself in the same transaction (so no sensor ever sees them
-- queued), and retries that a person's re-execution takes at once. The entity index finds them.
-- The run is the backfill's own unit of concurrency (the run queue), so background slots do not apply.
WITH picked AS (
    SELECT j.id
      FROM processing.processing_jobs j
     WHERE j.entity_id = ANY (CAST(:entity_ids AS uuid[]))
       AND j.type = :job_type
       AND j.status = 'queued'
       AND j.parser_version IS NOT DISTINCT FROM :parser_version
       FOR UPDATE OF j SKIP LOCKED
)
{mark_claimed}

-- name: claim_interactive_for_entities
-- Claim the due interactive jobs of :job_type for :entity_ids.
-- The parses of the documents a person's discovery run has just stored, which that run then works itself.
WITH picked AS (
    SELECT j.id
      FROM processing.due_jobs j
     WHERE j.entity_id = ANY (CAST(:entity_ids AS uuid[]))
       AND j.type = :job_type
       AND j.priority = 'interactive'
       FOR UPDATE OF j SKIP LOCKED
)
{mark_claimed}

-- name: count_due
-- How many jobs of :job_type a worker may claim now.
SELECT count(*) FROM processing.due_jobs j WHERE j.type = :job_type

-- name: people_at_work
-- Whether a person's work is under way: an interactive job of any type due and queued, or running.
-- A probe per job type on the due index, and the running jobs on the lease index: both small.
SELECT EXISTS (
           SELECT 1 FROM processing.job_types t
            WHERE EXISTS (
                  SELECT 1 FROM processing.processing_jobs j
                   WHERE j.type = t.type AND j.status = 'queued' AND j.priority = 'interactive'
                     AND j.next_attempt_at <= now()))
    OR EXISTS (
           SELECT 1 FROM processing.processing_jobs j
            WHERE j.status = 'running' AND j.lease_until IS NOT NULL AND j.priority = 'interactive')

-- name: batch_heads
-- The first job of each of the next :runs batches of :batch_size due jobs of :job_type, in claim order.
-- A batch's identity for idempotent run keys (the same head is the same batch, until a run claims
-- it), and where the run requested for it starts its claim: the order is claim's.
SELECT id, retry_count, next_attempt_at, priority::text
  FROM (SELECT d.*, row_number() OVER (ORDER BY d.priority, d.next_attempt_at, d.id) - 1 AS position
          FROM ((SELECT j.id, j.retry_count, j.next_attempt_at, j.priority
                   FROM processing.due_jobs j
                  WHERE j.type = :job_type AND j.priority = 'interactive'
                  ORDER BY j.next_attempt_at, j.id
                  LIMIT :batch_size * :runs)
                UNION ALL
                (SELECT j.id, j.retry_count, j.next_attempt_at, j.priority
                   FROM processing.due_jobs j
                  WHERE j.type = :job_type AND j.priority = 'background' AND :background_allowed
                  ORDER BY j.next_attempt_at, j.id
                  LIMIT :batch_size * :runs)) d
         ORDER BY d.priority, d.next_attempt_at, d.id
         LIMIT :batch_size * :runs) due
 WHERE position % :batch_size = 0
 ORDER BY position

-- name: extend_leases
-- Push the leases of the jobs :ids that :worker_id still holds; its row count is how many it still holds.
UPDATE processing.processing_jobs
   SET lease_until = now() + make_interval(secs => :lease_seconds), updated_at = now()
 WHERE id = ANY(CAST(:ids AS uuid[])) AND status = 'running' AND worker_id = :worker_id

-- name: report
-- Report the jobs :ids that :worker_id still holds as :statuses (completed or failed), with their failure classes and results; returns the ids reported.
-- One statement for a chunk's outcomes: the triggers on status (retries, step history) do the rest.
UPDATE processing.processing_jobs j
   SET status = r.status, failure_class = r.failure_class, result = r.result, completed_at = now(),
       lease_until = NULL, updated_at = now()
  FROM unnest(CAST(:ids AS uuid[]), CAST(:statuses AS text[]), CAST(:failure_classes AS text[]),
              CAST(:results AS jsonb[]))
       AS r(id, status, failure_class, result)
 WHERE j.id = r.id AND j.status = 'running' AND j.worker_id = :worker_id
RETURNING j.id::text

-- name: fail_lost_as_lease_expired
-- The end of reap_expired and release_run_jobs: fail the running jobs of a CTE "lost" (id, worker_id, lease_until, message, source) as lease_expired, so that the database re-queues them.
-- The re-check in the WHERE runs on the locked, current row: a job that completed, or whose lease
-- was extended or taken over, while it was looked at is left alone.
UPDATE processing.processing_jobs j
   SET status = 'failed',
       failure_class = 'lease_expired',
       completed_at = now(),
       updated_at = now(),
       result = jsonb_build_object('error', jsonb_build_object(
           'type', 'lease_expired', 'message', lost.message, 'source', lost.source, 'code', NULL))
  FROM lost
 WHERE j.id = lost.id AND j.status = 'running'
   AND j.worker_id IS NOT DISTINCT FROM lost.worker_id AND j.lease_until IS NOT DISTINCT FROM lost.lease_until
RETURNING j.id

-- name: reap_expired
-- Fail up to :limit running jobs whose lease expired (failure class lease_expired), so that the database re-queues them.
WITH lost AS (
    SELECT id, worker_id, lease_until, 'lease_reaper' AS source,
           format('lease expired at %s while held by %s; the worker crashed or was cancelled',
                  lease_until, coalesce(worker_id, 'nobody')) AS message
      FROM processing.processing_jobs
     WHERE status = 'running' AND lease_until < now()
     ORDER BY lease_until
     LIMIT :limit
       FOR UPDATE SKIP LOCKED
)
{fail_lost_as_lease_expired}

-- name: release_run_jobs
-- Fail the running jobs that the Dagster run :run_id still held when it ended as :run_status, as the lease reaper would, without waiting for their leases to run out.
WITH lost AS (
    SELECT id, worker_id, lease_until, 'run_status_sensor' AS source,
           format('held by run %s, which ended %s before reporting it', worker_id, CAST(:run_status AS text)) AS message
      FROM processing.processing_jobs
     WHERE status = 'running' AND worker_id = :run_id
       FOR UPDATE SKIP LOCKED
)
{fail_lost_as_lease_expired}

-- name: job_types
-- The settings of every job type (retries, backoff, lease, batch size, parser version, background slots), by stage.
SELECT type, stage, max_retries, backoff_base_s, backoff_cap_s, lease_seconds, batch_size, current_version,
       background_slots
  FROM processing.job_types ORDER BY stage

-- name: lock_background_slots
-- Wait for the other claims of :job_type with background slots until this transaction ends.
-- Claims of a type with background slots take turns, so two claims never both see a free slot.
SELECT pg_advisory_xact_lock(hashtext('hreg background slots ' || :job_type))

-- name: running_background
-- How many background jobs of :job_type are running.
SELECT count(*) FROM processing.processing_jobs
 WHERE status = 'running' AND type = :job_type AND priority = 'background'

-- name: enqueue
-- Queue a job; returns its id, or nothing when the same work (its work key) is already queued or running.
INSERT INTO processing.processing_jobs
    (type, entity_id, search_id, raw_document_id, parser_version, data, trigger, requested_by,
     reason, previous_job_id)
VALUES (:type, :entity_id, :search_id, :raw_document_id, :parser_version, CAST(:data AS jsonb),
        :trigger, :requested_by, :reason, :previous_job_id)
ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING
RETURNING id

-- name: queue_status
-- Jobs per type and status, with the age of the oldest.
SELECT type, status, count(*) AS jobs, extract(epoch FROM now() - min(created_at)) AS oldest_age_s
  FROM processing.processing_jobs
 GROUP BY type, status
 ORDER BY type, status

-- name: queue_by_priority
-- Who waits: the queued and running jobs of each type by priority (interactive first), with the oldest queued job's age.
SELECT j.type, j.priority::text AS priority,
       count(*) FILTER (WHERE j.status = 'queued') AS queued,
       count(*) FILTER (WHERE j.status = 'running') AS running,
       extract(epoch FROM now() - min(j.created_at) FILTER (WHERE j.status = 'queued'))::float
           AS oldest_queued_age_s
  FROM processing.processing_jobs j
 WHERE j.status IN ('queued', 'running')
 GROUP BY j.type, j.priority
 ORDER BY j.type, j.priority

-- name: dead_letter
-- Up to :limit jobs failed for good and not taken up by a later job, newest first, optionally of one :type and :failure_class.
-- seeds/002's dead letter (db/sql/views/dead_letter.sql).
SELECT id::text, type, failure_class, permanent, attempts, last_error, error_source, error_code,
       search_id::text, entity_id::text, raw_document_id::text, parser_version, trigger, failed_at,
       extract(epoch FROM now() - failed_at)::float AS age_s
  FROM processing.dead_letter
 WHERE (CAST(:type AS text) IS NULL OR type = :type)
   AND (CAST(:failure_class AS text) IS NULL OR failure_class = :failure_class)
 ORDER BY failed_at DESC, id
 LIMIT :limit

-- name: retry
-- Queue a manual job that takes up the failed job :job_id: the same work with today's parser, pointing back at it.
-- parser_version is left to job_types' current version (fill_job_defaults).
INSERT INTO processing.processing_jobs
    (type, search_id, entity_id, raw_document_id, data, trigger, requested_by, reason, previous_job_id)
SELECT f.type, f.search_id, f.entity_id, f.raw_document_id, f.data, 'manual', :requested_by, :reason, f.id
  FROM processing.processing_jobs f
 WHERE f.id = :job_id AND f.status = 'failed'
ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING
RETURNING id::text

-- name: job_state
-- The status of job :job_id, the later job that took it up, and the active job doing the same work today.
SELECT j.status,
       (SELECT later.id::text FROM processing.processing_jobs later
         WHERE later.previous_job_id = j.id ORDER BY later.created_at DESC LIMIT 1) AS taken_up_by,
       (SELECT active.id::text FROM processing.processing_jobs active
         WHERE active.work_key = processing.job_work_key(j.type, j.raw_document_id, j.entity_id, j.search_id,
                                                         jt.current_version)
           AND active.status IN ('queued', 'running')) AS active_job
  FROM processing.processing_jobs j JOIN processing.job_types jt ON jt.type = j.type
 WHERE j.id = :job_id

-- name: archive_completed
-- Move up to :limit jobs completed longer than :older_than_s seconds ago to the archive; returns how many.
SELECT processing.archive_completed_jobs(make_interval(secs => :older_than_s), :limit)

-- name: permanent_failure_classes
-- The failure classes the database does not retry.
SELECT failure_class FROM processing.failure_classes WHERE permanent ORDER BY failure_class

-- name: failures_by_class
-- Failed jobs per type and failure class.
SELECT type, coalesce(failure_class, 'unclassified') AS failure_class, count(*) AS jobs
  FROM processing.processing_jobs
 WHERE status = 'failed'
 GROUP BY 1, 2
 ORDER BY 1, 2
