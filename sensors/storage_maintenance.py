"""Dagster's storage kept packed: a weekly rebuild of the indexes of the tables retention deletes
from (orchestration.db.index_rebuild), which vacuum alone leaves partly empty."""

import dagster as dg
from sqlalchemy.pool import NullPool

from orchestration.assembly.dagster_instance import DAGSTER_REINDEX_SQL
from orchestration.assembly.dagster_internals import storage_database_url
from orchestration.db.engine import create_app_engine
from orchestration.db.index_rebuild import rebuild_indexes

TIMEZONE = "Europe/Berlin"
# Sunday night: the fewest people's runs, and done before the announcements poll at 05:30.
REBUILD_CRON = "0 3 * * 0"


@dg.op(
    description="Rebuilds the indexes of Dagster's run, event and tick tables concurrently, so runs go on meanwhile."
)
def rebuild_dagster_indexes(context: dg.OpExecutionContext) -> None:
    engine = create_app_engine(storage_database_url(context.instance), poolclass=NullPool)
    try:
        done = rebuild_indexes(engine, DAGSTER_REINDEX_SQL)
    finally:
        engine.dispose()
    context.log.info(done.describe())
    context.add_output_metadata(
        {
            "index_bytes_before": sum(t.bytes_before for t in done.tables),
            "index_bytes_after": sum(t.bytes_after for t in done.tables),
            "leftovers_dropped": dg.MetadataValue.json(done.leftovers_dropped),
        }
    )


@dg.job(
    name="dagster_storage_maintenance_job",
    executor_def=dg.in_process_executor,
    description="Rebuilds the indexes of the Dagster tables that retention deletes from.",
)
def dagster_storage_maintenance_job() -> None:
    rebuild_dagster_indexes()


dagster_storage_maintenance_schedule = dg.ScheduleDefinition(
    name="dagster_storage_maintenance_schedule",
    job=dagster_storage_maintenance_job,
    cron_schedule=REBUILD_CRON,
    execution_timezone=TIMEZONE,
    default_status=dg.DefaultScheduleStatus.RUNNING,
)
