-- archive_completed_jobs: moves up to p_limit jobs completed more than p_older_than ago from the
-- job table to processing.job_archive, oldest first, and returns how many moved. Completed jobs
-- are never claimed or changed again, so a move cannot take a job from a worker; SKIP LOCKED
-- keeps concurrent archivers apart, and the status is checked again on the locked row. The step
-- history stays (delete_job_step_history leaves archived jobs' rows). Workers call it; they may
-- not delete jobs themselves.
CREATE OR REPLACE FUNCTION processing.archive_completed_jobs(p_older_than interval, p_limit integer)
RETURNS integer
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, pg_temp
AS $$
DECLARE
    moved integer;
BEGIN
    WITH candidates AS (
        SELECT id
          FROM processing.processing_jobs
         WHERE status = 'completed' AND completed_at < now() - p_older_than
         ORDER BY completed_at
         LIMIT p_limit
           FOR UPDATE SKIP LOCKED
    ), removed AS (
        DELETE FROM processing.processing_jobs j
         WHERE j.id = ANY (ARRAY(SELECT id FROM candidates)) AND j.status = 'completed'
        RETURNING j.*
    )
    INSERT INTO processing.job_archive
    SELECT now(), removed.* FROM removed;
    GET DIAGNOSTICS moved = ROW_COUNT;
    RETURN moved;
END
$$;

REVOKE EXECUTE ON FUNCTION processing.archive_completed_jobs(interval, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION processing.archive_completed_jobs(interval, integer) TO hreg_worker;
