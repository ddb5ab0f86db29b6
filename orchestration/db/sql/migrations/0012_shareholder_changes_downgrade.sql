-- Undo 0012.
ALTER TABLE content.shareholders DROP COLUMN register_country, DROP COLUMN changes;
