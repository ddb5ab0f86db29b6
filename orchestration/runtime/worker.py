"""Runs one batch of jobs of one type: claim, keep the leases alive, process, report each job.

This is what a Dagster run does for its asset, and what the plain loop of the benchmarks does;
it knows nothing of Dagster. A stage processes a chunk of claimed jobs inside one transaction
and returns an outcome per job; the outcomes are reported in that same transaction, so the
content a job wrote and its completion commit together. A job whose processing raised is rolled
back to its savepoint and failed on its own: one bad job never fails the rest of the batch.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import httpx
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from orchestration.runtime import queue
from orchestration.runtime.failures import FailureClass, JobError
from orchestration.runtime.periodic import Periodic
from orchestration.runtime.queue import ClaimedJob, ClaimStart, Outcome

if TYPE_CHECKING:
    from orchestration.jobs.specs import JobTypeSpec

log = logging.getLogger(__name__)


class Stage(ABC):
    """The work of one job type, as its spec (orchestration.jobs.specs) declares it. Subclasses
    implement ``process_chunk``."""

    def __init__(self, spec: JobTypeSpec) -> None:
        self.spec = spec

    @property
    def job_type(self) -> str:
        return self.spec.name

    @property
    def chunk_size(self) -> int:
        return self.spec.chunk_size

    def prefetch(self, engine: Engine, jobs: list[ClaimedJob]) -> None:  # noqa: B027 - optional, most stages fetch nothing
        """Work done before the chunk's transaction opens: register retrievals, whose rate-limit
        waits must hold no transaction (see RetrievingStage). Errors belong to each job's outcome
        in ``process_chunk``."""

    @abstractmethod
    def process_chunk(self, conn: sa.Connection, jobs: list[ClaimedJob]) -> dict[str, Outcome]:
        """Process ``jobs``; return each job's result dict or JobError, keyed by job id."""


def each_job(
    conn: sa.Connection, jobs: list[ClaimedJob], process: Callable[[ClaimedJob], dict[str, Any]]
) -> dict[str, Outcome]:
    """Run ``process`` per job under a savepoint, turning any exception into that job's JobError."""
    outcomes: dict[str, Outcome] = {}
    for job in jobs:
        savepoint = conn.begin_nested()
        try:
            outcomes[job.id] = process(job)
            savepoint.commit()
        except Exception as exc:  # every error becomes the job's outcome
            savepoint.rollback()
            outcomes[job.id] = classify_exception(exc)
    return outcomes


class RetrievingStage(Stage):
    """A stage whose jobs retrieve (from the register) before they write: ``fetch`` runs per job
    before the chunk's transaction opens, so that waiting for the shared rate limit or a slow
    portal holds no transaction; ``record`` then writes what was fetched, in the transaction."""

    def __init__(self, spec: JobTypeSpec) -> None:
        super().__init__(spec)
        self._fetched: dict[str, Any] = {}

    @abstractmethod
    def fetch(self, engine: Engine, job: ClaimedJob) -> Any:
        """The job's retrievals; may read the database in short transactions of its own."""

    @abstractmethod
    def record(self, conn: sa.Connection, job: ClaimedJob, fetched: Any) -> dict[str, Any]:
        """Write what ``fetch`` returned; returns the job's result."""

    def prefetch(self, engine: Engine, jobs: list[ClaimedJob]) -> None:
        for job in jobs:
            try:
                self._fetched[job.id] = self.fetch(engine, job)
            except Exception as exc:  # every error becomes the job's outcome
                self._fetched[job.id] = classify_exception(exc)

    def process_chunk(self, conn: sa.Connection, jobs: list[ClaimedJob]) -> dict[str, Outcome]:
        return each_job(conn, jobs, lambda job: self._record(conn, job))

    def _record(self, conn: sa.Connection, job: ClaimedJob) -> dict[str, Any]:
        fetched = self._fetched.pop(job.id)
        if isinstance(fetched, JobError):
            raise fetched
        return self.record(conn, job, fetched)


def classify_exception(exc: BaseException) -> JobError:
    """The failure class of an error that was not raised as a JobError."""
    if isinstance(exc, JobError):
        return exc
    if isinstance(exc, (httpx.TimeoutException, TimeoutError)):
        return JobError(FailureClass.TIMEOUT, f"timed out: {exc}", source=type(exc).__name__)
    if isinstance(exc, (httpx.TransportError, sa.exc.OperationalError, ConnectionError)):
        return JobError(FailureClass.DEPENDENCY_UNAVAILABLE, f"{type(exc).__name__}: {exc}", source=type(exc).__name__)
    # A bug or an input our code does not handle: retrying the same code cannot help.
    return JobError(FailureClass.PARSER_ERROR, f"unexpected {type(exc).__name__}: {exc}", source=type(exc).__name__)


@dataclass
class BatchReport:
    """What one batch did, for the run's metadata and the benchmarks."""

    job_type: str
    worker_id: str
    claimed: int = 0
    completed: int = 0
    failed: int = 0
    lost: int = 0  # reported too late: the lease had expired and the reaper took the job
    failures_by_class: Counter = field(default_factory=Counter)
    failure_samples: list[dict[str, Any]] = field(default_factory=list)
    # Sums of the numbers (and counts of the true flags) in completed jobs' results.
    totals: Counter = field(default_factory=Counter)
    entity_ids: list[str] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    SAMPLE_LIMIT: ClassVar[int] = 20

    def absorb(self, other: BatchReport) -> None:
        """Add another batch of the same worker to this report."""
        self.claimed += other.claimed
        self.completed += other.completed
        self.failed += other.failed
        self.lost += other.lost
        self.failures_by_class.update(other.failures_by_class)
        self.failure_samples.extend(other.failure_samples[: self.SAMPLE_LIMIT - len(self.failure_samples)])
        self.results.extend(other.results[: self.SAMPLE_LIMIT - len(self.results)])
        self.totals.update(other.totals)
        self.entity_ids.extend(other.entity_ids)
        self.seconds += other.seconds

    def record(self, job: ClaimedJob, outcome: Outcome) -> None:
        if job.entity_id:
            self.entity_ids.append(job.entity_id)
        if isinstance(outcome, JobError):
            self.failed += 1
            self.failures_by_class[outcome.failure_class.value] += 1
            if len(self.failure_samples) < self.SAMPLE_LIMIT:
                self.failure_samples.append({"job_id": job.id, "attempt": job.attempt, **outcome.to_error()})
        else:
            self.completed += 1
            self.totals.update({k: int(v) for k, v in outcome.items() if isinstance(v, (bool, int))})
            if len(self.results) < self.SAMPLE_LIMIT:
                self.results.append({"job_id": job.id, **outcome})


class LeaseKeeper(Periodic):
    """Extends the leases of the jobs a worker holds, from a background thread, until stopped."""

    def __init__(self, engine: Engine, worker_id: str, lease_seconds: int) -> None:
        # Extend well before expiry: a third of the lease leaves two chances to fail.
        super().__init__(lease_seconds / 3, name=f"lease-keeper-{worker_id}")
        self._engine = engine
        self._worker_id = worker_id
        self._lease_seconds = lease_seconds
        self._held: set[str] = set()
        self._lock = threading.Lock()

    def hold(self, job_ids: list[str]) -> None:
        with self._lock:
            self._held.update(job_ids)

    def release(self, job_ids: list[str]) -> None:
        with self._lock:
            self._held.difference_update(job_ids)

    def tick(self) -> None:
        with self._lock:
            held = list(self._held)
        if not held:
            return
        try:
            with self._engine.begin() as conn:
                queue.extend_leases(conn, held, self._worker_id, self._lease_seconds)
        except sa.exc.SQLAlchemyError:
            log.warning("could not extend leases of %d jobs; retrying", len(held), exc_info=True)


class BatchAborted(Exception):
    """The batch broke off after claiming: its unreported jobs are left to the lease reaper."""

    def __init__(self, unreported: list[str], cause: BaseException) -> None:
        super().__init__(
            f"batch aborted by {type(cause).__name__}: {cause}; {len(unreported)} claimed jobs are left "
            "to the lease reaper, which re-queues them as lease_expired"
        )
        self.unreported = unreported


def chunks(jobs: list[ClaimedJob], size: int) -> Iterator[list[ClaimedJob]]:
    for start in range(0, len(jobs), size):
        yield jobs[start : start + size]


def run_batch(
    engine: Engine,
    stage: Stage,
    worker_id: str,
    *,
    limit: int | None = None,
    lease_seconds: int | None = None,
    start: ClaimStart | None = None,
) -> BatchReport:
    """Claim up to ``limit`` due jobs of the stage's type (default: its batch size), from ``start`` in
    claim order when given (see queue.claim), process and report them."""
    started = time.monotonic()
    with engine.begin() as conn:
        job_type = queue.job_types(conn)[stage.job_type]
        jobs = queue.claim(
            conn,
            stage.job_type,
            limit or job_type.batch_size,
            worker_id,
            lease_seconds or job_type.lease_seconds,
            background_slots=job_type.background_slots,
            start=start,
        )
    return work_claimed(engine, stage, worker_id, jobs, lease_seconds or job_type.lease_seconds, started=started)


def work_claimed(
    engine: Engine,
    stage: Stage,
    worker_id: str,
    jobs: list[ClaimedJob],
    lease_seconds: int,
    *,
    started: float | None = None,
    before_chunk: Callable[[], None] | None = None,
) -> BatchReport:
    """Process and report jobs this worker has claimed, keeping their leases alive meanwhile;
    ``before_chunk`` is called before each chunk (a backfill gives way to people there)."""
    started = time.monotonic() if started is None else started
    report = BatchReport(job_type=stage.job_type, worker_id=worker_id, claimed=len(jobs))
    if not jobs:
        return report
    unreported = [job.id for job in jobs]
    with LeaseKeeper(engine, worker_id, lease_seconds) as leases:
        leases.hold(unreported)
        for chunk in chunks(jobs, stage.chunk_size):
            try:
                if before_chunk is not None:
                    before_chunk()
                report_chunk(engine, stage, worker_id, chunk, report)
            except Exception as exc:
                raise BatchAborted(unreported, exc) from exc
            done = [job.id for job in chunk]
            leases.release(done)
            unreported = unreported[len(done) :]
    report.seconds = time.monotonic() - started
    return report


def report_chunk(engine: Engine, stage: Stage, worker_id: str, chunk: list[ClaimedJob], report: BatchReport) -> None:
    stage.prefetch(engine, chunk)
    with engine.begin() as conn:
        outcomes = stage.process_chunk(conn, chunk)
        reported = queue.report(conn, worker_id, outcomes.items())
    for job in chunk:
        if job.id in reported:
            report.record(job, outcomes[job.id])
        else:
            # The lease expired and the reaper re-queued the job before we reported it. Its writes
            # stand: they are keyed by source record and content, so the rerun repeats them harmlessly.
            report.lost += 1
            log.warning("job %s was reaped before it was reported", job.id)


def run_batches(
    engine: Engine,
    stage: Stage,
    worker_id: str,
    *,
    max_batches: int,
    limit: int | None = None,
    start: ClaimStart | None = None,
) -> BatchReport:
    """Work batch after batch until the queue has no due job of the type, or ``max_batches`` are done.

    The first batch is claimed from ``start`` (the head of the batch the run was requested for),
    the later ones from the queue's head. A run that keeps claiming while work is due spreads its
    start-up cost over many batches.
    """
    report = BatchReport(job_type=stage.job_type, worker_id=worker_id)
    for number in range(max_batches):
        batch = run_batch(engine, stage, worker_id, limit=limit, start=start if number == 0 else None)
        report.absorb(batch)
        if batch.claimed == 0:
            break
    return report
