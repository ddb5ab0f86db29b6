-- log_job_step_history: the audit trail. Statement-level with transition tables, so that a batch
-- claim or completion of N jobs writes its N history rows in one INSERT.
CREATE OR REPLACE FUNCTION processing.log_job_step_history() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, pg_temp
AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO processing.job_step_history
            (job_id, step_type, status, worker_id, attempt_number, metadata)
        SELECT n.id, n.type, n.status, n.worker_id, n.retry_count + 1,
               jsonb_build_object('event', 'created', 'trigger', n.trigger)
          FROM new_rows n
         WHERE n.type = 'basic_discovery';
        RETURN NULL;
    END IF;

    -- A step is a change of status, worker or attempt; a lease extension alone is not.
    -- on_job_failure re-queues a failed job from inside the failing statement, so this function
    -- runs for the re-queue before it runs for the failure. To keep the history in order, the
    -- re-queue logs the failed attempt (its old row) ahead of its own row, and the failing
    -- statement leaves out the failures that were re-queued.
    INSERT INTO processing.job_step_history
        (job_id, step_type, status, worker_id, attempt_number,
         error_message, error_type, error_source, error_code,
         dagster_run_id, duration_ms, metadata)
    SELECT s.id, s.type, s.status, s.worker_id, s.retry_count + 1,
           CASE WHEN s.status = 'failed' THEN s.result #>> '{error,message}' END,
           CASE WHEN s.status = 'failed' THEN coalesce(s.result #>> '{error,type}', s.failure_class) END,
           CASE WHEN s.status = 'failed' THEN s.result #>> '{error,source}' END,
           CASE WHEN s.status = 'failed' THEN s.result #>> '{error,code}' END,
           -- Dagster runs claim with their run id as worker id: a worker id shaped like a uuid.
           CASE WHEN s.worker_id LIKE '________-____-____-____-____________' THEN s.worker_id END,
           CASE WHEN s.status IN ('completed', 'failed') AND s.started_at IS NOT NULL
                THEN (extract(epoch FROM coalesce(s.completed_at, now()) - s.started_at) * 1000)::bigint END,
           -- Claims and completions, nearly every step, carry no failure fields: they skip stripping.
           CASE WHEN s.status = 'failed' OR s.from_status = 'failed'
                THEN jsonb_strip_nulls(jsonb_build_object(
                         'from_status', s.from_status,
                         'failure_class', s.failure_class,
                         'trigger', s.trigger,
                         'next_attempt_at', CASE WHEN s.status = 'queued' THEN s.next_attempt_at END))
                ELSE jsonb_build_object('from_status', s.from_status, 'trigger', s.trigger) END
      FROM (SELECT o.*, NULL::text AS from_status, 1 AS step_order
              FROM old_rows o JOIN new_rows n ON n.id = o.id
             WHERE o.status = 'failed' AND n.status = 'queued'
            UNION ALL
            SELECT n.*, o.status, 2
              FROM new_rows n JOIN old_rows o ON o.id = n.id
             WHERE (n.status IS DISTINCT FROM o.status
                    OR n.worker_id IS DISTINCT FROM o.worker_id
                    OR n.retry_count IS DISTINCT FROM o.retry_count)
               AND NOT (n.status = 'failed' AND EXISTS (
                        SELECT 1 FROM processing.processing_jobs requeued
                         WHERE requeued.id = n.id AND requeued.retry_count > n.retry_count))) s
     ORDER BY s.step_order;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER trigger_log_job_step_history
    AFTER UPDATE ON processing.processing_jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION processing.log_job_step_history();

CREATE OR REPLACE TRIGGER trigger_log_basic_discovery_job_creation
    AFTER INSERT ON processing.processing_jobs
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION processing.log_job_step_history();

REVOKE EXECUTE ON FUNCTION processing.log_job_step_history() FROM PUBLIC;
