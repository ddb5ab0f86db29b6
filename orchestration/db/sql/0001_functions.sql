-- Trigger functions of seeds/000 and the completion paths they imply.
-- Every function is SECURITY DEFINER with a fixed search_path; EXECUTE is revoked from PUBLIC
-- in 0001_roles.sql. Trigger functions fire without EXECUTE: only callers of plain functions need it.

-- Fills a new job's max_retries and parser version from processing.job_types.
CREATE FUNCTION processing.fill_job_defaults() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, pg_temp
AS $$
DECLARE
    jt processing.job_types;
BEGIN
    SELECT * INTO STRICT jt FROM processing.job_types WHERE type = NEW.type;
    NEW.max_retries := coalesce(NEW.max_retries, jt.max_retries);
    NEW.parser_version := coalesce(NEW.parser_version, jt.current_version);
    RETURN NEW;
END
$$;

CREATE TRIGGER fill_job_defaults
    BEFORE INSERT ON processing.processing_jobs
    FOR EACH ROW EXECUTE FUNCTION processing.fill_job_defaults();

-- create_basic_discovery_job: every new search gets a queued basic_discovery job.
CREATE FUNCTION processing.create_basic_discovery_job() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, public, pg_temp
AS $$
BEGIN
    INSERT INTO processing.processing_jobs (type, status, search_id, data)
    VALUES ('basic_discovery', 'queued', NEW.id, jsonb_build_object(
        'user_id', NEW.user_id,
        'query', NEW.query,
        'search_mode', NEW.mode,
        'register_type', NEW.register_type,
        'court', NEW.court,
        'include_deleted', NEW.include_deleted));
    RETURN NULL;
END
$$;

CREATE TRIGGER create_basic_discovery_job
    AFTER INSERT ON public.searches
    FOR EACH ROW EXECUTE FUNCTION processing.create_basic_discovery_job();

-- create_entity_discovery_job: a user asks for fresh data of a discovered entity.
CREATE FUNCTION processing.create_entity_discovery_job() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
BEGIN
    INSERT INTO processing.processing_jobs (type, status, entity_id, data)
    VALUES ('basic_discovery', 'queued', NEW.id, jsonb_build_object(
        'trigger_source', 'user_discovery',
        'search_mode', 'exact_match',
        'max_results', 1,
        'search_term', NEW.name,
        'court_code', NEW.court_code,
        'register_type', NEW.register_type,
        'register_number', NEW.register_number))
    ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER create_entity_discovery_job
    AFTER UPDATE OF processing_status ON content.entities
    FOR EACH ROW
    WHEN (NEW.processing_status = 'basic_discovery_running' AND OLD.processing_status = 'discovered')
    EXECUTE FUNCTION processing.create_entity_discovery_job();

-- create_xml_parsing_job: an entity whose SI document is stored becomes a parse job.
CREATE FUNCTION processing.create_xml_parsing_job() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
BEGIN
    -- An update that leaves an entity in xml_ready (any other column) is not new work.
    IF TG_OP = 'UPDATE' AND OLD.processing_status = 'xml_ready'
       AND OLD.current_si_document_id IS NOT DISTINCT FROM NEW.current_si_document_id THEN
        RETURN NULL;
    END IF;
    INSERT INTO processing.processing_jobs (type, status, entity_id, raw_document_id, trigger)
    VALUES ('xml_parsing', 'queued', NEW.id, NEW.current_si_document_id, 'upload')
    ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER create_xml_parsing_job
    AFTER INSERT OR UPDATE ON content.entities
    FOR EACH ROW
    WHEN (NEW.processing_status = 'xml_ready')
    EXECUTE FUNCTION processing.create_xml_parsing_job();

-- handle_job_failure_and_retries (trigger on_job_failure): retry with backoff, or fail for good.
CREATE FUNCTION processing.handle_job_failure_and_retries() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, public, pg_temp
AS $$
DECLARE
    jt processing.job_types;
    delay_s double precision;
BEGIN
    SELECT * INTO STRICT jt FROM processing.job_types WHERE type = NEW.type;

    -- Permanent classes wait for a new parser or a manual job; retrying cannot help.
    IF NEW.retry_count < NEW.max_retries
       AND NEW.failure_class IS DISTINCT FROM 'invalid_file'
       AND NEW.failure_class IS DISTINCT FROM 'unsupported_version'
       AND NEW.failure_class IS DISTINCT FROM 'parser_error' THEN
        -- Exponential backoff, capped, with jitter so that a burst of failures spreads out.
        delay_s := least(jt.backoff_cap_s, jt.backoff_base_s * power(2, NEW.retry_count))
                   * (0.5 + random() * 0.5);
        UPDATE processing.processing_jobs
           SET retry_count = retry_count + 1,
               status = 'queued',
               worker_id = NULL,
               started_at = NULL,
               lease_until = NULL,
               completed_at = NULL,
               failure_class = NULL,
               next_attempt_at = now() + make_interval(secs => delay_s),
               updated_at = now()
         WHERE id = NEW.id;
        RETURN NULL;
    END IF;

    IF NEW.type = 'basic_discovery' THEN
        IF NEW.search_id IS NOT NULL THEN
            UPDATE public.searches SET status = 'failed', updated_at = now() WHERE id = NEW.search_id;
        ELSIF NEW.entity_id IS NOT NULL THEN
            UPDATE content.entities SET processing_status = 'xml_download_failed', updated_at = now()
             WHERE id = NEW.entity_id;
        END IF;
    ELSIF NEW.type = 'xml_parsing' THEN
        -- A parse of an older document never overrides a newer download (as in apply_job_progress).
        UPDATE content.entities SET processing_status = 'xml_parsing_failed', updated_at = now()
         WHERE id = NEW.entity_id AND current_si_document_id IS NOT DISTINCT FROM NEW.raw_document_id;
    ELSIF NEW.type IN ('shareholder_download', 'shareholder_parsing') THEN
        UPDATE content.entities SET shareholder_research_status = 'failed', updated_at = now()
         WHERE id = NEW.entity_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER on_job_failure
    AFTER UPDATE ON processing.processing_jobs
    FOR EACH ROW
    WHEN (NEW.status = 'failed' AND OLD.status <> 'failed')
    EXECUTE FUNCTION processing.handle_job_failure_and_retries();

-- log_job_step_history: the audit trail. Statement-level with transition tables, so that a batch
-- claim or completion of N jobs writes its N history rows in one INSERT.
CREATE FUNCTION processing.log_job_step_history() RETURNS trigger
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
           -- Dagster runs claim with their run id as worker id.
           CASE WHEN s.worker_id ~ '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
                THEN s.worker_id END,
           CASE WHEN s.status IN ('completed', 'failed') AND s.started_at IS NOT NULL
                THEN (extract(epoch FROM coalesce(s.completed_at, now()) - s.started_at) * 1000)::bigint END,
           jsonb_strip_nulls(jsonb_build_object(
               'from_status', s.from_status,
               'failure_class', s.failure_class,
               'trigger', s.trigger,
               'next_attempt_at', CASE WHEN s.status = 'queued' AND s.from_status = 'failed' THEN s.next_attempt_at END))
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

CREATE TRIGGER trigger_log_job_step_history
    AFTER UPDATE ON processing.processing_jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION processing.log_job_step_history();

CREATE TRIGGER trigger_log_basic_discovery_job_creation
    AFTER INSERT ON processing.processing_jobs
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION processing.log_job_step_history();

-- delete_job_step_history: a deleted job takes its history with it, as ON DELETE CASCADE would
-- (job_step_history.job_id is not a foreign key, see 0001_schema.sql).
CREATE FUNCTION processing.delete_job_step_history() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, pg_temp
AS $$
BEGIN
    DELETE FROM processing.job_step_history h USING old_rows o WHERE h.job_id = o.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER delete_job_step_history
    AFTER DELETE ON processing.processing_jobs
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION processing.delete_job_step_history();

-- sync_shareholder_download_status: a claimed download shows as downloading.
CREATE FUNCTION processing.sync_shareholder_download_status() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
BEGIN
    UPDATE content.entities SET shareholder_research_status = 'downloading', updated_at = now()
     WHERE id = NEW.entity_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER sync_shareholder_download_status
    AFTER UPDATE ON processing.processing_jobs
    FOR EACH ROW
    WHEN (OLD.status = 'queued' AND NEW.status = 'running' AND NEW.type = 'shareholder_download')
    EXECUTE FUNCTION processing.sync_shareholder_download_status();

-- sync_shareholder_parsing_status: a claimed parse shows as parsing.
CREATE FUNCTION processing.sync_shareholder_parsing_status() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
BEGIN
    UPDATE content.entities SET shareholder_research_status = 'parsing', updated_at = now()
     WHERE id = NEW.entity_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER sync_shareholder_parsing_status
    AFTER UPDATE ON processing.processing_jobs
    FOR EACH ROW
    WHEN (OLD.status = 'queued' AND NEW.status = 'running' AND NEW.type = 'shareholder_parsing')
    EXECUTE FUNCTION processing.sync_shareholder_parsing_status();

-- apply_job_progress: the paths the seeds imply but do not spell out, for whole batches at once.
--   basic_discovery (search) claimed    -> search running
--   basic_discovery (search) completed  -> search completed with result_count
--   xml_parsing claimed                 -> entity xml_parsing
--   xml_parsing completed               -> entity parsed
--   shareholder_download completed      -> a shareholder_parsing job for the stored list
--   shareholder_parsing completed       -> shareholder research completed
CREATE FUNCTION processing.apply_job_progress() RETURNS trigger
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

    UPDATE content.entities e
       SET processing_status = CASE WHEN n.status = 'running' THEN 'xml_parsing' ELSE 'parsed' END,
           updated_at = now()
      FROM new_rows n JOIN old_rows o ON o.id = n.id
     WHERE e.id = n.entity_id AND n.type = 'xml_parsing'
       AND n.status IN ('running', 'completed') AND o.status IS DISTINCT FROM n.status
       -- A re-parse (parser_change, manual) leaves a parsed entity readable as parsed.
       AND (n.status = 'completed' OR n.trigger IN ('automatic', 'upload'))
       AND e.processing_status IS DISTINCT FROM CASE WHEN n.status = 'running' THEN 'xml_parsing' ELSE 'parsed' END
       -- A parse of an older document never overrides a newer download.
       AND e.current_si_document_id IS NOT DISTINCT FROM n.raw_document_id;

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

CREATE TRIGGER apply_job_progress
    AFTER UPDATE ON processing.processing_jobs
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION processing.apply_job_progress();

-- request_shareholder_research: what the application calls when a user asks for shareholders.
CREATE FUNCTION processing.request_shareholder_research(p_entity_id uuid, p_requested_by uuid DEFAULT NULL)
RETURNS uuid
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, pg_temp
AS $$
DECLARE
    job_id uuid;
BEGIN
    UPDATE content.entities SET shareholder_research_status = 'requested', updated_at = now()
     WHERE id = p_entity_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'entity % does not exist', p_entity_id USING ERRCODE = 'no_data_found';
    END IF;
    INSERT INTO processing.processing_jobs (type, status, entity_id, trigger, requested_by, reason)
    VALUES ('shareholder_download', 'queued', p_entity_id,
            CASE WHEN p_requested_by IS NULL THEN 'automatic' ELSE 'manual' END,
            p_requested_by,
            CASE WHEN p_requested_by IS NULL THEN NULL ELSE 'shareholder research requested' END)
    ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING
    RETURNING id INTO job_id;
    IF job_id IS NULL THEN  -- already queued or running: hand back the active job
        SELECT id INTO job_id FROM processing.processing_jobs
         WHERE work_key = 'shareholder_download:' || p_entity_id::text || ':'
           AND status IN ('queued', 'running');
    END IF;
    RETURN job_id;
END
$$;

-- take_rate_limit_token: a token bucket shared by every process. Returns 0 when a token was
-- taken, otherwise the seconds until one is available (nothing is taken then).
CREATE FUNCTION processing.take_rate_limit_token(p_name text, p_capacity double precision, p_refill_per_s double precision)
RETURNS double precision
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, pg_temp
AS $$
DECLARE
    bucket processing.rate_limits;
    available double precision;
BEGIN
    INSERT INTO processing.rate_limits (name, capacity, refill_per_s, tokens)
    VALUES (p_name, p_capacity, p_refill_per_s, p_capacity)
    ON CONFLICT (name) DO UPDATE SET capacity = EXCLUDED.capacity, refill_per_s = EXCLUDED.refill_per_s
    RETURNING * INTO bucket;
    available := least(bucket.capacity,
                       bucket.tokens + extract(epoch FROM clock_timestamp() - bucket.refilled_at) * bucket.refill_per_s);
    IF available >= 1 THEN
        UPDATE processing.rate_limits SET tokens = available - 1, refilled_at = clock_timestamp() WHERE name = p_name;
        RETURN 0;
    END IF;
    UPDATE processing.rate_limits SET tokens = available, refilled_at = clock_timestamp() WHERE name = p_name;
    RETURN (1 - available) / bucket.refill_per_s;
END
$$;
