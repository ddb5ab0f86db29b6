-- Where a shareholder list's words came from (the PDF's text layer, OCR of page images, or both),
-- and whether a text layer that read as no verified list was read again by OCR: used, not_better
-- or failed. Both are NULL for lists read before the reader recorded them.
ALTER TABLE content.shareholder_lists
    ADD COLUMN source text CHECK (source IN ('text_layer', 'ocr', 'mixed')),
    ADD COLUMN ocr_fallback text CHECK (ocr_fallback IN ('used', 'not_better', 'failed'));
