-- completed_jobs: every completed job, whether still in the job table or moved to
-- processing.job_archive (which keeps completed jobs only). Whether a parser version has finished
-- a document (the court states, the re-parse's and backfill's work left) is asked of this view, so
-- that no such check forgets the archive.
CREATE OR REPLACE VIEW processing.completed_jobs AS
SELECT j.id, j.type, j.entity_id, j.raw_document_id, j.parser_version
  FROM processing.processing_jobs j
 WHERE j.status = 'completed'
UNION ALL
SELECT a.id, a.type, a.entity_id, a.raw_document_id, a.parser_version
  FROM processing.job_archive a;

GRANT SELECT ON processing.completed_jobs TO hreg_worker;
