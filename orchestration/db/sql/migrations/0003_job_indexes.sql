-- The job table keeps only the indexes its hot path needs. Every claim and completion changes
-- status, which the partial indexes name, so no job update is HOT: each one writes an entry into
-- every index. processing_jobs_raw_document_idx cost about a sixth of a claim plus completion and
-- served one question, "has a job of this parser version taken this document", which the entity
-- index answers as well: a document belongs to one entity, and an entity has a handful of
-- xml_parsing jobs. Deleting a raw document now scans the job table for its ON DELETE SET NULL;
-- documents are content-addressed and kept, so that is rare maintenance, not a hot path.
DROP INDEX processing.processing_jobs_raw_document_idx;
