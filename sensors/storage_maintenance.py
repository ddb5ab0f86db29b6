"""Dagster's storage kept packed: a weekly packing of the tables retention deletes from
(orchestration.db.table_packing), whose files and indexes vacuum alone leaves at their largest."""

import dagster as dg
from sqlalchemy.pool import NullPool

from orchestration.assembly.dagster_instance import DAGSTER_PACK_SQL
from orchestration.assembly.dagster_internals import storage_database_url
from orchestration.db.engine import create_app_engine
from orchestration.db.table_packing import pack_tables
from resources.dagster_retention import DagsterRetentionResource

TIMEZONE = "Europe/Berlin"
# Sunday night: the fewest people's runs, and done before the announcements poll at 05:30.
PACK_CRON = "0 3 * * 0"


@dg.op(
    description="Packs Dagster's run, event and tick tables: rewrites those small enough to copy in seconds, "
    "and rebuilds the indexes of the others concurrently."
)
def pack_dagster_tables(context: dg.OpExecutionContext, dagster_retention: DagsterRetentionResource) -> None:
    engine = create_app_engine(storage_database_url(context.instance), poolclass=NullPool)
    try:
        done = pack_tables(engine, DAGSTER_PACK_SQL, rewrite_max_bytes=dagster_retention.rewrite_max_bytes)
    finally:
        engine.dispose()
    context.log.info(done.describe())
    context.add_output_metadata(
        {
            "table_bytes_before": done.bytes_before,
            "table_bytes_after": done.bytes_after,
            "tables": dg.MetadataValue.json({t.table: t.how for t in done.tables}),
            "leftovers_dropped": dg.MetadataValue.json(done.leftovers_dropped),
        }
    )


@dg.job(
    name="dagster_storage_maintenance_job",
    executor_def=dg.in_process_executor,
    description="Packs the Dagster tables that retention deletes from.",
)
def dagster_storage_maintenance_job() -> None:
    pack_dagster_tables()


dagster_storage_maintenance_schedule = dg.ScheduleDefinition(
    name="dagster_storage_maintenance_schedule",
    job=dagster_storage_maintenance_job,
    cron_schedule=PACK_CRON,
    execution_timezone=TIMEZONE,
    default_status=dg.DefaultScheduleStatus.RUNNING,
)
