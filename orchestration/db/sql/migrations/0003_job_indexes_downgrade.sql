-- Undo 0003.
CREATE INDEX processing_jobs_raw_document_idx ON processing.processing_jobs (raw_document_id, parser_version);
