"""What the project takes from Dagster's internals, all of it here: what no public API serves.

Each entry says why no public API of Dagster 1.13 serves, and what in Dagster would let it go.
tests/test_dagster_internals.py pins every one of them, so an upgrade that moves one fails there,
by name; tests/test_architecture.py keeps `dagster._` and private overrides out of everything else
(the tests included). The run queue needs none: the instance config sets it through `run_queue:` and
`concurrency: runs:` (dagster_instance).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, TypeVar

import dagster as dg
import sqlalchemy as sa

# Provenance written by hand. A court-partitioned asset reports each court as an
# AssetMaterialization of its own, with the court's records as data version and its documents'
# version and newest event as input, when the court is done (a run works many courts). Dagster
# writes these tags itself only for a step's outputs (Output/MaterializeResult data_version), one
# version copied to every partition of a range, with inputs read as the step starts; the tag
# names are not public. Would go with per-partition data versions of batched materializations
# (dagster-io/dagster#34013, open) or a provenance argument on materializations
# (dagster-io/dagster#21436, open).
# Retention reads the same tags back: the input events a partition's latest materialization
# points at, whose data versions Dagster's staleness of partitioned assets compares.
from dagster._core.definitions.data_version import (
    CODE_VERSION_TAG,
    DATA_VERSION_IS_USER_PROVIDED_TAG,
    DATA_VERSION_TAG,
    INPUT_EVENT_POINTER_TAG_PREFIX,
    NULL_EVENT_POINTER,
    get_input_data_version_tag,
    get_input_event_pointer_tag,
)

# The kinds of instigators, by which DagsterInstance.get_tick_retention_settings reads the
# `retention:` settings the instance config sets (dagster_instance), and the tick statuses it
# answers with (TickStatus, below): the tests read Dagster's reading of them. The method is
# public; the enums it takes and returns are not exported. Would go with them exported from
# `dagster`. None known.
from dagster._core.definitions.run_request import InstigatorType

# The latest execution of asset checks in one partition, for the retention of runs (a run holding
# it stays). The instance answers only for a check across its partitions
# (get_latest_asset_check_evaluation_record, one key at a time); the event log storage's
# get_latest_asset_check_execution_by_key narrows to a partition only through a PartitionKeyFilter,
# which `dagster` does not export (it came with partitioned asset checks, dagster-io/dagster#33336).
# Would go with that filter exported or a partition argument on the instance's method. None known.
from dagster._core.event_api import PartitionKeyFilter

# The statuses of ticks, one key per status in the tick retention settings (InstigatorType, above).
from dagster._core.scheduler.instigation import TickStatus

# The asset check executions of runs that retention deletes. DagsterInstance.delete_run deletes a
# run and its events (SqlEventLogStorage.delete_events: the event log and the asset event tags),
# not its rows in the event log storage's asset_check_executions table, which only wiping the
# asset deletes; no public API deletes them by run, so each deleted run that checked an asset left
# rows behind and the table grew without bound. The table is Dagster's (event_log/schema.py),
# written through the storage's index connection, as here. Would go with delete_run deleting them
# (dagster-io/dagster#18341, "handle deleted asset check runs", open).
#
# The events of runs that retention keeps but that tell only how the run went while it ran (engine
# events, handled outputs, debug logs). Dagster's database-tuning guide ("Cleaning older data from
# your Dagster database") deletes them from old runs with SQL on this table; no public API deletes
# less than a whole run's events (DagsterInstance.delete_run). The table is Dagster's
# (event_log/schema.py), written through the storage's connection, as Dagster's own writes are.
# Would go with run retention in open-source Dagster (dagster-io/dagster#4100, open).
#
# The asset events of runs that retention keeps that a later event of the same asset partition
# replaced, with their asset event tags, as SqlEventLogStorage.delete_events deletes a whole run's:
# what deleting the run would have taken of them. No public API deletes single events. Would go
# with run retention in open-source Dagster (dagster-io/dagster#4100, open).
from dagster._core.storage.event_log.schema import (
    AssetCheckExecutionsTable,
    AssetEventTagsTable,
    SqlEventLogStorageTable,
)

# The backfills that retention deletes: finished, older than its cutoff, with none of their runs
# left. Their rows (the Backfills page's) would otherwise stay for good, one a week for the parser
# changes' backfills. No public API deletes a backfill. The tables are Dagster's (runs/schema.py),
# written through the run storage's connection, as Dagster's own writes are. Would go with run
# retention in open-source Dagster (dagster-io/dagster#4100, open).
from dagster._core.storage.runs.schema import BackfillTagsTable, BulkActionsTable

# The tags of a backfill's runs: which backfill a run belongs to and which partitions it works,
# read off the other runs of a backfill so that a run done with its own courts helps theirs. Their
# values are documented ("dagster/backfill" in the run tag concurrency guide), the constants are
# not, and no public accessor gives another run's partitions. None known.
from dagster._core.storage.tags import (
    ASSET_PARTITION_RANGE_END_TAG,
    ASSET_PARTITION_RANGE_START_TAG,
    BACKFILL_ID_TAG,
    PARTITION_NAME_TAG,
)

# How long the asset daemon keeps its evaluations of automation conditions: it purges older ones
# after each tick, by the real clock. bench.soak, whose days are simulated, purges on its calendar
# with the same age. Not configurable (no `retention:` setting), not public. None known.
from dagster._daemon.asset_daemon import EVALUATIONS_TTL_DAYS

# How often the daemon's loops (the backfill daemon's among them) look: bench.backfill launches a
# backfill at a fixed phase of that loop. Not configurable, not public. None known.
from dagster._daemon.controller import DEFAULT_DAEMON_INTERVAL_SECONDS

# The schema checks of dagster-postgres's storages, overridden below. Their helpers that read the
# storage config are not public either (dagster_postgres.utils): our storages are built from the
# instance config exactly as theirs are.
from dagster_postgres.event_log import PostgresEventLogStorage
from dagster_postgres.run_storage import PostgresRunStorage
from dagster_postgres.schedule_storage import PostgresScheduleStorage
from dagster_postgres.utils import get_token_provider_from_config, pg_url_from_config
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Connection

__all__ = [
    "ASSET_PARTITION_RANGE_END_TAG",
    "ASSET_PARTITION_RANGE_START_TAG",
    "BACKFILL_ID_TAG",
    "DEFAULT_DAEMON_INTERVAL_SECONDS",
    "EVALUATIONS_TTL_DAYS",
    "EventLogStorage",
    "InstigatorType",
    "RunStorage",
    "ScheduleStorage",
    "TickStatus",
    "backfill_id_of_run",
    "data_version_of",
    "data_version_tags",
    "delete_asset_events",
    "delete_backfills",
    "delete_check_executions_of_runs",
    "delete_events_of_runs",
    "input_event_pointers",
    "latest_check_run_ids",
    "partition_keys_of_run",
    "provenance_tags",
    "storage_database_url",
]


def data_version_tags(data_version: str) -> dict[str, str]:
    """The tags that make ``data_version`` a materialization's data version, as Dagster writes
    them for an Output(data_version=…)."""
    return {DATA_VERSION_TAG: data_version, DATA_VERSION_IS_USER_PROVIDED_TAG: "true"}


def provenance_tags(
    code_version: str,
    data_version: str,
    input_key: dg.AssetKey,
    input_data_version: str,
    input_storage_id: int | None,
) -> dict[str, str]:
    """The tags of a materialization made by ``code_version`` with ``data_version``, read from the
    input ``input_key`` at ``input_data_version`` and its event ``input_storage_id`` (None: an
    input never materialized)."""
    return {
        CODE_VERSION_TAG: code_version,
        **data_version_tags(data_version),
        get_input_data_version_tag(input_key): input_data_version,
        get_input_event_pointer_tag(input_key): NULL_EVENT_POINTER
        if input_storage_id is None
        else str(input_storage_id),
    }


def input_event_pointers(tags: Mapping[str, str] | None) -> set[int]:
    """The storage ids of the input events a materialization's tags point at (its provenance, as
    Dagster or provenance_tags wrote it); an input never materialized points at none."""
    return {
        int(value)
        for key, value in (tags or {}).items()
        if key.startswith(f"{INPUT_EVENT_POINTER_TAG_PREFIX}/") and value != NULL_EVENT_POINTER
    }


def data_version_of(tags: Mapping[str, str] | None) -> str | None:
    """The data version an event's tags give, if any."""
    return (tags or {}).get(DATA_VERSION_TAG)


def backfill_id_of_run(tags: Mapping[str, str]) -> str | None:
    """The backfill a run belongs to, by its tags (None: not a backfill's)."""
    return tags.get(BACKFILL_ID_TAG)


def partition_keys_of_run(tags: Mapping[str, str], partitions_def: dg.PartitionsDefinition) -> Sequence[str]:
    """The partitions of ``partitions_def`` a run works, by its tags: a range (a multi-run
    backfill's) or one partition."""
    if ASSET_PARTITION_RANGE_START_TAG in tags:
        keys = dg.PartitionKeyRange(tags[ASSET_PARTITION_RANGE_START_TAG], tags[ASSET_PARTITION_RANGE_END_TAG])
        return partitions_def.get_partition_keys_in_range(keys)
    return [tags[PARTITION_NAME_TAG]] if PARTITION_NAME_TAG in tags else []


def latest_check_run_ids(
    instance: dg.DagsterInstance, check_keys: Sequence[dg.AssetCheckKey], partition: str | None
) -> dict[dg.AssetCheckKey, str]:
    """The run of the latest execution of each of ``check_keys`` that has one: in ``partition``,
    or across the check's partitions (None)."""
    partition_filter = PartitionKeyFilter(key=partition) if partition is not None else None
    latest = instance.event_log_storage.get_latest_asset_check_execution_by_key(
        check_keys, partition_filter=partition_filter
    )
    return {key: execution.run_id for key, execution in latest.items()}


def delete_check_executions_of_runs(instance: dg.DagsterInstance, run_ids: Sequence[str]) -> int:
    """Delete the asset check executions of ``run_ids`` (runs about to be deleted) in one statement;
    returns how many went."""
    storage = _postgres_event_log_storage(instance, "deleting asset check executions")
    if not run_ids:
        return 0
    executions = AssetCheckExecutionsTable
    with storage.index_connection() as conn:
        return conn.execute(executions.delete().where(executions.c.run_id.in_(run_ids))).rowcount


def delete_events_of_runs(
    instance: dg.DagsterInstance,
    run_ids: Sequence[str],
    event_types: Collection[dg.DagsterEventType],
    logs_below_level: int,
) -> int:
    """Delete the events of ``event_types`` of ``run_ids`` and their log messages below the logging
    level ``logs_below_level``, in one statement; returns how many went."""
    storage = _postgres_event_log_storage(instance, "deleting events of runs")
    if not run_ids:
        return 0
    events = SqlEventLogStorageTable
    # A log message is an event without a Dagster event type; its level is in its JSON.
    level = sa.cast(sa.cast(events.c.event, postgresql.JSONB)["level"].astext, sa.Integer)
    of_types = events.c.dagster_event_type.in_([event_type.value for event_type in event_types])
    below = sa.and_(events.c.dagster_event_type.is_(None), level < logs_below_level)
    with storage.index_connection() as conn:
        return conn.execute(events.delete().where(events.c.run_id.in_(run_ids), sa.or_(of_types, below))).rowcount


def delete_asset_events(instance: dg.DagsterInstance, storage_ids: Sequence[int]) -> int:
    """Delete the events ``storage_ids`` (materializations, observations) and their asset event
    tags, the tags first, so that a call cut short leaves no tag without its event; returns how
    many events went."""
    storage = _postgres_event_log_storage(instance, "deleting asset events")
    if not storage_ids:
        return 0
    events, tags = SqlEventLogStorageTable, AssetEventTagsTable
    with storage.index_connection() as conn:
        conn.execute(tags.delete().where(tags.c.event_id.in_(storage_ids)))
        return conn.execute(events.delete().where(events.c.id.in_(storage_ids))).rowcount


def delete_backfills(instance: dg.DagsterInstance, backfill_ids: Sequence[str]) -> int:
    """Delete the backfills ``backfill_ids`` and their tags, the tags first, so that a call cut short
    leaves no tag without its backfill; returns how many backfills went."""
    storage = instance.run_storage
    if not isinstance(storage, PostgresRunStorage):
        raise TypeError(f"deleting backfills needs Dagster's PostgreSQL storage, not {type(storage).__name__}")
    if not backfill_ids:
        return 0
    with storage.connect() as conn:
        conn.execute(BackfillTagsTable.delete().where(BackfillTagsTable.c.backfill_id.in_(backfill_ids)))
        return conn.execute(BulkActionsTable.delete().where(BulkActionsTable.c.key.in_(backfill_ids))).rowcount


def storage_database_url(instance: dg.DagsterInstance) -> str:
    """The URL of the PostgreSQL database holding ``instance``'s event log, as its storage
    connects (for maintenance of Dagster's tables: the instance has no public accessor)."""
    return _postgres_event_log_storage(instance, "rebuilding indexes").postgres_url


def _postgres_event_log_storage(instance: dg.DagsterInstance, what: str) -> PostgresEventLogStorage:
    storage = instance.event_log_storage
    if not isinstance(storage, PostgresEventLogStorage):
        raise TypeError(f"{what} needs Dagster's PostgreSQL storage, not {type(storage).__name__}")
    return storage


# dagster-postgres's storages, with their schema checks answered from memory once true.
#
# Before many calls (an event stored, a sensor's state read or written, runs listed), Dagster's
# storages ask the catalog whether a table or column of a later Dagster version exists yet, over a
# new connection each time (the storages hold no pool). During a backfill those checks made up the
# largest part of the database's work on Dagster's behalf, ahead of the events themselves. Once a
# table or column is there it stays (only `dagster instance migrate` changes the schema, and it
# only adds), so a true answer is kept for the life of the process and a false one is asked again.
# The checks are no public API, some are private methods. Would go with Dagster caching them
# itself, as dagster-io/dagster#33820 (these checks, true answers only; closed) and #33413 (open)
# propose; neither is in 1.13.27.

Check = TypeVar("Check", bound=Callable[..., bool])


def kept_once_true(check: Check) -> Check:
    """``check`` (a storage method), asked again only until it answers True; a connection
    argument is not part of what it asks."""

    @functools.wraps(check)
    def kept(self, *args: Any) -> bool:
        question = (check.__name__, *(arg for arg in args if not isinstance(arg, Connection)))
        known = self.__dict__.setdefault("_schema_found", set())
        if question in known:
            return True
        found = check(self, *args)
        if found:
            known.add(question)
        return found

    return kept  # type: ignore[return-value]


class FromInstanceConfig:
    """Built from the instance config as the storage it is mixed into would be (whose own
    from_config_value builds its base class by name)."""

    @classmethod
    def from_config_value(cls, inst_data, config_value):
        # The storage this is mixed into takes these arguments; mypy sees only the mixin's.
        return cls(  # type: ignore[call-arg]
            inst_data=inst_data,
            postgres_url=pg_url_from_config(config_value),
            should_autocreate_tables=config_value.get("should_autocreate_tables", True),
            token_provider=get_token_provider_from_config(config_value),
        )


class RunStorage(FromInstanceConfig, PostgresRunStorage):
    has_run_stats_index_cols = kept_once_true(PostgresRunStorage.has_run_stats_index_cols)
    has_bulk_actions_selector_cols = kept_once_true(PostgresRunStorage.has_bulk_actions_selector_cols)
    has_backfill_id_column = kept_once_true(PostgresRunStorage.has_backfill_id_column)
    has_bulk_action_job_name_column = kept_once_true(PostgresRunStorage.has_bulk_action_job_name_column)
    has_backfill_tags_table = kept_once_true(PostgresRunStorage.has_backfill_tags_table)


class EventLogStorage(FromInstanceConfig, PostgresEventLogStorage):
    has_table = kept_once_true(PostgresEventLogStorage.has_table)
    _has_asset_key_col_on_connection = kept_once_true(PostgresEventLogStorage._has_asset_key_col_on_connection)


class ScheduleStorage(FromInstanceConfig, PostgresScheduleStorage):
    has_instigators_table = kept_once_true(PostgresScheduleStorage.has_instigators_table)
    _has_instigators_table = kept_once_true(PostgresScheduleStorage._has_instigators_table)
    _has_asset_daemon_asset_evaluations_table = kept_once_true(
        PostgresScheduleStorage._has_asset_daemon_asset_evaluations_table
    )
    has_secondary_index_table = kept_once_true(PostgresScheduleStorage.has_secondary_index_table)
    has_built_index = kept_once_true(PostgresScheduleStorage.has_built_index)
