"""Retention of Dagster's storage: finished runs older than a cutoff are deleted with their events.

Open-source Dagster prunes only ticks (the instance's ``retention:`` settings); runs and their
event logs stay until deleted (``DagsterInstance.delete_run``), and a run's asset check
executions, which delete_run leaves, go with it (dagster_internals.delete_check_executions_of_runs).
A run is kept while what the UI shows still reads it:

- it is not finished (queued, starting, started, canceling);
- it belongs to a backfill that is not finished (the backfill daemon reads its runs);
- it holds the latest materialization, observation or asset check evaluation of an asset
  partition (or of an unpartitioned asset): staleness, data versions, the partitions page and
  lineage read those events;
- it holds an event that the latest materialization of an asset partition names as its input:
  the staleness of a partitioned asset compares the data version of that input event with the
  input's newest, so a court whose documents were reported again unchanged stays fresh;
- it failed or was canceled after planning an asset partition that has been neither materialized
  nor planned again since: the partitions page shows that partition failed from the run's plan.

An old run that is kept keeps what those pages and its own page read: its asset events that are
still the latest of their partition, its run and step events and its error messages. Its other
events told how it went while it ran (engine events, resource and worker starts, inputs and
outputs handled, log messages below ERROR); they go, as Dagster's database-tuning guide has them
go from old runs. Its materializations and observations of partitions that a later event of the
same kind replaced, and that no latest materialization names as its input, go too, as they would
have gone with the run: a run that worked many courts is kept for the one court nothing has
materialized since, and then holds little more than that court's event, so that what kept runs cost is bounded by the asset partitions, not by the runs.

The calls this needs beyond Dagster's documented instance API: the latest event per partition
(``get_latest_storage_id_by_partition``, which Dagster's own partition status uses), the input
events a materialization points at (dagster_internals.input_event_pointers), the latest
asset check execution per partition (dagster_internals.latest_check_run_ids), a backfill by id,
the deletion of a run's asset check executions and of some of its events, and of a backfill.

A finished backfill older than the cutoff goes once none of its runs is left, so that the
Backfills page holds what the runs do and its rows do not pile up with the weekly parser changes'.
"""

from __future__ import annotations

import functools
import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import dagster as dg

from orchestration.assembly.dagster_internals import (
    BACKFILL_ID_TAG,
    backfill_id_of_run,
    delete_asset_events,
    delete_backfills,
    delete_check_executions_of_runs,
    delete_events_of_runs,
    input_event_pointers,
    latest_check_run_ids,
)

# Finished runs one look examines; a tick looks a bounded number of times.
RETENTION_BATCH_SIZE = 100
RETENTION_BATCHES_PER_TICK = 10
FINISHED_RUN_STATUSES = [dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED]
FINISHED_BACKFILL_STATUSES = frozenset({"COMPLETED", "COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED"})
# Events whose latest per asset partition the UI reads.
LATEST_EVENT_TYPES = (dg.DagsterEventType.ASSET_MATERIALIZATION, dg.DagsterEventType.ASSET_OBSERVATION)
CHECK_EVENT_TYPES = frozenset(
    {dg.DagsterEventType.ASSET_CHECK_EVALUATION, dg.DagsterEventType.ASSET_CHECK_EVALUATION_PLANNED}
)
PLANNED = dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED
# What an old run that is kept loses: events of how it went while it ran, and log messages below
# ERROR. Runs kept with an unfinished backfill keep everything: the backfill is still going.
TRANSITORY_EVENT_TYPES = frozenset(
    {
        dg.DagsterEventType.ENGINE_EVENT,
        dg.DagsterEventType.RESOURCE_INIT_STARTED,
        dg.DagsterEventType.RESOURCE_INIT_SUCCESS,
        dg.DagsterEventType.RESOURCE_INIT_FAILURE,
        dg.DagsterEventType.STEP_WORKER_STARTING,
        dg.DagsterEventType.STEP_WORKER_STARTED,
        dg.DagsterEventType.STEP_INPUT,
        dg.DagsterEventType.STEP_OUTPUT,
        dg.DagsterEventType.LOADED_INPUT,
        dg.DagsterEventType.HANDLED_OUTPUT,
        dg.DagsterEventType.RUN_ENQUEUED,
        dg.DagsterEventType.RUN_DEQUEUED,
        dg.DagsterEventType.RUN_STARTING,
        dg.DagsterEventType.RUN_CANCELING,
    }
)
KEPT_LOG_LEVEL = logging.ERROR
UNFINISHED_BACKFILL = "of unfinished backfills"
HOLDING_LATEST = "holding the latest event of an asset partition"
HOLDING_INPUT = "holding the input of an asset partition's latest materialization"


@dataclass
class RetentionPass:
    """What one call did: runs deleted, runs kept by reason, whether it looked at every old run,
    and where the next call goes on: after the last run kept, or, once it reached the end, from
    the oldest again (a run kept for a reason may lose it)."""

    deleted: list[str] = field(default_factory=list)
    backfills_deleted: list[str] = field(default_factory=list)
    events_trimmed: int = 0  # of the runs kept: events of how they ran, and asset events replaced since
    kept: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    resume_after: str | None = None
    reached_end: bool = False

    def describe(self) -> str:
        kept = ", ".join(f"{len(runs)} {reason}" for reason, runs in sorted(self.kept.items())) or "none"
        return (
            f"deleted {len(self.deleted)} runs; kept {kept}; {self.events_trimmed} events of kept runs trimmed; "
            f"deleted {len(self.backfills_deleted)} finished backfills without runs"
        )


def delete_old_runs(
    instance: dg.DagsterInstance,
    created_before: datetime,
    *,
    resume_after: str | None = None,
    batch_size: int = RETENTION_BATCH_SIZE,
    max_batches: int = RETENTION_BATCHES_PER_TICK,
) -> RetentionPass:
    """Delete the finished runs created before ``created_before`` that nothing keeps, with their
    events, oldest first, looking at ``batch_size`` runs at a time, at most ``max_batches`` times;
    ``resume_after`` is the ``resume_after`` of the previous pass."""
    done = RetentionPass(resume_after=resume_after)
    backfills: dict[str, bool] = {}
    inputs = _InputsOfLatest(instance)
    old = dg.RunsFilter(statuses=FINISHED_RUN_STATUSES, created_before=created_before)
    for _ in range(max_batches):
        records = instance.get_run_records(old, limit=batch_size, ascending=True, cursor=done.resume_after)
        # A run deleted holds no latest event of any kind, so the runs of a batch are judged alike
        # before or after the others of it go.
        doomed: list[str] = []
        trimmed: list[str] = []
        replaced: list[int] = []
        for record in records:
            run = record.dagster_run
            verdict = _judge(instance, run, backfills, inputs)
            if verdict.kept_because:
                done.kept[verdict.kept_because].append(run.run_id)
                if verdict.kept_because != UNFINISHED_BACKFILL:
                    trimmed.append(run.run_id)
                    replaced += verdict.replaced_events
                # Dagster's cursor is a run that exists: the last one kept, not one deleted.
                done.resume_after = run.run_id
            else:
                doomed.append(run.run_id)
        done.events_trimmed += delete_events_of_runs(instance, trimmed, TRANSITORY_EVENT_TYPES, KEPT_LOG_LEVEL)
        done.events_trimmed += delete_asset_events(instance, replaced)
        # delete_run leaves a run's asset check executions behind; they go first, so that a pass
        # cut short leaves none whose run is gone (the run itself is found again next time).
        delete_check_executions_of_runs(instance, doomed)
        for run_id in doomed:
            instance.delete_run(run_id)
        done.deleted += doomed
        if len(records) < batch_size:
            done.resume_after, done.reached_end = None, True
            done.backfills_deleted = _delete_old_backfills(instance, created_before)
            break
    return done


def _delete_old_backfills(instance: dg.DagsterInstance, created_before: datetime) -> list[str]:
    """Delete the finished backfills launched before ``created_before`` that have no run left."""
    old = [
        backfill.backfill_id
        for backfill in instance.get_backfills()
        if backfill.backfill_timestamp < created_before.timestamp()
        and backfill.status.value in FINISHED_BACKFILL_STATUSES
    ]
    without_runs = [
        backfill_id
        for backfill_id in old
        if not instance.get_runs_count(dg.RunsFilter(tags={BACKFILL_ID_TAG: backfill_id}))
    ]
    delete_backfills(instance, without_runs)
    return without_runs


@dataclass
class _InputsOfLatest:
    """The storage ids of the events that the latest materialization of an asset partition (or of
    an unpartitioned asset) points at as its inputs, read once per pass when first asked."""

    instance: dg.DagsterInstance

    @functools.cached_property
    def storage_ids(self) -> frozenset[int]:
        pointed: set[int] = set()
        for asset_key in self.instance.get_asset_keys():
            latest = set(
                self.instance.get_latest_storage_id_by_partition(
                    asset_key, dg.DagsterEventType.ASSET_MATERIALIZATION
                ).values()
            )
            latest.update(
                record.storage_id for record in self.instance.fetch_materializations(asset_key, limit=1).records
            )
            records = self.instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=asset_key, storage_ids=sorted(latest)), limit=len(latest)
            ).records
            for record in records:
                pointed |= input_event_pointers(record.event_log_entry.tags)
        return frozenset(pointed)


@dataclass(frozen=True)
class Verdict:
    """Why a run is kept (None: it is deleted), and which of its materializations and observations
    a later event of the same asset partition replaced."""

    kept_because: str | None
    replaced_events: list[int] = field(default_factory=list)


def _judge(
    instance: dg.DagsterInstance, run: dg.DagsterRun, backfills: dict[str, bool], inputs: _InputsOfLatest
) -> Verdict:
    backfill_id = backfill_id_of_run(run.tags)
    if backfill_id:
        if backfill_id not in backfills:
            backfill = instance.get_backfill(backfill_id)
            backfills[backfill_id] = backfill is not None and backfill.status.value not in FINISHED_BACKFILL_STATUSES
        if backfills[backfill_id]:
            return Verdict(UNFINISHED_BACKFILL)
    records = instance.get_records_for_run(
        run.run_id, of_type={*LATEST_EVENT_TYPES, *CHECK_EVENT_TYPES, PLANNED}
    ).records
    events = [(record.storage_id, record.event_log_entry.get_dagster_event()) for record in records]
    asset_events = [(storage_id, e) for storage_id, e in events if e.event_type in LATEST_EVENT_TYPES]
    latest, replaced = _latest_and_replaced(instance, asset_events)
    # A latest event stays anyway; of the others, those a latest materialization reads as input stay too.
    read = [
        storage_id for storage_id, _ in asset_events if storage_id not in latest and storage_id in inputs.storage_ids
    ]
    replaced = [storage_id for storage_id in replaced if storage_id not in read]
    if latest:
        return Verdict(HOLDING_LATEST, replaced)
    if read:
        return Verdict(HOLDING_INPUT, replaced)
    if _holds_latest_check(instance, run.run_id, [e for _, e in events if e.event_type in CHECK_EVENT_TYPES]):
        return Verdict("holding the latest evaluation of an asset check", replaced)
    if run.status != dg.DagsterRunStatus.SUCCESS and _planned_partition_not_materialized_since(
        instance, [(storage_id, e) for storage_id, e in events if e.event_type == PLANNED]
    ):
        return Verdict("whose failure a partition still shows", replaced)
    return Verdict(None)


def _latest_and_replaced(
    instance: dg.DagsterInstance, events: Sequence[tuple[int, dg.DagsterEvent]]
) -> tuple[list[int], list[int]]:
    """Of ``events`` (storage id, materialization or observation), those that are the latest of
    their kind for their asset partition, and those a later one replaced (an event whose partition
    has no latest found, or none later, is neither)."""
    by_asset: dict[tuple[dg.AssetKey, dg.DagsterEventType], list[tuple[int, str | None]]] = defaultdict(list)
    for storage_id, event in events:
        assert event.asset_key is not None
        by_asset[event.asset_key, event.event_type].append((storage_id, event.partition))
    latest_events: list[int] = []
    replaced: list[int] = []
    for (asset_key, event_type), asset_events in by_asset.items():
        latest = _latest_storage_ids(instance, asset_key, event_type, {partition for _, partition in asset_events})
        for storage_id, partition in asset_events:
            if latest.get(partition) == storage_id:
                latest_events.append(storage_id)
            elif latest.get(partition, 0) > storage_id:
                replaced.append(storage_id)
    return latest_events, replaced


def _latest_storage_ids(
    instance: dg.DagsterInstance,
    asset_key: dg.AssetKey,
    event_type: dg.DagsterEventType,
    partitions: Iterable[str | None],
) -> dict[str | None, int]:
    """The storage id of the latest ``event_type`` event of each of ``partitions`` (None: the
    asset's, unpartitioned)."""
    partitions = set(partitions)
    latest = _latest_storage_ids_by_partition(instance, asset_key, event_type, partitions)
    if None in partitions:
        fetch = (
            instance.fetch_materializations
            if event_type == dg.DagsterEventType.ASSET_MATERIALIZATION
            else instance.fetch_observations
        )
        newest = fetch(asset_key, limit=1).records
        if newest:
            latest[None] = newest[0].storage_id
    return latest


def _latest_storage_ids_by_partition(
    instance: dg.DagsterInstance,
    asset_key: dg.AssetKey,
    event_type: dg.DagsterEventType,
    partitions: Iterable[str | None],
) -> dict[str | None, int]:
    """The storage id of the latest ``event_type`` event of each of ``partitions`` that has one
    (None, the unpartitioned asset, is not looked up)."""
    keys = {partition for partition in partitions if partition is not None}
    if not keys:
        return {}
    return dict(instance.get_latest_storage_id_by_partition(asset_key, event_type, keys).items())


def _holds_latest_check(instance: dg.DagsterInstance, run_id: str, events: Sequence[dg.DagsterEvent]) -> bool:
    """Whether the latest execution of one of the checks ``events`` evaluated (per partition, for a
    partitioned check) is this run's."""
    checks: set[tuple[dg.AssetCheckKey, str | None]] = set()
    for event in events:
        if event.event_type == dg.DagsterEventType.ASSET_CHECK_EVALUATION:
            evaluation = event.asset_check_evaluation_data
            checks.add((evaluation.asset_check_key, evaluation.partition))
        else:
            planned = event.asset_check_planned_data
            subset = planned.partitions_subset
            partitions = [None] if subset is None else subset.get_partition_keys()
            checks.update((planned.asset_check_key, partition) for partition in partitions)
    for partition in {partition for _, partition in checks}:
        keys = [key for key, p in checks if p == partition]
        if run_id in latest_check_run_ids(instance, keys, partition).values():
            return True
    return False


def _planned_partition_not_materialized_since(
    instance: dg.DagsterInstance, planned: Sequence[tuple[int, dg.DagsterEvent]]
) -> bool:
    """Whether an asset partition one of ``planned`` (a run's planned materializations) names has
    neither a materialization after it nor a later plan of a single partition (a plan over a range
    of partitions is not looked up by partition: a run planned before one stays)."""
    for storage_id, event in planned:
        assert event.asset_key is not None
        subset = event.partitions_subset
        partitions: list[str | None] = [event.partition] if subset is None else list(subset.get_partition_keys())
        materialized = _latest_storage_ids(
            instance, event.asset_key, dg.DagsterEventType.ASSET_MATERIALIZATION, partitions
        )
        replanned = _latest_storage_ids_by_partition(instance, event.asset_key, PLANNED, partitions)
        if any(
            materialized.get(partition, 0) < storage_id and replanned.get(partition, 0) <= storage_id
            for partition in partitions
        ):
            return True
    return False
