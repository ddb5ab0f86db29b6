"""The job queue: every operation on processing.processing_jobs, as a named query of
db/sql/queries/queue.sql.

Workers call these functions and know no SQL. Retries, final failures and the step history are
the database's business (see db/sql/functions/): a worker only claims, extends its
lease, and reports each job completed or failed.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

import sqlalchemy as sa

from orchestration.db import queries
from orchestration.runtime.failures import FailureClass, JobError

if TYPE_CHECKING:
    from orchestration.register.ratelimit import Priority

QUERIES = queries.load("queue")
# How often the lease reaper runs (sensors.jobs): a job whose lease expired is re-queued within this.
REAPER_INTERVAL_SECONDS = 30


@dataclass(frozen=True)
class JobType:
    type: str
    stage: int | None
    max_retries: int
    backoff_base_s: float
    backoff_cap_s: float
    lease_seconds: int
    batch_size: int
    current_version: str | None
    background_slots: int | None = None


# A tuple whose fields are CLAIM's RETURNING columns in their order, so that a batch of thousands
# is built straight from its rows (a frozen dataclass of twelve fields cost 5 µs a job).
class ClaimedJob(NamedTuple):
    id: str
    type: str
    search_id: str | None
    entity_id: str | None
    raw_document_id: str | None
    parser_version: str | None
    data: dict[str, Any]
    retry_count: int
    max_retries: int
    trigger: str
    previous_job_id: str | None
    lease_until: datetime
    priority: Priority

    @property
    def attempt(self) -> int:
        return self.retry_count + 1


def job_types(conn: sa.Connection) -> dict[str, JobType]:
    return {row.type: JobType(**row._mapping) for row in conn.execute(QUERIES["job_types"])}


def background_room(conn: sa.Connection, job_type: str, background_slots: int | None) -> int | None:
    """How many more background jobs of the type may be claimed (None: any number).

    With slots, claims of the type take turns until their transaction ends, so the count holds.
    """
    if background_slots is None:
        return None
    conn.execute(QUERIES["lock_background_slots"], {"job_type": job_type})
    return max(0, background_slots - conn.execute(QUERIES["running_background"], {"job_type": job_type}).scalar_one())


@dataclass(frozen=True)
class ClaimStart:
    """A position in claim order (priority, due time, id): where a claim starts taking jobs."""

    priority: str
    next_attempt_at: datetime
    job_id: str

    def to_text(self) -> str:
        return f"{self.priority} {self.next_attempt_at.isoformat()} {self.job_id}"

    @classmethod
    def from_text(cls, text: str) -> ClaimStart:
        """The position ``to_text`` wrote; ValueError for anything else."""
        priority, due, job_id = text.split(" ")
        if priority not in ("interactive", "background"):
            raise ValueError(f"not a job priority: {priority!r}")
        return cls(priority, datetime.fromisoformat(due), str(uuid.UUID(job_id)))


# The claim query's start parameters for the queue's head: every job is at or after this position.
QUEUE_HEAD = {"start_priority": "interactive", "start_due": "-infinity", "start_id": str(uuid.UUID(int=0))}


def claim(
    conn: sa.Connection,
    job_type: str,
    limit: int,
    worker_id: str,
    lease_seconds: int,
    *,
    background_slots: int | None = None,
    start: ClaimStart | None = None,
) -> list[ClaimedJob]:
    """Claim up to ``limit`` due jobs of ``job_type`` in one statement, interactive ones first;
    background ones only while fewer than ``background_slots`` are running (None: no limit).

    With ``start`` (a batch's head) the claim takes the jobs from that position in claim order on,
    and from the queue's head when none is left there (others took them meanwhile)."""
    params = {
        "job_type": job_type,
        "limit": limit,
        "worker_id": worker_id,
        "lease_seconds": lease_seconds,
        "background_allowed": background_room(conn, job_type, background_slots) != 0,
    }
    if start is not None:
        at_start = {"start_priority": start.priority, "start_due": start.next_attempt_at, "start_id": start.job_id}
        claimed = [ClaimedJob._make(row) for row in conn.execute(QUERIES["claim"], params | at_start)]
        if claimed:
            return claimed
    return [ClaimedJob._make(row) for row in conn.execute(QUERIES["claim"], params | QUEUE_HEAD)]


def claim_for_entities(
    conn: sa.Connection,
    job_type: str,
    entity_ids: Sequence[str],
    parser_version: str | None,
    worker_id: str,
    lease_seconds: int,
) -> list[ClaimedJob]:
    """Claim the queued ``job_type`` jobs of ``parser_version`` for ``entity_ids``, whether due or not."""
    rows = conn.execute(
        QUERIES["claim_for_entities"],
        {
            "entity_ids": list(entity_ids),
            "job_type": job_type,
            "parser_version": parser_version,
            "worker_id": worker_id,
            "lease_seconds": lease_seconds,
        },
    )
    return [ClaimedJob._make(row) for row in rows]


@dataclass(frozen=True)
class BatchHead:
    job_id: str
    retry_count: int
    next_attempt_at: datetime
    priority: str

    @property
    def key(self) -> str:
        return f"{self.job_id}:{self.retry_count}:{self.next_attempt_at.timestamp():.6f}"

    @property
    def start(self) -> ClaimStart:
        """Where the claim of the run requested for this batch starts."""
        return ClaimStart(self.priority, self.next_attempt_at, self.job_id)


def batch_heads(
    conn: sa.Connection, job_type: str, batch_size: int, runs: int, *, background_slots: int | None = None
) -> list[BatchHead]:
    """Heads of the next ``runs`` batches of due jobs, as claims with ``background_slots`` take them:
    no more batches headed by a background job than there are free slots."""
    room = background_room(conn, job_type, background_slots)
    params = {"job_type": job_type, "batch_size": batch_size, "runs": runs, "background_allowed": room != 0}
    heads = []
    for r in conn.execute(QUERIES["batch_heads"], params):
        if r.priority == "background" and room is not None:
            if room == 0:
                break
            room -= 1
        heads.append(BatchHead(str(r.id), r.retry_count, r.next_attempt_at, r.priority))
    return heads


def count_due(conn: sa.Connection, job_type: str) -> int:
    return conn.execute(QUERIES["count_due"], {"job_type": job_type}).scalar_one()


def people_at_work(conn: sa.Connection) -> bool:
    """Whether an interactive job (a person waits for it) is due or running."""
    return conn.execute(QUERIES["people_at_work"]).scalar_one()


def extend_leases(conn: sa.Connection, job_ids: Sequence[str], worker_id: str, lease_seconds: int) -> int:
    """Push the leases of jobs this worker still holds; returns how many it still holds."""
    if not job_ids:
        return 0
    return conn.execute(
        QUERIES["extend_leases"], {"ids": list(job_ids), "worker_id": worker_id, "lease_seconds": lease_seconds}
    ).rowcount


Outcome = dict[str, Any] | JobError  # a job's result, or the error it failed with


def report(conn: sa.Connection, worker_id: str, outcomes: Iterable[tuple[str, Outcome]]) -> set[str]:
    """Mark jobs completed with their results or failed with their failure class and structured error,
    in one statement; the database decides on retries. Returns the ids this worker still held."""
    pairs = list(outcomes)
    if not pairs:
        return set()
    errors = [outcome if isinstance(outcome, JobError) else None for _, outcome in pairs]
    rows = conn.execute(
        QUERIES["report"],
        {
            "ids": [job_id for job_id, _ in pairs],
            "statuses": ["completed" if error is None else "failed" for error in errors],
            "failure_classes": [None if error is None else error.failure_class.value for error in errors],
            "results": [
                json.dumps(outcome, default=str) if error is None else json.dumps({"error": error.to_error()})
                for (_, outcome), error in zip(pairs, errors, strict=True)
            ],
            "worker_id": worker_id,
        },
    )
    return set(rows.scalars())


def complete(conn: sa.Connection, worker_id: str, results: Iterable[tuple[str, dict[str, Any]]]) -> set[str]:
    """Mark jobs completed with their results; returns the ids this worker still held."""
    return report(conn, worker_id, results)


def fail(conn: sa.Connection, worker_id: str, failures: Iterable[tuple[str, JobError]]) -> set[str]:
    """Mark jobs failed with their failure class and structured error; the database decides on retries."""
    return report(conn, worker_id, failures)


def claim_interactive_for_entities(
    conn: sa.Connection, job_type: str, entity_ids: Sequence[str], worker_id: str, lease_seconds: int
) -> list[ClaimedJob]:
    """Claim the due interactive ``job_type`` jobs of ``entity_ids``."""
    rows = conn.execute(
        QUERIES["claim_interactive_for_entities"],
        {"entity_ids": list(entity_ids), "job_type": job_type, "worker_id": worker_id, "lease_seconds": lease_seconds},
    )
    return [ClaimedJob._make(row) for row in rows]


def release_run_jobs(conn: sa.Connection, run_id: str, run_status: str) -> list[str]:
    """Fail the running jobs that run ``run_id`` holds, as the lease reaper would; they are retried."""
    return [
        str(row.id) for row in conn.execute(QUERIES["release_run_jobs"], {"run_id": run_id, "run_status": run_status})
    ]


def reap_expired(conn: sa.Connection, limit: int = 10_000) -> list[str]:
    """Fail running jobs whose lease expired (failure class lease_expired); they are retried."""
    return [str(row.id) for row in conn.execute(QUERIES["reap_expired"], {"limit": limit})]


def enqueue(
    conn: sa.Connection,
    job_type: str,
    *,
    entity_id: str | None = None,
    search_id: str | None = None,
    raw_document_id: str | None = None,
    parser_version: str | None = None,
    data: dict[str, Any] | None = None,
    trigger: str = "automatic",
    requested_by: str | None = None,
    reason: str | None = None,
    previous_job_id: str | None = None,
) -> str | None:
    """Queue a job; returns its id, or None when the same work is already queued or running."""
    row = conn.execute(
        QUERIES["enqueue"],
        {
            "type": job_type,
            "entity_id": entity_id,
            "search_id": search_id,
            "raw_document_id": raw_document_id,
            "parser_version": parser_version,
            "data": json.dumps(data or {}),
            "trigger": trigger,
            "requested_by": requested_by,
            "reason": reason,
            "previous_job_id": previous_job_id,
        },
    ).first()
    return str(row.id) if row else None


def queue_status(conn: sa.Connection) -> list[dict[str, Any]]:
    return [dict(row._mapping) for row in conn.execute(QUERIES["queue_status"])]


def queue_by_priority(conn: sa.Connection) -> list[dict[str, Any]]:
    """Queued and running jobs per type and priority; ``oldest_queued_age_s`` is None when none is queued."""
    return [dict(row._mapping) for row in conn.execute(QUERIES["queue_by_priority"])]


def permanent_failure_classes(conn: sa.Connection) -> set[FailureClass]:
    """The classes the database does not retry (processing.failure_classes)."""
    return {FailureClass(name) for name in conn.execute(QUERIES["permanent_failure_classes"]).scalars()}


def dead_letter(
    conn: sa.Connection, *, job_type: str | None = None, failure_class: str | None = None, limit: int = 100
) -> list[dict[str, Any]]:
    """Jobs that failed for good and that no later job took up, newest first."""
    rows = conn.execute(QUERIES["dead_letter"], {"type": job_type, "failure_class": failure_class, "limit": limit})
    return [dict(row._mapping) for row in rows]


class RetryRefused(Exception):
    """A retry that would not take up a failed job; the message says why."""


def retry(conn: sa.Connection, job_id: str, *, requested_by: str, reason: str) -> str:
    """Queue a manual job that takes up the failed job ``job_id``; returns the new job's id."""
    state = conn.execute(QUERIES["job_state"], {"job_id": job_id}).first()
    if state is None:
        raise RetryRefused(f"job {job_id} does not exist (or was archived)")
    if state.status != "failed":
        raise RetryRefused(f"job {job_id} is {state.status}, not failed: only failed jobs are retried")
    if state.taken_up_by:
        raise RetryRefused(f"job {job_id} was taken up already by job {state.taken_up_by}")
    if state.active_job:
        raise RetryRefused(f"the same work is already queued or running as job {state.active_job}")
    if not reason.strip():
        raise RetryRefused("a retry needs a reason")
    new_id = conn.execute(QUERIES["retry"], {"job_id": job_id, "requested_by": requested_by, "reason": reason}).scalar()
    if new_id is None:
        raise RetryRefused("the same work was queued meanwhile")
    return new_id


def archive_completed(conn: sa.Connection, older_than: timedelta, limit: int) -> int:
    """Move up to ``limit`` jobs completed longer than ``older_than`` ago to the archive; returns how many."""
    return conn.execute(
        QUERIES["archive_completed"], {"older_than_s": older_than.total_seconds(), "limit": limit}
    ).scalar_one()


def archive_all_completed(engine: sa.Engine, older_than: timedelta, batch_size: int, max_batches: int) -> int:
    """Archive in batches, one transaction each, until a batch comes back short; returns how many moved."""
    moved = 0
    for _ in range(max_batches):
        with engine.begin() as conn:
            batch = archive_completed(conn, older_than, batch_size)
        moved += batch
        if batch < batch_size:
            break
    return moved


def failures_by_class(conn: sa.Connection) -> list[dict[str, Any]]:
    return [dict(row._mapping) for row in conn.execute(QUERIES["failures_by_class"])]


__all__ = [
    "BatchHead",
    "ClaimStart",
    "ClaimedJob",
    "FailureClass",
    "JobError",
    "JobType",
    "Outcome",
    "RetryRefused",
    "archive_all_completed",
    "archive_completed",
    "batch_heads",
    "claim",
    "complete",
    "count_due",
    "dead_letter",
    "enqueue",
    "extend_leases",
    "fail",
    "failures_by_class",
    "job_types",
    "permanent_failure_classes",
    "queue_by_priority",
    "queue_status",
    "reap_expired",
    "report",
    "retry",
]
