"""The partitions of the parsed assets: the register court (orchestration.courts).

173 keys, however many companies the register holds: a person can ask for "München" (D2601) on
the Backfills page, and a parser change is one backfill over them.
"""

from __future__ import annotations

import math
from collections.abc import Generator, Sequence
from typing import Any

import dagster as dg
from dagster._core.definitions.data_version import CODE_VERSION_TAG
from sqlalchemy.engine import Engine

from assets.batch import BatchCheck, run_checks, work_batch
from assets.retries import retried_before_claim
from orchestration.courts import CourtSummary, register_courts, run_by_court
from orchestration.reparse import ReparseCourt, reparse_court
from orchestration.worker import BatchAborted, BatchReport, Stage

register_court_partitions_def = dg.StaticPartitionsDefinition(list(register_courts()))


def courts_per_backfill_run(run_workers: int) -> int:
    """Courts one backfill run re-parses at most: a backfill of every court makes two runs per
    run worker the run queue starts at once (8 with the default 4). Each run starts a process
    that loads the code (seconds of CPU) and waits for the run queue, so few runs keep that cost
    small against the work; two per worker let a worker whose courts were small take another run
    while a large court keeps the other busy."""
    return math.ceil(len(register_courts()) / (2 * run_workers))


def court_backfill_policy(run_workers: int) -> dg.BackfillPolicy:
    """Backfills of the court partitions, for a run queue that starts ``run_workers`` runs at once."""
    return dg.BackfillPolicy.multi_run(max_partitions_per_run=courts_per_backfill_run(run_workers))


def court_metadata(summary: CourtSummary, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a partition's materialization says: records parsed, revisions written, failures by class."""
    return {
        "court_name": register_courts().get(summary.court, ""),
        "records": summary.completed,
        "revisions_written": summary.written,
        "failed": summary.failed,
        "failures_by_class": dg.MetadataValue.json(dict(summary.failures_by_class)),
        **(extra or {}),
    }


def court_materialization(
    asset_key: dg.AssetKey, summary: CourtSummary, *, code_version: str | None = None, **extra: Any
) -> dg.AssetMaterialization:
    """The materialization of one court partition (never one per entity: each event costs ~10 ms).

    The code version tag is the one Dagster's own materializations carry: a partition whose newest
    materialization names another version shows as unsynced.
    """
    return dg.AssetMaterialization(
        asset_key=asset_key,
        partition=summary.court,
        metadata=court_metadata(summary, extra),
        tags={CODE_VERSION_TAG: code_version} if code_version else None,
    )


def reparse_courts(
    context: dg.AssetExecutionContext,
    engine: Engine,
    stage: Stage,
    asset_key: dg.AssetKey,
    code_version: str,
    checks: Sequence[BatchCheck],
    *,
    written: str,
    reparse: ReparseCourt = reparse_court,
) -> Generator[dg.AssetMaterialization | dg.AssetCheckResult, None, BatchReport]:
    """A backfill run: redo each of its courts with the current code, one materialization per court.

    A court with a failed job is not materialized, and the run fails once every court is done, so
    the Backfills page shows exactly those courts failed, ready to be re-executed. Returns what
    the run did over all its courts.
    """
    run_id = context.run.run_id
    touched = BatchReport(job_type=stage.job_type, worker_id=run_id)
    failed: list[CourtSummary] = []
    # The job type's row, read as the step starts; a failure before a court's jobs are claimed
    # retries the step as the row says.
    with retried_before_claim(context, engine, stage.job_type) as job_type:
        for court in context.partition_keys:
            try:
                result = reparse(
                    engine,
                    stage,
                    run_id,
                    court,
                    parser_version=code_version,
                    batch_size=job_type.batch_size,
                    lease_seconds=job_type.lease_seconds,
                )
            except BatchAborted as exc:
                raise dg.Failure(description=f"court {court}: {exc}", allow_retries=False) from exc
            touched.absorb(result.report)
            summary = CourtSummary.of_report(court, result.report, written)
            context.log.info(
                f"court {court}: {summary.completed} re-parsed, {summary.written} written, failed "
                f"{dict(summary.failures_by_class)}, {result.held_elsewhere} held by other workers"
            )
            if summary.failed:
                failed.append(summary)
            else:
                yield court_materialization(
                    asset_key,
                    summary,
                    code_version=code_version,
                    parser_version=code_version,
                    held_by_other_workers=result.held_elsewhere,
                    seconds=round(result.report.seconds, 2),
                )
    yield from run_checks(engine, checks, touched, asset_key)
    if failed:
        raise dg.Failure(
            description=f"{len(failed)} of {len(context.partition_keys)} courts have failed jobs: "
            + "; ".join(f"{s.court} {dict(s.failures_by_class)}" for s in failed),
            metadata={s.court: dg.MetadataValue.json(dict(s.failures_by_class)) for s in failed},
            allow_retries=False,
        )
    return touched


def work_queue_by_court(
    context: dg.AssetExecutionContext,
    engine: Engine,
    stage: Stage,
    asset_key: dg.AssetKey,
    code_version: str | None,
    checks: Sequence[BatchCheck],
    *,
    written: str,
    max_batches: int,
) -> Generator[dg.AssetMaterialization | dg.AssetCheckResult, None, BatchReport]:
    """A run without a partition (the sensor's): batches of due jobs, then one materialization per
    court that a completed job touched, so each partition's status stays true. Returns the batches'
    report."""
    report = work_batch(context, engine, stage, max_batches=max_batches)
    with engine.connect() as conn:
        summaries = run_by_court(conn, context.run.run_id, stage.job_type, written)
    courts = register_courts()
    for summary in sorted(summaries.values(), key=lambda s: s.court):
        if summary.court not in courts:
            context.log.warning(f"{summary.completed} jobs of court {summary.court!r}, which is no register court")
        elif summary.completed:
            yield court_materialization(asset_key, summary, code_version=code_version, parser_version=code_version)
    yield from run_checks(engine, checks, report, asset_key)
    return report
