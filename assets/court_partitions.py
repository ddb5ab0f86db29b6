"""The partitions of the parsed assets: the register court (orchestration.records.courts), and how
a backfill over them is cut into runs that help each other.

173 keys, however many companies the register holds: a person can ask for "München" (D2601) on
the Backfills page, and a parser change is one backfill over them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import dagster as dg

from orchestration.assembly.dagster_internals import BACKFILL_ID_TAG, backfill_id_of_run, partition_keys_of_run
from orchestration.records.courts import register_courts

register_court_partitions_def = dg.StaticPartitionsDefinition(list(register_courts()))
# A backfill's runs in these states may have courts left that another of its runs can help with.
UNFINISHED_RUN_STATUSES = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]


def courts_per_backfill_run(run_slots: int) -> int:
    """Courts one backfill run re-parses at most: a backfill of every court makes one run per run
    slot that backfill runs may take at once (3 with the defaults: 3 of 4 slots), which all start
    as the backfill does. A run that is done with its courts helps the others with theirs
    (reparse_courts), so a run whose courts were small does not leave its slot idle; more runs
    would each start a process that loads the code (seconds of CPU) and wait for a free slot."""
    return math.ceil(len(register_courts()) / run_slots)


def court_backfill_policy(run_slots: int) -> dg.BackfillPolicy:
    """Backfills of the court partitions, whose runs may take ``run_slots`` run slots at once."""
    return dg.BackfillPolicy.multi_run(max_partitions_per_run=courts_per_backfill_run(run_slots))


@dataclass(frozen=True)
class CourtBackfills:
    """How backfills of a court-partitioned asset run: its backfill policy, and how long a run
    gives way to people's work at most before each chunk of its own (0: never)."""

    policy: dg.BackfillPolicy
    give_way_seconds: float = 0


def courts_of_other_runs(context: dg.AssetExecutionContext) -> list[Sequence[str]]:
    """The courts of each unfinished other run of this run's backfill, the runs in court order from
    the one after this run's courts on, so that runs done at once start helping different runs."""
    backfill_id = backfill_id_of_run(context.run.tags)
    if backfill_id is None:
        return []
    runs = context.instance.get_runs(
        dg.RunsFilter(tags={BACKFILL_ID_TAG: backfill_id}, statuses=UNFINISHED_RUN_STATUSES)
    )
    position = {court: index for index, court in enumerate(register_courts())}
    others = sorted(
        (
            courts
            for run in runs
            if run.run_id != context.run.run_id
            and (courts := partition_keys_of_run(run.tags, register_court_partitions_def))
        ),
        key=lambda courts: position[courts[0]],
    )
    mine = position[context.partition_keys[0]]
    return [courts for courts in others if position[courts[0]] > mine] + [
        courts for courts in others if position[courts[0]] < mine
    ]
