-- Undo 0007. Archived jobs are lost; their step history stays.
DROP VIEW IF EXISTS processing.dead_letter;
DROP VIEW IF EXISTS processing.due_jobs;  -- reads the archive; the next upgrade to head restores it
DROP VIEW IF EXISTS processing.completed_jobs;  -- reads the archive too
DROP FUNCTION IF EXISTS processing.archive_completed_jobs(interval, integer);
DROP INDEX processing.processing_jobs_previous_job_idx;
-- The job table's triggers are the head schema's and may read columns a later downgrade dropped:
-- this clean-up is no step of any job, so none of them runs for it.
ALTER TABLE processing.processing_jobs DISABLE TRIGGER USER;
UPDATE processing.processing_jobs j SET previous_job_id = NULL
 WHERE previous_job_id IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM processing.processing_jobs p WHERE p.id = j.previous_job_id);
ALTER TABLE processing.processing_jobs ENABLE TRIGGER USER;
ALTER TABLE processing.processing_jobs ADD CONSTRAINT processing_jobs_previous_job_id_fkey
    FOREIGN KEY (previous_job_id) REFERENCES processing.processing_jobs (id) ON DELETE SET NULL;
DROP INDEX processing.processing_jobs_completed_idx;
DROP TABLE processing.job_archive;
