"""Dagster's storage kept packed: a nightly packing of the tables retention deletes from
(orchestration.db.table_packing), whose files and indexes vacuum alone leaves at their largest.
Every night the small tables that a rewrite would shrink by REWRITE_MIN_FREE_SHARE are rewritten,
as after the runs of a backfill are deleted at once; on Sunday night every table is packed."""

import dagster as dg
from pydantic import Field
from sqlalchemy.pool import NullPool

from orchestration.assembly.dagster_instance import DAGSTER_PACK_SQL
from orchestration.assembly.dagster_internals import storage_database_url
from orchestration.db.engine import create_app_engine
from orchestration.db.table_packing import REWRITE_MIN_FREE_SHARE, pack_tables
from resources.dagster_retention import DagsterRetentionResource

TIMEZONE = "Europe/Berlin"
# At night: the fewest people's runs, and done before the announcements poll at 05:30.
PACK_CRON = "0 3 * * *"
# Sunday, the night every table is packed.
EVERY_TABLE_WEEKDAY = 6


class PackingConfig(dg.Config):
    every_table: bool = Field(
        True,
        description="Pack every table: rewrite those small enough, rebuild the indexes of the others. When false, "
        f"only the small tables whose rows leave {REWRITE_MIN_FREE_SHARE:.0%} of them empty are rewritten.",
    )


@dg.op(
    description="Packs Dagster's run, event and tick tables: rewrites those small enough to copy in seconds, "
    "and rebuilds the indexes of the others concurrently; or only rewrites the small ones with space to give back."
)
def pack_dagster_tables(
    context: dg.OpExecutionContext, config: PackingConfig, dagster_retention: DagsterRetentionResource
) -> None:
    engine = create_app_engine(storage_database_url(context.instance), poolclass=NullPool)
    try:
        done = pack_tables(
            engine,
            DAGSTER_PACK_SQL,
            rewrite_max_bytes=dagster_retention.rewrite_max_bytes,
            every_table=config.every_table,
        )
    finally:
        engine.dispose()
    context.log.info(done.describe())
    context.add_output_metadata(
        {
            "table_bytes_before": done.bytes_before,
            "table_bytes_after": done.bytes_after,
            "tables": dg.MetadataValue.json({t.table: t.how for t in done.tables}),
            "free_shares": dg.MetadataValue.json(
                {t.table: round(t.free_share, 3) for t in done.tables if t.free_share is not None}
            ),
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


@dg.schedule(
    name="dagster_storage_maintenance_schedule",
    job=dagster_storage_maintenance_job,
    cron_schedule=PACK_CRON,
    execution_timezone=TIMEZONE,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description=f"Every night, rewrites the small Dagster tables with {REWRITE_MIN_FREE_SHARE:.0%} or more free; "
    "on Sunday night, packs every table.",
)
def dagster_storage_maintenance_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    night = context.scheduled_execution_time
    every_table = night is not None and night.weekday() == EVERY_TABLE_WEEKDAY
    return dg.RunRequest(run_config={"ops": {"pack_dagster_tables": {"config": {"every_table": every_table}}}})
