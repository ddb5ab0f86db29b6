-- Autovacuum of the tables of Dagster's database that the retention sensor deletes from.
--
-- Retention deletes about a day of runs a day: a thirtieth of these tables at the default
-- HREG_DAGSTER_RETENTION_DAYS. Autovacuum's default scale factor (0.2) lets a fifth of a table be
-- dead before it frees the space, about six days of deletions, so new rows would extend the files
-- by that much beyond what retention keeps. At 0.02 the space of a day's deletions is free for the
-- next day's runs.
--
-- Applied by every start of the stack and by `hreg db upgrade`, after Dagster has created or
-- migrated its tables: a setting of a table, it can be applied again as often as wanted.
ALTER TABLE event_logs SET (autovacuum_vacuum_scale_factor = 0.02, toast.autovacuum_vacuum_scale_factor = 0.02);
ALTER TABLE asset_event_tags SET (autovacuum_vacuum_scale_factor = 0.02);
ALTER TABLE asset_check_executions SET (autovacuum_vacuum_scale_factor = 0.02, toast.autovacuum_vacuum_scale_factor = 0.02);
ALTER TABLE runs SET (autovacuum_vacuum_scale_factor = 0.02, toast.autovacuum_vacuum_scale_factor = 0.02);
ALTER TABLE run_tags SET (autovacuum_vacuum_scale_factor = 0.02);
ALTER TABLE job_ticks SET (autovacuum_vacuum_scale_factor = 0.02, toast.autovacuum_vacuum_scale_factor = 0.02);
