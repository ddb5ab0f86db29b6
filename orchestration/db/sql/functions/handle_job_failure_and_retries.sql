-- handle_job_failure_and_retries (trigger on_job_failure): retry with backoff, or fail for good.
CREATE OR REPLACE FUNCTION processing.handle_job_failure_and_retries() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, content, public, pg_temp
AS $$
DECLARE
    jt processing.job_types;
    delay_s double precision;
BEGIN
    SELECT * INTO STRICT jt FROM processing.job_types WHERE type = NEW.type;

    -- Permanent classes (processing.failure_classes) wait for a new parser or a manual job;
    -- retrying cannot help.
    IF NEW.retry_count < NEW.max_retries
       AND NOT EXISTS (SELECT 1 FROM processing.failure_classes fc
                        WHERE fc.failure_class = NEW.failure_class AND fc.permanent) THEN
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

    -- Failed for good: a search's status is its job's; an entity shows what the type's row says
    -- (entity_status_column, entity_status_failed), so a new type needs a row, not a branch.
    IF NEW.search_id IS NOT NULL THEN
        UPDATE public.searches SET status = 'failed', updated_at = now() WHERE id = NEW.search_id;
    ELSIF jt.entity_status_column = 'processing_status' THEN
        -- A parse of an older document never overrides a newer download (as in apply_job_progress,
        -- which says why this stays logic).
        UPDATE content.entities SET processing_status = jt.entity_status_failed, updated_at = now()
         WHERE id = NEW.entity_id AND jt.entity_status_failed IS NOT NULL
           AND (NEW.type <> 'xml_parsing' OR current_si_document_id IS NOT DISTINCT FROM NEW.raw_document_id);
    ELSIF jt.entity_status_column = 'shareholder_research_status' THEN
        UPDATE content.entities SET shareholder_research_status = jt.entity_status_failed, updated_at = now()
         WHERE id = NEW.entity_id AND jt.entity_status_failed IS NOT NULL;
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER on_job_failure
    AFTER UPDATE ON processing.processing_jobs
    FOR EACH ROW
    WHEN (NEW.status = 'failed' AND OLD.status <> 'failed')
    EXECUTE FUNCTION processing.handle_job_failure_and_retries();

REVOKE EXECUTE ON FUNCTION processing.handle_job_failure_and_retries() FROM PUBLIC;
