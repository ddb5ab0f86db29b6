-- The step-history and progress triggers, cheaper per job on the hot path (claim and completion
-- of thousands of jobs a statement); what they write is unchanged.
--   log_job_step_history: a Dagster run id is told by the worker id's shape (a regular expression
--     on it cost 6 µs a row), and the metadata of claims and completions is built without
--     stripping empty keys.
--   apply_job_progress: entities are updated by primary key, never by a scan of the entity table.

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

CREATE OR REPLACE FUNCTION processing.apply_job_progress() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, public, pg_temp
AS $$
BEGIN
    UPDATE public.searches s
       SET status = CASE WHEN n.status = 'running' THEN 'running' ELSE 'completed' END,
           result_count = CASE WHEN n.status = 'completed'
                               THEN coalesce((n.result ->> 'result_count')::integer, 0)
                               ELSE s.result_count END,
           updated_at = now()
      FROM new_rows n JOIN old_rows o ON o.id = n.id
     WHERE s.id = n.search_id AND n.type = 'basic_discovery'
       AND n.status IN ('running', 'completed') AND o.status IS DISTINCT FROM n.status;

    -- The entities are found by primary key (ANY of an array): as a join, the planner reads the
    -- whole entity table for a batch of a few thousand jobs whenever that looks cheaper on paper.
    WITH parse_steps AS MATERIALIZED (
        SELECT n.entity_id, n.raw_document_id,
               CASE WHEN n.status = 'running' THEN 'xml_parsing' ELSE 'parsed' END AS entity_status
          FROM new_rows n JOIN old_rows o ON o.id = n.id
         WHERE n.type = 'xml_parsing'
           AND n.status IN ('running', 'completed') AND o.status IS DISTINCT FROM n.status
           -- A re-parse (parser_change, manual) leaves a parsed entity readable as parsed.
           AND (n.status = 'completed' OR n.trigger IN ('automatic', 'upload')))
    UPDATE content.entities e
       SET processing_status = p.entity_status, updated_at = now()
      FROM parse_steps p
     WHERE e.id = ANY (ARRAY(SELECT entity_id FROM parse_steps)) AND e.id = p.entity_id
       AND e.processing_status IS DISTINCT FROM p.entity_status
       -- A parse of an older document never overrides a newer download.
       AND e.current_si_document_id IS NOT DISTINCT FROM p.raw_document_id;

    INSERT INTO processing.processing_jobs (type, status, entity_id, raw_document_id, trigger, previous_job_id)
    SELECT 'shareholder_parsing', 'queued', n.entity_id, (n.result ->> 'raw_document_id')::uuid, n.trigger, n.id
      FROM new_rows n JOIN old_rows o ON o.id = n.id
     WHERE n.type = 'shareholder_download' AND n.status = 'completed' AND o.status <> 'completed'
    ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING;

    UPDATE content.entities e
       SET shareholder_research_status = 'completed', updated_at = now()
      FROM new_rows n JOIN old_rows o ON o.id = n.id
     WHERE e.id = n.entity_id AND n.type = 'shareholder_parsing'
       AND n.status = 'completed' AND o.status <> 'completed';
    RETURN NULL;
END
$$;
