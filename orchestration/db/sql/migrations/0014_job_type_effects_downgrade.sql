-- Undo 0014. The current trigger functions read these columns: the code of revision 0013 applies
-- its own definitions again at its upgrade (their checksums differ from those recorded).
ALTER TABLE processing.job_types
    DROP CONSTRAINT job_types_entity_status_has_column,
    DROP COLUMN entity_status_column,
    DROP COLUMN entity_status_running,
    DROP COLUMN entity_status_completed,
    DROP COLUMN entity_status_failed,
    DROP COLUMN continued_by;
-- Revision 0013's set_shareholder_research_status names its parameter differently.
DROP FUNCTION IF EXISTS processing.set_shareholder_research_status(uuid, text);
