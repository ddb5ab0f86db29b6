-- Undo 0011.
ALTER TABLE content.shareholder_lists DROP COLUMN source, DROP COLUMN ocr_fallback;
