-- The event streams of the monitoring rules (orchestration/automation/sources.py) read rows in
-- the order their transactions began, up to the oldest transaction still running.
--
-- Reading by id (or created_at) alone skips rows: a transaction that took id 5 can commit after
-- one that took id 6, and a reader that saw 6 and moved its cursor past it never sees 5. Each
-- row therefore records its inserting transaction (created_xid). A reader takes the horizon
-- pg_snapshot_xmin(pg_current_snapshot()): every transaction below it has ended, so rows below
-- it are all visible and no new one can appear there. Rows are read in (created_xid, id) order
-- below the horizon; what a running transaction writes waits for the next read.
--
-- Rows that exist already get transaction 0, before every other: a constant default adds the
-- column without rewriting the table (the history alone can hold millions of rows), and only
-- then does the default become the inserting transaction.

ALTER TABLE content.entity_revisions ADD COLUMN created_xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE content.entity_revisions ALTER COLUMN created_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX entity_revisions_created_xid_idx ON content.entity_revisions (created_xid, id);

ALTER TABLE content.shareholder_lists ADD COLUMN created_xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE content.shareholder_lists ALTER COLUMN created_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX shareholder_lists_created_xid_idx ON content.shareholder_lists (created_xid, id) WHERE valid;

-- Only the failures are events: the index leaves out the claims and completions of the hot path.
ALTER TABLE processing.job_step_history ADD COLUMN created_xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE processing.job_step_history ALTER COLUMN created_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX job_step_history_failed_xid_idx ON processing.job_step_history (created_xid, id)
    WHERE status = 'failed';

-- New companies are read in this order instead of by created_at.
ALTER TABLE content.entities ADD COLUMN created_xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE content.entities ALTER COLUMN created_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX entities_created_xid_idx ON content.entities (created_xid, id);
DROP INDEX content.entities_created_at_idx;
