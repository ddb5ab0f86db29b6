-- The indexes of the tables of Dagster's database that retention deletes from, rebuilt.
--
-- Vacuum frees an index page only once every entry on it is gone. Retention deletes old runs but
-- keeps a few (those the UI still reads), and runs of a day interleave, so pages stay partly
-- empty: in a 90-day soak the event log's indexes grew by half while its rows stayed level. A
-- rebuild packs them again. CONCURRENTLY, so that runs go on writing events meanwhile; each
-- statement on its own, outside a transaction, as CONCURRENTLY requires.
REINDEX TABLE CONCURRENTLY event_logs;
REINDEX TABLE CONCURRENTLY asset_event_tags;
REINDEX TABLE CONCURRENTLY asset_check_executions;
REINDEX TABLE CONCURRENTLY runs;
REINDEX TABLE CONCURRENTLY run_tags;
REINDEX TABLE CONCURRENTLY job_ticks;
