-- Backfills and re-parses select the companies of a register court: the court code without a
-- department letter (D2601V is D2601), read in id order. The court code never changes, so the
-- pipeline's status updates stay HOT.
CREATE INDEX entities_court_idx ON content.entities ((left(court_code, 5)), id);
