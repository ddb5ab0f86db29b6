-- name: rebuild_leftovers
-- The indexes an interrupted REINDEX CONCURRENTLY left on the tables (schema-qualified names):
-- invalid copies named <index>_ccnew or <index>_ccold, which writes keep up to date until dropped.
SELECT format('%I.%I', n.nspname, c.relname) AS name
  FROM pg_index i
  JOIN pg_class c ON c.oid = i.indexrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE NOT i.indisvalid
   AND i.indrelid = ANY(CAST(:tables AS regclass[]))
   AND c.relname ~ '_cc(new|old)[0-9]*$'

-- name: table_bytes
-- The size of a table on disk: its file, its TOAST table and all their indexes.
SELECT pg_total_relation_size(CAST(:table AS regclass))

-- name: create_live_row_bytes
-- A function of this session alone (pg_temp) giving the bytes a table's live rows take, read by a scan.
-- Plain SQL takes no table name as a parameter; the function runs the scan with the name quoted by
-- the regclass. A row counts at its aligned size with its line pointer; its whole-row size
-- includes its TOASTed values, so the figure is of the file and its TOAST together.
CREATE OR REPLACE FUNCTION pg_temp.live_row_bytes(tbl regclass) RETURNS bigint
LANGUAGE plpgsql STABLE AS $$
DECLARE
    bytes bigint;
BEGIN
    EXECUTE format('SELECT coalesce(sum((pg_column_size(t.*) + 7) / 8 * 8 + 4), 0) FROM %s t', tbl) INTO bytes;
    RETURN bytes;
END
$$

-- name: table_fill
-- A table's file and TOAST in bytes, what of them pages leave to rows, and what its live rows take.
SELECT f.bytes AS file_bytes,
       f.bytes / current_setting('block_size')::int * (current_setting('block_size')::int - 24) AS usable_bytes,
       pg_temp.live_row_bytes(CAST(:table AS regclass)) AS live_bytes
  FROM (SELECT pg_relation_size(c.oid) + coalesce(pg_relation_size(NULLIF(c.reltoastrelid, 0)), 0) AS bytes
          FROM pg_class c
         WHERE c.oid = CAST(:table AS regclass)) f
