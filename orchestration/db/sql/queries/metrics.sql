-- name: oldest_due_jobs
-- Per job type and priority, how long the oldest due job has waited for a worker since it became due (seconds).
-- One probe per type and priority on the due index, in claim order, as a claim reads the queue:
-- a deep queue costs a scrape no more than a claim.
SELECT t.type, p.priority::text AS priority,
       extract(epoch FROM now() - oldest.next_attempt_at)::float AS age_s
  FROM processing.job_types t
 CROSS JOIN unnest(enum_range(NULL::processing.job_priority)) AS p(priority)
 CROSS JOIN LATERAL (SELECT j.next_attempt_at
                       FROM processing.due_jobs j
                      WHERE j.type = t.type AND j.priority = p.priority
                      ORDER BY j.next_attempt_at, j.id
                      LIMIT 1) oldest
 ORDER BY t.type, p.priority

-- name: dead_letter_size
-- The jobs in the dead letter (processing.dead_letter) per type and failure class.
SELECT type, coalesce(failure_class, 'unclassified') AS failure_class, count(*) AS jobs
  FROM processing.dead_letter
 GROUP BY 1, 2
 ORDER BY 1, 2

-- name: lease_reaps
-- Running jobs failed as lease_expired, ever, by who failed them: the lease reaper (expired lease) or run_status_sensor (their run ended).
-- The step history keeps every attempt (also of archived jobs); the partial index on failures
-- serves the scan.
SELECT coalesce(error_source, 'unknown') AS source, count(*) AS reaps
  FROM processing.job_step_history
 WHERE status = 'failed' AND error_type = 'lease_expired'
 GROUP BY 1
 ORDER BY 1

-- name: rate_limit_buckets
-- Each shared bucket (processing.rate_limits): its tokens now, its hourly limit, and the tokens taken in the last hour by priority.
SELECT b.name,
       processing.rate_limit_available(b) AS tokens,
       b.capacity + b.refill_per_s * 3600 AS per_hour,
       (SELECT count(*) FROM processing.rate_limit_takes t
         WHERE t.name = b.name AND t.priority = 'interactive'
           AND t.taken_at >= clock_timestamp() - interval '1 hour') AS taken_interactive,
       (SELECT count(*) FROM processing.rate_limit_takes t
         WHERE t.name = b.name AND t.priority = 'background'
           AND t.taken_at >= clock_timestamp() - interval '1 hour') AS taken_background
  FROM processing.rate_limits b
 ORDER BY b.name
