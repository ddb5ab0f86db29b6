-- delete_job_step_history: a deleted job takes its history with it, as ON DELETE CASCADE would
-- (job_step_history.job_id is not a foreign key, see schema.sql). A job that moved to the archive
-- (archive_completed_jobs, in the same statement) keeps its history.
CREATE OR REPLACE FUNCTION processing.delete_job_step_history() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, processing, pg_temp
AS $$
BEGIN
    DELETE FROM processing.job_step_history h USING old_rows o
     WHERE h.job_id = o.id
       AND NOT EXISTS (SELECT 1 FROM processing.job_archive a WHERE a.id = o.id);
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER delete_job_step_history
    AFTER DELETE ON processing.processing_jobs
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION processing.delete_job_step_history();

REVOKE EXECUTE ON FUNCTION processing.delete_job_step_history() FROM PUBLIC;
