-- Undo 0002.
DROP INDEX IF EXISTS content.entities_created_at_idx;
DROP SCHEMA IF EXISTS automation CASCADE;
