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
