"""The job queue: every operation on processing.processing_jobs as a named query.

Workers call these functions and know no SQL. Retries, final failures and the step history are
the database's business (see db/sql/functions/): a worker only claims, extends its
lease, and reports each job completed or failed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple

import sqlalchemy as sa

from orchestration.failures import FailureClass, JobError

# What a claim does to the jobs it picked (the ids ``picked``), and the columns it returns.
_CLAIM_PICKED = """
    UPDATE processing.processing_jobs j
       SET status = 'running',
           worker_id = :worker_id,
           started_at = now(),
           completed_at = NULL,
           lease_until = now() + make_interval(secs => :lease_seconds),
           updated_at = now()
     -- By primary key, however large the table.
     WHERE j.id = ANY (ARRAY(SELECT id FROM picked))
    -- Ids as text: workers pass them on as strings, so no uuid object is built per id.
    RETURNING j.id::text, j.type, j.search_id::text, j.entity_id::text, j.raw_document_id::text, j.parser_version,
              j.data, j.retry_count, j.max_retries, j.trigger, j.previous_job_id::text, j.lease_until,
              j.priority::text
"""

# Due jobs (the stage gate of seeds/003) are the view processing.due_jobs (db/sql/views/due_jobs.sql).
# CLAIM and BATCH_HEADS take them in the same order, people first: interactive jobs by due time,
# then background ones by due time, so a batch head is the job a claim takes first. Background
# jobs are left out while the type's background slots are taken (:background_allowed, see claim()).
# Each priority is its own scan of processing_jobs_due_idx (type, priority, next_attempt_at, id),
# so the index answers type, priority and due time together, and in claim order; one scan with
# priority in the ORDER BY leaves the due time to a filter, and with statistics taken while nothing
# was queued the planner then prefers another index and sorts (a backfill's claims went quadratic).
CLAIM = sa.text(f"""
    WITH people AS (
        SELECT j.id
          FROM processing.due_jobs j
         WHERE j.type = :job_type AND j.priority = 'interactive'
         ORDER BY j.next_attempt_at, j.id
         LIMIT :limit
           FOR UPDATE OF j SKIP LOCKED
    ), background AS (
        SELECT j.id
          FROM processing.due_jobs j
         WHERE j.type = :job_type AND j.priority = 'background' AND :background_allowed
         ORDER BY j.next_attempt_at, j.id
         LIMIT :limit - (SELECT count(*) FROM people)
           FOR UPDATE OF j SKIP LOCKED
    ), picked AS (
        SELECT id FROM people UNION ALL SELECT id FROM background
    )
    {_CLAIM_PICKED}
""")

# The queued jobs of one type and version for the named entities, due or still in backoff: what
# a backfill run queued for itself in the same transaction (so no sensor ever sees them queued),
# and retries that a person's re-execution takes at once. The entity index finds them. The run
# is the backfill's own unit of concurrency (the run queue), so background slots do not apply.
CLAIM_FOR_ENTITIES = sa.text(f"""
    WITH picked AS (
        SELECT j.id
          FROM processing.processing_jobs j
         WHERE j.entity_id = ANY (CAST(:entity_ids AS uuid[]))
           AND j.type = :job_type
           AND j.status = 'queued'
           AND j.parser_version IS NOT DISTINCT FROM :parser_version
           FOR UPDATE OF j SKIP LOCKED
    )
    {_CLAIM_PICKED}
""")

# The due interactive jobs of one type for the named entities: the parses of the documents a
# person's discovery run has just stored, which that run then works itself.
CLAIM_INTERACTIVE_FOR_ENTITIES = sa.text(f"""
    WITH picked AS (
        SELECT j.id
          FROM processing.due_jobs j
         WHERE j.entity_id = ANY (CAST(:entity_ids AS uuid[]))
           AND j.type = :job_type
           AND j.priority = 'interactive'
           FOR UPDATE OF j SKIP LOCKED
    )
    {_CLAIM_PICKED}
""")

COUNT_DUE = sa.text("SELECT count(*) FROM processing.due_jobs j WHERE j.type = :job_type")

# The first job of each of the next ``runs`` batches, in claim order: a batch's identity for
# idempotent run keys (the same head is the same batch, until a run claims it).
BATCH_HEADS = sa.text("""
    SELECT id, retry_count, next_attempt_at, priority::text
      FROM (SELECT d.*, row_number() OVER (ORDER BY d.priority, d.next_attempt_at, d.id) - 1 AS position
              FROM ((SELECT j.id, j.retry_count, j.next_attempt_at, j.priority
                       FROM processing.due_jobs j
                      WHERE j.type = :job_type AND j.priority = 'interactive'
                      ORDER BY j.next_attempt_at, j.id
                      LIMIT :batch_size * :runs)
                    UNION ALL
                    (SELECT j.id, j.retry_count, j.next_attempt_at, j.priority
                       FROM processing.due_jobs j
                      WHERE j.type = :job_type AND j.priority = 'background' AND :background_allowed
                      ORDER BY j.next_attempt_at, j.id
                      LIMIT :batch_size * :runs)) d
             ORDER BY d.priority, d.next_attempt_at, d.id
             LIMIT :batch_size * :runs) due
     WHERE position % :batch_size = 0
     ORDER BY position
""")

EXTEND_LEASES = sa.text("""
    UPDATE processing.processing_jobs
       SET lease_until = now() + make_interval(secs => :lease_seconds), updated_at = now()
     WHERE id = ANY(CAST(:ids AS uuid[])) AND status = 'running' AND worker_id = :worker_id
""")

COMPLETE = sa.text("""
    UPDATE processing.processing_jobs j
       SET status = 'completed', result = r.result, completed_at = now(), lease_until = NULL,
           updated_at = now()
      FROM unnest(CAST(:ids AS uuid[]), CAST(:results AS jsonb[])) AS r(id, result)
     WHERE j.id = r.id AND j.status = 'running' AND j.worker_id = :worker_id
    RETURNING j.id::text
""")

FAIL = sa.text("""
    UPDATE processing.processing_jobs j
       SET status = 'failed', failure_class = r.failure_class, result = r.result, completed_at = now(),
           lease_until = NULL, updated_at = now()
      FROM unnest(CAST(:ids AS uuid[]), CAST(:failure_classes AS text[]), CAST(:results AS jsonb[]))
           AS r(id, failure_class, result)
     WHERE j.id = r.id AND j.status = 'running' AND j.worker_id = :worker_id
    RETURNING j.id::text
""")

# The re-check of status and lease in the outer WHERE runs on the locked, current row: a job
# that completed while the reaper looked at it is left alone.
# Both ways a worker loses its jobs fail them as lease_expired, so that the database retries them.
_FAIL_AS_LEASE_EXPIRED = """
    UPDATE processing.processing_jobs j
       SET status = 'failed',
           failure_class = 'lease_expired',
           completed_at = now(),
           updated_at = now(),
           result = jsonb_build_object('error', jsonb_build_object(
               'type', 'lease_expired', 'message', {message}, 'source', {source}, 'code', NULL))
      FROM lost
     WHERE j.id = lost.id AND j.status = 'running' AND {still_lost}
    RETURNING j.id
"""
REAP_EXPIRED = sa.text(
    """
    WITH lost AS (
        SELECT id FROM processing.processing_jobs
         WHERE status = 'running' AND lease_until < now()
         ORDER BY lease_until
         LIMIT :limit
           FOR UPDATE SKIP LOCKED
    )"""
    + _FAIL_AS_LEASE_EXPIRED.format(
        message="format('lease expired at %s while held by %s; the worker crashed or was cancelled', "
        "j.lease_until, coalesce(j.worker_id, 'nobody'))",
        source="'lease_reaper'",
        still_lost="j.lease_until < now()",
    )
)
# The jobs a Dagster run still held when it failed or was cancelled (its process killed, say):
# released at once rather than when their leases run out.
RELEASE_RUN_JOBS = sa.text(
    """
    WITH lost AS (
        SELECT id FROM processing.processing_jobs
         WHERE status = 'running' AND worker_id = :run_id
           FOR UPDATE SKIP LOCKED
    )"""
    + _FAIL_AS_LEASE_EXPIRED.format(
        message="format('held by run %s, which ended %s before reporting it', j.worker_id, CAST(:run_status AS text))",
        source="'run_status_sensor'",
        still_lost="j.worker_id = :run_id",
    )
)

JOB_TYPES = sa.text("""
    SELECT type, stage, max_retries, backoff_base_s, backoff_cap_s, lease_seconds, batch_size, current_version,
           background_slots
      FROM processing.job_types ORDER BY stage
""")

# Claims of a type with background slots take turns, so two claims never both see a free slot.
LOCK_BACKGROUND_SLOTS = sa.text("SELECT pg_advisory_xact_lock(hashtext('hreg background slots ' || :job_type))")

RUNNING_BACKGROUND = sa.text("""
    SELECT count(*) FROM processing.processing_jobs
     WHERE status = 'running' AND type = :job_type AND priority = 'background'
""")

ENQUEUE = sa.text("""
    INSERT INTO processing.processing_jobs
        (type, entity_id, search_id, raw_document_id, parser_version, data, trigger, requested_by,
         reason, previous_job_id)
    VALUES (:type, :entity_id, :search_id, :raw_document_id, :parser_version, CAST(:data AS jsonb),
            :trigger, :requested_by, :reason, :previous_job_id)
    ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING
    RETURNING id
""")

QUEUE_STATUS = sa.text("""
    SELECT type, status, count(*) AS jobs, extract(epoch FROM now() - min(created_at)) AS oldest_age_s
      FROM processing.processing_jobs
     GROUP BY type, status
     ORDER BY type, status
""")

# Who waits: the active jobs of each type by priority (the enum's order, interactive first).
QUEUE_BY_PRIORITY = sa.text("""
    SELECT j.type, j.priority::text AS priority,
           count(*) FILTER (WHERE j.status = 'queued') AS queued,
           count(*) FILTER (WHERE j.status = 'running') AS running,
           extract(epoch FROM now() - min(j.created_at) FILTER (WHERE j.status = 'queued'))::float
               AS oldest_queued_age_s
      FROM processing.processing_jobs j
     WHERE j.status IN ('queued', 'running')
     GROUP BY j.type, j.priority
     ORDER BY j.type, j.priority
""")

# seeds/002's dead letter: failed for good and not taken up by a later job (db/sql/views/dead_letter.sql).
DEAD_LETTER = sa.text("""
    SELECT id::text, type, failure_class, permanent, attempts, last_error, error_source, error_code,
           search_id::text, entity_id::text, raw_document_id::text, parser_version, trigger, failed_at,
           extract(epoch FROM now() - failed_at)::float AS age_s
      FROM processing.dead_letter
     WHERE (CAST(:type AS text) IS NULL OR type = :type)
       AND (CAST(:failure_class AS text) IS NULL OR failure_class = :failure_class)
     ORDER BY failed_at DESC, id
     LIMIT :limit
""")

# A manual job that takes up a failed one: the same work (parser_version from job_types, i.e.
# today's parser), pointing back at it.
RETRY = sa.text("""
    INSERT INTO processing.processing_jobs
        (type, search_id, entity_id, raw_document_id, data, trigger, requested_by, reason, previous_job_id)
    SELECT f.type, f.search_id, f.entity_id, f.raw_document_id, f.data, 'manual', :requested_by, :reason, f.id
      FROM processing.processing_jobs f
     WHERE f.id = :job_id AND f.status = 'failed'
    ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING
    RETURNING id::text
""")

JOB_STATE = sa.text("""
    SELECT j.status,
           (SELECT later.id::text FROM processing.processing_jobs later
             WHERE later.previous_job_id = j.id ORDER BY later.created_at DESC LIMIT 1) AS taken_up_by,
           (SELECT active.id::text FROM processing.processing_jobs active
             WHERE active.work_key = processing.job_work_key(j.type, j.raw_document_id, j.entity_id, j.search_id,
                                                             jt.current_version)
               AND active.status IN ('queued', 'running')) AS active_job
      FROM processing.processing_jobs j JOIN processing.job_types jt ON jt.type = j.type
     WHERE j.id = :job_id
""")

ARCHIVE_COMPLETED = sa.text("SELECT processing.archive_completed_jobs(make_interval(secs => :older_than_s), :limit)")

PERMANENT_FAILURE_CLASSES = sa.text("""
    SELECT failure_class FROM processing.failure_classes WHERE permanent ORDER BY failure_class
""")

FAILURES_BY_CLASS = sa.text("""
    SELECT type, coalesce(failure_class, 'unclassified') AS failure_class, count(*) AS jobs
      FROM processing.processing_jobs
     WHERE status = 'failed'
     GROUP BY 1, 2
     ORDER BY 1, 2
""")


@dataclass(frozen=True)
class JobType:
    type: str
    stage: int
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
    priority: str  # interactive or background

    @property
    def attempt(self) -> int:
        return self.retry_count + 1


def job_types(conn: sa.Connection) -> dict[str, JobType]:
    return {row.type: JobType(**row._mapping) for row in conn.execute(JOB_TYPES)}


def background_room(conn: sa.Connection, job_type: str, background_slots: int | None) -> int | None:
    """How many more background jobs of the type may be claimed (None: any number).

    With slots, claims of the type take turns until their transaction ends, so the count holds.
    """
    if background_slots is None:
        return None
    conn.execute(LOCK_BACKGROUND_SLOTS, {"job_type": job_type})
    return max(0, background_slots - conn.execute(RUNNING_BACKGROUND, {"job_type": job_type}).scalar_one())


def claim(
    conn: sa.Connection,
    job_type: str,
    limit: int,
    worker_id: str,
    lease_seconds: int,
    *,
    background_slots: int | None = None,
) -> list[ClaimedJob]:
    """Claim up to ``limit`` due jobs of ``job_type`` in one statement, interactive ones first;
    background ones only while fewer than ``background_slots`` are running (None: no limit)."""
    params = {
        "job_type": job_type,
        "limit": limit,
        "worker_id": worker_id,
        "lease_seconds": lease_seconds,
        "background_allowed": background_room(conn, job_type, background_slots) != 0,
    }
    return [ClaimedJob._make(row) for row in conn.execute(CLAIM, params)]


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
        CLAIM_FOR_ENTITIES,
        {
            "entity_ids": list(entity_ids),
            "job_type": job_type,
            "parser_version": parser_version,
            "worker_id": worker_id,
            "lease_seconds": lease_seconds,
        },
    )
    return [ClaimedJob._make(row) for row in rows]


def claim_interactive_for_entities(
    conn: sa.Connection, job_type: str, entity_ids: Sequence[str], worker_id: str, lease_seconds: int
) -> list[ClaimedJob]:
    """Claim the due interactive ``job_type`` jobs of ``entity_ids``."""
    rows = conn.execute(
        CLAIM_INTERACTIVE_FOR_ENTITIES,
        {"entity_ids": list(entity_ids), "job_type": job_type, "worker_id": worker_id, "lease_seconds": lease_seconds},
    )
    return [ClaimedJob._make(row) for row in rows]


@dataclass(frozen=True)
class BatchHead:
    job_id: str
    retry_count: int
    next_attempt_at: datetime
    priority: str = "background"  # of the batch's first job: interactive heads a person's batch

    @property
    def key(self) -> str:
        return f"{self.job_id}:{self.retry_count}:{self.next_attempt_at.timestamp():.6f}"


def batch_heads(
    conn: sa.Connection, job_type: str, batch_size: int, runs: int, *, background_slots: int | None = None
) -> list[BatchHead]:
    """Heads of the next ``runs`` batches of due jobs, as claims with ``background_slots`` take them:
    no more batches headed by a background job than there are free slots."""
    room = background_room(conn, job_type, background_slots)
    params = {"job_type": job_type, "batch_size": batch_size, "runs": runs, "background_allowed": room != 0}
    heads = []
    for r in conn.execute(BATCH_HEADS, params):
        if r.priority == "background" and room is not None:
            if room == 0:
                break
            room -= 1
        heads.append(BatchHead(str(r.id), r.retry_count, r.next_attempt_at, r.priority))
    return heads


def count_due(conn: sa.Connection, job_type: str) -> int:
    return conn.execute(COUNT_DUE, {"job_type": job_type}).scalar_one()


def extend_leases(conn: sa.Connection, job_ids: Sequence[str], worker_id: str, lease_seconds: int) -> int:
    """Push the leases of jobs this worker still holds; returns how many it still holds."""
    if not job_ids:
        return 0
    return conn.execute(
        EXTEND_LEASES, {"ids": list(job_ids), "worker_id": worker_id, "lease_seconds": lease_seconds}
    ).rowcount


def complete(conn: sa.Connection, worker_id: str, results: Iterable[tuple[str, dict[str, Any]]]) -> set[str]:
    """Mark jobs completed with their results; returns the ids this worker still held."""
    pairs = list(results)
    if not pairs:
        return set()
    rows = conn.execute(
        COMPLETE,
        {
            "ids": [job_id for job_id, _ in pairs],
            "results": [json.dumps(result, default=str) for _, result in pairs],
            "worker_id": worker_id,
        },
    )
    return set(rows.scalars())


def fail(conn: sa.Connection, worker_id: str, failures: Iterable[tuple[str, JobError]]) -> set[str]:
    """Mark jobs failed with their failure class and structured error; the database decides on retries."""
    pairs = list(failures)
    if not pairs:
        return set()
    rows = conn.execute(
        FAIL,
        {
            "ids": [job_id for job_id, _ in pairs],
            "failure_classes": [error.failure_class.value for _, error in pairs],
            "results": [json.dumps({"error": error.to_error()}) for _, error in pairs],
            "worker_id": worker_id,
        },
    )
    return set(rows.scalars())


def reap_expired(conn: sa.Connection, limit: int = 10_000) -> list[str]:
    """Fail running jobs whose lease expired (failure class lease_expired); they are retried."""
    return [str(row.id) for row in conn.execute(REAP_EXPIRED, {"limit": limit})]


def release_run_jobs(conn: sa.Connection, run_id: str, run_status: str) -> list[str]:
    """Fail the running jobs that run ``run_id`` holds, as the lease reaper would; they are retried."""
    return [str(row.id) for row in conn.execute(RELEASE_RUN_JOBS, {"run_id": run_id, "run_status": run_status})]


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
        ENQUEUE,
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
    return [dict(row._mapping) for row in conn.execute(QUEUE_STATUS)]


def queue_by_priority(conn: sa.Connection) -> list[dict[str, Any]]:
    """Queued and running jobs per type and priority; ``oldest_queued_age_s`` is None when none is queued."""
    return [dict(row._mapping) for row in conn.execute(QUEUE_BY_PRIORITY)]


def permanent_failure_classes(conn: sa.Connection) -> set[FailureClass]:
    """The classes the database does not retry (processing.failure_classes)."""
    return {FailureClass(name) for name in conn.execute(PERMANENT_FAILURE_CLASSES).scalars()}


def dead_letter(
    conn: sa.Connection, *, job_type: str | None = None, failure_class: str | None = None, limit: int = 100
) -> list[dict[str, Any]]:
    """Jobs that failed for good and that no later job took up, newest first."""
    rows = conn.execute(DEAD_LETTER, {"type": job_type, "failure_class": failure_class, "limit": limit})
    return [dict(row._mapping) for row in rows]


class RetryRefused(Exception):
    """A retry that would not take up a failed job; the message says why."""


def retry(conn: sa.Connection, job_id: str, *, requested_by: str, reason: str) -> str:
    """Queue a manual job that takes up the failed job ``job_id``; returns the new job's id."""
    state = conn.execute(JOB_STATE, {"job_id": job_id}).first()
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
    new_id = conn.execute(RETRY, {"job_id": job_id, "requested_by": requested_by, "reason": reason}).scalar()
    if new_id is None:
        raise RetryRefused("the same work was queued meanwhile")
    return new_id


def archive_completed(conn: sa.Connection, older_than: timedelta, limit: int) -> int:
    """Move up to ``limit`` jobs completed longer than ``older_than`` ago to the archive; returns how many."""
    return conn.execute(ARCHIVE_COMPLETED, {"older_than_s": older_than.total_seconds(), "limit": limit}).scalar_one()


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
    return [dict(row._mapping) for row in conn.execute(FAILURES_BY_CLASS)]


__all__ = [
    "BatchHead",
    "ClaimedJob",
    "FailureClass",
    "JobError",
    "JobType",
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
    "retry",
]
