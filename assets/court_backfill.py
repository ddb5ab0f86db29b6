"""A backfill run over court partitions: each of its courts redone with the current code and
reported once done, the backfill's other runs helped with theirs, and what other workers hold
waited for."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from datetime import datetime

import dagster as dg
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from assets.batch import run_checks
from assets.court_partitions import courts_of_other_runs
from assets.court_reporting import CourtEvent, ParsedCourts, court_events, documents_brought_up_to_date
from assets.retries import retried_before_claim
from orchestration.records.court_state import court_failures, court_states, document_fingerprints
from orchestration.records.courts import CourtSummary
from orchestration.records.reparse import CourtReparse, reparse_court
from orchestration.runtime import queue
from orchestration.runtime.worker import BatchAborted, BatchReport, Stage

# How often a backfill run looks again at a court that was not current once it had worked it.
HELD_POLL_SECONDS = 1.0


@dataclass
class PendingCourt:
    """A court the run has worked and not reported yet: what it did there, and the most of its
    companies that other workers held at once."""

    result: CourtReparse
    held_before: int


@dataclass
class CourtBackfillRun:
    """One backfill run over its courts (the run's partition keys), its state what it has done."""

    context: dg.AssetExecutionContext
    engine: Engine
    stage: Stage
    parsed: ParsedCourts
    # The job type's row, read as the step starts.
    job_type: queue.JobType
    # A document that failed for good from this time on is not tried again by this run.
    since: datetime
    give_way_seconds: float
    # Everything the run parsed, in its own courts and helping others: what its checks look at.
    touched: BatchReport = field(init=False)
    # The run's courts' documents as Dagster knows them: court -> storage id and data version of
    # their newest event.
    known_documents: dict[str, tuple] = field(default_factory=dict)
    pending: dict[str, PendingCourt] = field(default_factory=dict)
    failed: list[CourtSummary] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.touched = BatchReport(job_type=self.stage.job_type, worker_id=self.context.run.run_id)

    def work(self, fingerprints: dict[str, str]) -> Iterator[CourtEvent]:
        """Work the run's courts (whose documents have ``fingerprints``), then help the backfill's
        other runs, then wait for what other workers hold of its courts."""
        # Brought up to date once for all of the run's courts: reported court by court, those of
        # a first backfill cost four event-log queries each.
        yield from documents_brought_up_to_date(self.context, self.parsed, fingerprints, self.known_documents)
        for court in self.context.partition_keys:
            result = self.redo(court)
            self.pending[court] = PendingCourt(result, result.held_elsewhere)
            yield from self.report_if_done(court)
        self.help_other_runs()
        yield from self.wait_for_pending()

    def redo(self, court: str, *, backward: bool = False) -> CourtReparse:
        try:
            result = reparse_court(
                self.engine,
                self.stage,
                self.context.run.run_id,
                court,
                redo=self.parsed.redo,
                parser_version=self.parsed.code_version,
                batch_size=self.job_type.batch_size,
                lease_seconds=self.job_type.lease_seconds,
                # A helper leaves every failed document to the court's owner: the owner tries
                # a failure from before its run once more, and reports the court failed on one since.
                since=None if backward else self.since,
                backward=backward,
                give_way_seconds=self.give_way_seconds,
            )
        except BatchAborted as exc:
            raise dg.Failure(description=f"court {court}: {exc}", allow_retries=False) from exc
        self.touched.absorb(result.report)
        return result

    def report_if_done(self, court: str) -> Iterator[CourtEvent]:
        """Report the court once it is done: every company current, or failed for good since
        the run began, by any worker (this run's failures and those of runs that helped it).
        Until then it stays pending: other workers are parsing some of its companies (a
        person's open), or documents were stored there while the run worked it."""
        pending = self.pending[court]
        parsed = self.parsed
        with self.engine.connect() as conn:
            states = court_states(conn, parsed.queries, [court], parsed.code_version)
            failures = (
                Counter()
                if states[court].current
                else court_failures(conn, parsed.queries, [court], parsed.code_version, self.since)[court]
            )
        if states[court].unfinished > failures.total():
            return
        del self.pending[court]
        report = pending.result.report
        summary = CourtSummary(court, report.completed, report.totals[parsed.written], failures)
        # A log line is an event of its own (tens of milliseconds in the event log); a court's
        # materialization carries its figures, so only what needs a person's eye is logged.
        if summary.failed or pending.held_before:
            self.context.log.info(
                f"court {court}: {summary.completed} re-parsed, {summary.written} written, failed "
                f"{dict(summary.failures_by_class)}, {pending.held_before} parsed by other workers"
            )
        if summary.failed:
            self.failed.append(summary)
            return
        extra = {
            "parser_version": parsed.code_version,
            "held_by_other_workers": pending.held_before,
            "seconds": round(report.seconds, 2),
        }
        yield from court_events(
            self.context,
            self.engine,
            parsed,
            [summary],
            {court: extra},
            known_documents=self.known_documents,
            states=states,
        )

    def help_other_runs(self) -> None:
        """Done with its own courts, the run helps the backfill's other runs with theirs: each from
        its last company backward, until it meets that run's own progress. Those runs report
        their courts; the companies parsed here count in this run's checks."""
        helped: dict[str, int] = {}
        for courts in courts_of_other_runs(self.context):
            for court in reversed(courts):
                help_given = self.redo(court, backward=True)
                if help_given.report.claimed:
                    helped[court] = help_given.report.claimed
                if help_given.caught_up:
                    break
        if helped:
            self.context.log.info(
                f"helped the backfill's other runs: {sum(helped.values())} companies of {len(helped)} courts"
            )

    def wait_for_pending(self) -> Iterator[CourtEvent]:
        """The run takes up what the other workers leave (a failure re-queued, a document stored
        meanwhile); a worker that never reports loses its jobs to the reaper after its lease."""
        deadline = time.monotonic() + self.job_type.lease_seconds + queue.REAPER_INTERVAL_SECONDS
        while self.pending and time.monotonic() < deadline:
            time.sleep(HELD_POLL_SECONDS)
            for court in list(self.pending):
                pending = self.pending[court]
                again = self.redo(court)
                pending.result.report.absorb(again.report)
                pending.held_before = max(pending.held_before, again.held_elsewhere)
                yield from self.report_if_done(court)

    def failure(self) -> dg.Failure | None:
        """The run's failure when some of its courts are not done, naming them."""
        if not (self.failed or self.pending):
            return None
        problems = [f"{s.court} {dict(s.failures_by_class)}" for s in self.failed] + [
            f"{court} (companies not parsed by this version, {pending.held_before} held by other workers)"
            for court, pending in self.pending.items()
        ]
        return dg.Failure(
            description=f"{len(problems)} of {len(self.context.partition_keys)} courts are not done: "
            + "; ".join(problems),
            metadata={s.court: dg.MetadataValue.json(dict(s.failures_by_class)) for s in self.failed},
            allow_retries=False,
        )


def reparse_courts(
    context: dg.AssetExecutionContext,
    engine: Engine,
    stage: Stage,
    parsed: ParsedCourts,
    *,
    give_way_seconds: float = 0,
) -> Generator[CourtEvent, None, BatchReport]:
    """A backfill run: redo each of its courts with the current code, one materialization per court.

    A court with a failed job is not materialized, and the run fails once every court is done, so
    the Backfills page shows exactly those courts failed, ready to be re-executed. A court that is
    not current once worked (other workers are parsing some of its companies, as a person's run
    does, or a document was stored there meanwhile) is reported once it is: the run takes up what
    is left (a failure re-queued, a new document's job), and waits at most a lease and one reaper
    interval, after which a worker that never reported has lost its jobs to the reaper. Before
    each chunk of its work, the run gives way to people's work for up to ``give_way_seconds``.
    Returns what the run did over all its courts.
    """
    # A failure before a court's jobs are claimed retries the step as the job type's row says.
    with retried_before_claim(context, engine, stage.job_type) as job_type:
        with engine.connect() as conn:
            since = conn.execute(sa.select(sa.func.now())).scalar_one()
            fingerprints = document_fingerprints(conn, parsed.queries.document_fingerprints, context.partition_keys)
        run = CourtBackfillRun(context, engine, stage, parsed, job_type, since, give_way_seconds)
        yield from run.work(fingerprints)
    yield from run_checks(engine, parsed.checks, run.touched, parsed.asset_key)
    failure = run.failure()
    if failure is not None:
        raise failure
    return run.touched
