-- printout_download: a person's request for a company's current printout (AD, "Aktueller
-- Abdruck"), the PDF the portal serves beside SI. A register retrieval, so people first: claimed
-- one job at a time, one background job at once. Its PDF is a raw document of kind printout.
-- It has no stage: a printout waits for none of the company's pipeline (a failed shareholder
-- download must not hold it back) and holds none of it back (processing.due_jobs compares stages).
ALTER TABLE processing.job_types ALTER COLUMN stage DROP NOT NULL;
INSERT INTO processing.job_types
    (type, stage, max_retries, backoff_base_s, backoff_cap_s, lease_seconds, batch_size, description, background_slots)
VALUES
    ('printout_download', NULL, 3, 30, 900, 300, 1, 'Download the current printout (AD) of a company.', 1);

ALTER TABLE content.raw_documents
    DROP CONSTRAINT raw_documents_kind_check,
    ADD CONSTRAINT raw_documents_kind_check CHECK (kind IN ('si', 'shareholder_list', 'page', 'printout'));
