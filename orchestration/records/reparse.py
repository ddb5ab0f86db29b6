"""Re-parses of stored SI documents, after a parser change or on a person's request (seeds/002).

A re-parse downloads nothing: it queues an xml_parsing job per entity for its current SI
document and the current parser version, linked to the job it redoes. The unique index on
active work keeps one active job per document and version, so asking twice is harmless.
Records whose content is unchanged produce no new revision.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from orchestration.db import queries
from orchestration.records.court_state import QUERIES as COURT_STATE_QUERIES
from orchestration.runtime import queue
from orchestration.runtime.worker import BatchReport, Stage, work_claimed

QUERIES = queries.load("reparse")


@dataclass(frozen=True)
class ReparseScope:
    """Which entities to re-parse; no field set means all of them."""

    entity_ids: tuple[str, ...] | None = None
    search_id: str | None = None
    since: datetime | None = None
    courts: tuple[str, ...] | None = None
    stale_only: bool = False

    def parameters(self) -> dict[str, Any]:
        """The bind parameters of the entities this scope names (stale or not)."""
        return {
            "entity_ids": list(self.entity_ids) if self.entity_ids is not None else None,
            "search_id": self.search_id,
            "since": self.since,
            "courts": list(self.courts) if self.courts is not None else None,
        }


def enqueue_reparse(
    conn: sa.Connection,
    scope: ReparseScope,
    *,
    parser_version: str,
    trigger: str = "parser_change",
    requested_by: str | None = None,
    reason: str | None = None,
) -> int:
    """Queue re-parse jobs for the entities in ``scope``; returns how many were queued.

    ``trigger`` is ``parser_change`` (a new parser version) or ``manual``, which needs
    ``requested_by`` and a ``reason`` a person can act on (the database enforces it).
    """
    return conn.execute(
        QUERIES["enqueue_reparse"],
        {
            **scope.parameters(),
            "stale_only": scope.stale_only,
            "parser_version": parser_version,
            "trigger": trigger,
            "requested_by": requested_by,
            "reason": reason,
        },
    ).rowcount


def count_active_reparses(conn: sa.Connection, scope: ReparseScope, *, parser_version: str) -> int:
    """Entities in ``scope`` (stale or not) whose document has a queued or running job of ``parser_version``."""
    return conn.execute(QUERIES["count_active"], {**scope.parameters(), "parser_version": parser_version}).scalar_one()


@dataclass(frozen=True)
class StoredDocumentRedo:
    """How a job type redoes the documents it has already stored, for a backfill of courts."""

    # Entity ids (text) of :courts (among :entity_ids unless NULL) whose document :parser_version
    # has not completed nor failed for good since :since, in id order: the companies that keep
    # those courts unsynced (orchestration.records.court_state) that a worker may take up.
    unfinished: sa.TextClause
    # Queues parser_change jobs of :parser_version for :entity_ids, each linked to the job it redoes.
    enqueue: sa.TextClause


SI_REPARSE = StoredDocumentRedo(COURT_STATE_QUERIES["si_unfinished"], QUERIES["enqueue_reparse"])
SHAREHOLDER_LIST_REREAD = StoredDocumentRedo(
    COURT_STATE_QUERIES["shareholder_unfinished"], QUERIES["enqueue_list_rereads"]
)


# How often a backfill that gives way to people looks whether their work is done.
GIVE_WAY_POLL_SECONDS = 0.25


def give_way_to_people(engine: sa.Engine, most_seconds: float) -> None:
    """Wait while a person's job is due or running, ``most_seconds`` at most: on a machine the
    backfill keeps busy, their run starts and works on free cores. The limit keeps a backfill
    moving while people work all the time."""
    deadline = time.monotonic() + most_seconds
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            if not queue.people_at_work(conn):
                return
        time.sleep(GIVE_WAY_POLL_SECONDS)


@dataclass
class CourtReparse:
    """What redoing one court did in this worker."""

    court: str
    report: BatchReport
    # Documents whose job another worker held (queued or running there), left to it.
    held_elsewhere: int = 0
    # Walking backward, the worker reached documents another worker had taken or done already.
    caught_up: bool = False


def reparse_court(
    engine: sa.Engine,
    stage: Stage,
    worker_id: str,
    court: str,
    *,
    redo: StoredDocumentRedo,
    parser_version: str,
    batch_size: int,
    lease_seconds: int,
    since: datetime | None,
    backward: bool = False,
    give_way_seconds: float = 0,
) -> CourtReparse:
    """Redo the stored documents of one register court that this parser version has not done, as
    ``redo`` says for the stage's job type.

    Each batch is queued as parser_change jobs (linked to the jobs they redo) and claimed by this
    worker in the same transaction, so no sensor run ever sees them queued; then they are worked
    like any claimed batch: new revisions only for changed content, every attempt in the step
    history. A batch leaves out what another worker has parsed since the court's list was read.
    A document whose job of this version failed for good ``since`` (None: at any time) is left
    as it is: the run that owns the court tries an earlier failure once more, and reports it.

    Before each chunk of its work it gives way to people for up to ``give_way_seconds``
    (give_way_to_people).

    The court's owner walks its companies forward. A worker helping it walks them ``backward``
    and stops at the first batch it finds taken or done (``caught_up``): there the two have met,
    and the owner has the rest.
    """
    parameters = {"courts": [court], "parser_version": parser_version, "since": since}
    with engine.connect() as conn:
        todo = conn.execute(redo.unfinished, {**parameters, "entity_ids": None}).scalars().all()
    give_way = functools.partial(give_way_to_people, engine, give_way_seconds) if give_way_seconds else None
    result = CourtReparse(
        court, BatchReport(job_type=stage.job_type, worker_id=worker_id), caught_up=backward and not todo
    )
    starts = range(0, len(todo), batch_size)
    for start in reversed(starts) if backward else starts:
        entity_ids, jobs = _queue_and_claim(
            engine, stage, redo, parameters, todo[start : start + batch_size], worker_id, lease_seconds
        )
        result.held_elsewhere += len(entity_ids) - len(jobs)
        if backward and not jobs:
            result.caught_up = True
            break
        result.report.absorb(work_claimed(engine, stage, worker_id, jobs, lease_seconds, before_chunk=give_way))
    return result


def _queue_and_claim(
    engine: sa.Engine,
    stage: Stage,
    redo: StoredDocumentRedo,
    parameters: dict[str, Any],
    batch: Sequence[str],
    worker_id: str,
    lease_seconds: int,
) -> tuple[list[str], list[queue.ClaimedJob]]:
    """Queue and claim the jobs of the companies of ``batch`` still unfinished, in one transaction:
    those companies and the jobs claimed for them.

    Each statement reads what is committed when it starts, so a job another worker finishes
    between the read of the unfinished companies and the insert leaves no active job in the way of
    a second one for the same document. Read again after the insert, such a company has dropped
    out, and the batch is queued anew without it.
    """
    version = parameters["parser_version"]

    def unfinished(conn: sa.Connection) -> list[str]:
        return list(conn.execute(redo.unfinished, {**parameters, "entity_ids": batch}).scalars())

    while True:
        with engine.connect() as conn, conn.begin() as transaction:
            entity_ids = unfinished(conn)
            conn.execute(
                redo.enqueue,
                {
                    **ReparseScope(entity_ids=tuple(entity_ids)).parameters(),
                    "stale_only": False,
                    "parser_version": version,
                    "trigger": "parser_change",
                    "requested_by": None,
                    "reason": None,
                },
            )
            if unfinished(conn) != entity_ids:
                transaction.rollback()
                continue
            return entity_ids, queue.claim_for_entities(
                conn, stage.job_type, entity_ids, version, worker_id, lease_seconds
            )
