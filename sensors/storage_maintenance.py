"""Dagster's storage kept packed: a nightly packing of the tables retention deletes from
(orchestration.db.table_packing), whose files and indexes vacuum alone leaves at their largest.
On Sunday night every table is packed. On the other nights the schedule reads how much of each
small table its rows leave empty, and starts a run only when one is worth rewriting (as after the
runs of a backfill are deleted at once), which rewrites those."""

from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
from pydantic import Field
from sqlalchemy.engine import Engine
from sqlalchemy.pool import NullPool

from orchestration.assembly.dagster_instance import DAGSTER_PACK_SQL
from orchestration.assembly.dagster_internals import storage_database_url
from orchestration.db.engine import create_app_engine
from orchestration.db.table_packing import REWRITE_MIN_FREE_BYTES, REWRITE_MIN_FREE_SHARE, free_spaces, pack_tables
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
    with storage_engine(context.instance) as engine:
        done = pack_tables(
            engine,
            DAGSTER_PACK_SQL,
            rewrite_max_bytes=dagster_retention.rewrite_max_bytes,
            every_table=config.every_table,
        )
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
    description=f"On Sunday night, packs every Dagster table; on the other nights, rewrites the small ones whose "
    f"rows leave {REWRITE_MIN_FREE_SHARE:.0%} of them empty, and starts no run when there is none.",
)
def dagster_storage_maintenance_schedule(
    context: dg.ScheduleEvaluationContext, dagster_retention: DagsterRetentionResource
) -> dg.RunRequest | dg.SkipReason:
    night = context.scheduled_execution_time
    if night is not None and night.weekday() == EVERY_TABLE_WEEKDAY:
        return packing(every_table=True)
    with storage_engine(context.instance) as engine:
        free = free_spaces(engine, DAGSTER_PACK_SQL, rewrite_max_bytes=dagster_retention.rewrite_max_bytes)
    if any(space is not None and space.worth_rewriting for space in free.values()):
        return packing(every_table=False)
    shares = ", ".join(f"{table} {space.share:.0%}" for table, space in free.items() if space is not None)
    return dg.SkipReason(
        f"No table worth rewriting (its rows must leave {REWRITE_MIN_FREE_SHARE:.0%} and "
        f"{REWRITE_MIN_FREE_BYTES // 1024} KB of it empty); empty now: {shares}."
    )


def packing(*, every_table: bool) -> dg.RunRequest:
    return dg.RunRequest(run_config={"ops": {"pack_dagster_tables": {"config": {"every_table": every_table}}}})


@contextmanager
def storage_engine(instance: dg.DagsterInstance) -> Iterator[Engine]:
    """An engine on Dagster's database, for the one connection a packing or its measure takes."""
    engine = create_app_engine(storage_database_url(instance), poolclass=NullPool)
    try:
        yield engine
    finally:
        engine.dispose()
