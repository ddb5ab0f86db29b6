-- What a job of each type shows on its entity, and which type continues it, as rows of
-- processing.job_types instead of branches of the trigger functions (apply_job_progress,
-- handle_job_failure_and_retries, sync_shareholder_*_status), so that a new type needs a row.
--   entity_status_column: the status column of content.entities its jobs move (NULL: none);
--   entity_status_running / _completed / _failed: what that column shows while a job of the type
--   runs, when one completes, when one fails for good (NULL: unchanged).
--   continued_by: the type of the job a completed one queues, for the document its result names.
ALTER TABLE processing.job_types
    ADD COLUMN entity_status_column text
        CHECK (entity_status_column IN ('processing_status', 'shareholder_research_status')),
    ADD COLUMN entity_status_running text,
    ADD COLUMN entity_status_completed text,
    ADD COLUMN entity_status_failed text,
    ADD COLUMN continued_by text REFERENCES processing.job_types (type),
    ADD CONSTRAINT job_types_entity_status_has_column CHECK (
        entity_status_column IS NOT NULL
        OR num_nonnulls(entity_status_running, entity_status_completed, entity_status_failed) = 0);

UPDATE processing.job_types t
   SET entity_status_column = v.status_column, entity_status_running = v.running,
       entity_status_completed = v.completed, entity_status_failed = v.failed, continued_by = v.continued_by
  FROM (VALUES
        -- A discovery of a search shows on the search (its status is its job's); of an entity, only
        -- a final failure shows.
        ('basic_discovery',      'processing_status',           NULL,          NULL,        'xml_download_failed', NULL),
        ('xml_parsing',          'processing_status',           'xml_parsing', 'parsed',    'xml_parsing_failed',  NULL),
        ('shareholder_download', 'shareholder_research_status', 'downloading', NULL,        'failed',              'shareholder_parsing'),
        ('shareholder_parsing',  'shareholder_research_status', 'parsing',     'completed', 'failed',              NULL)
       ) AS v (type, status_column, running, completed, failed, continued_by)
 WHERE t.type = v.type;

-- set_shareholder_research_status takes the job's type (and reads its row) instead of a status:
-- a parameter's new name needs the function dropped; its current definition follows.
DROP FUNCTION IF EXISTS processing.set_shareholder_research_status(uuid, text);
