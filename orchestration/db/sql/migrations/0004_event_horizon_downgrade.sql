-- Undo 0004.
CREATE INDEX entities_created_at_idx ON content.entities (created_at, id);
ALTER TABLE content.entities DROP COLUMN created_xid;
ALTER TABLE processing.job_step_history DROP COLUMN created_xid;
ALTER TABLE content.shareholder_lists DROP COLUMN created_xid;
ALTER TABLE content.entity_revisions DROP COLUMN created_xid;
