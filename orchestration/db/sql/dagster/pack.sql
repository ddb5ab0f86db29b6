-- The tables of Dagster's database that retention deletes from: each packed on Sunday night, and on
-- the other nights when its rows leave much of it empty (orchestration.db.table_packing).
--
-- Vacuum makes the space of deleted rows reusable but never gives it back, so each file stays at
-- the largest the retention window ever held (a week with one backfill more, a day of many
-- people's runs), and its indexes keep the pages that kept runs leave partly empty: in a 150-day
-- soak the event log's file grew by a quarter while its rows grew by a tenth. A rewrite packs a
-- table, its TOAST table and its indexes into what the rows take. It holds the table's exclusive
-- lock while it copies, so it is for tables that copy in a few seconds: a larger one has only its
-- indexes rebuilt, concurrently (REINDEX TABLE CONCURRENTLY), and keeps its file (pg_repack packs
-- it without the lock). Each statement on its own, outside a transaction, as both require.
VACUUM (FULL, ANALYZE) event_logs;
VACUUM (FULL, ANALYZE) asset_event_tags;
VACUUM (FULL, ANALYZE) asset_check_executions;
VACUUM (FULL, ANALYZE) runs;
VACUUM (FULL, ANALYZE) run_tags;
VACUUM (FULL, ANALYZE) job_ticks;
VACUUM (FULL, ANALYZE) bulk_actions;
VACUUM (FULL, ANALYZE) asset_daemon_asset_evaluations;
