-- Undo 0015: the printouts, their jobs and their request function go.
DROP FUNCTION IF EXISTS processing.request_printout(uuid, uuid, processing.job_priority);
DELETE FROM processing.processing_jobs WHERE type = 'printout_download';
DELETE FROM processing.job_archive WHERE type = 'printout_download';
DELETE FROM content.raw_documents WHERE kind = 'printout';
ALTER TABLE content.raw_documents
    DROP CONSTRAINT raw_documents_kind_check,
    ADD CONSTRAINT raw_documents_kind_check CHECK (kind IN ('si', 'shareholder_list', 'page'));
DELETE FROM processing.job_types WHERE type = 'printout_download';
ALTER TABLE processing.job_types ALTER COLUMN stage SET NOT NULL;
