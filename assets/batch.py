"""What every job-table asset does in a run: work one batch of its job type, describe it once.

Per-job detail stays in our tables (step history, revisions); Dagster gets one materialization
per batch, since an event per entity would cap a run near 50–100 entities/s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import dagster as dg
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from orchestration import queue
from orchestration.settings import get_settings
from orchestration.worker import BatchAborted, BatchReport, Stage, run_batches

# The head of the batch a sensor requested the run for (queue.ClaimStart as text): the run's claim
# starts there.
BATCH_HEAD_TAG = "hreg/batch_head"
SAMPLE_ROWS = 10
TOUCHED_ENTITIES_SHOWN = 100

# Checks over what a batch wrote: each is (check name, description, SQL counting bad rows among
# the batch's entities given as :entity_ids).
BatchCheck = tuple[str, str, sa.TextClause]


def retry_policy_for(job_type: queue.JobType) -> dg.RetryPolicy:
    """Dagster's retries of a whole step mirror the job type's max_retries and backoff.

    They apply only when a step fails before it has claimed jobs (the database is unreachable,
    say). Once jobs are claimed, each job's retries belong to the database trigger alone, so
    that no failure is retried twice over.
    """
    return dg.RetryPolicy(
        max_retries=job_type.max_retries,
        delay=job_type.backoff_base_s,
        backoff=dg.Backoff.EXPONENTIAL,
        jitter=dg.Jitter.PLUS_MINUS,
    )


def _sample_table(report: BatchReport) -> dg.TableMetadataValue | None:
    rows = report.results[:SAMPLE_ROWS] or report.failure_samples[:SAMPLE_ROWS]
    if not rows:
        return None
    columns = sorted({key for row in rows for key in row})
    return dg.MetadataValue.table(
        records=[dg.TableRecord({c: _cell(row.get(c)) for c in columns}) for row in rows],
        schema=dg.TableSchema(columns=[dg.TableColumn(c, "string") for c in columns]),
    )


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def batch_metadata(report: BatchReport, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "job_type": report.job_type,
        "claimed": report.claimed,
        "completed": report.completed,
        "failed": report.failed,
        "lost_to_reaper": report.lost,
        "failures_by_class": dg.MetadataValue.json(dict(report.failures_by_class)),
        **{f"total_{key}": value for key, value in sorted(report.totals.items())},
        "seconds": round(report.seconds, 3),
        "jobs_per_s": round(report.claimed / report.seconds, 1) if report.seconds else 0.0,
        "entities_touched": len(set(report.entity_ids)),
        "entity_ids": dg.MetadataValue.json(sorted(set(report.entity_ids))[:TOUCHED_ENTITIES_SHOWN]),
    }
    table = _sample_table(report)
    if table is not None:
        metadata["sample"] = table
    if report.failure_samples:
        metadata["failure_samples"] = dg.MetadataValue.json(report.failure_samples)
    metadata.update(extra or {})
    return metadata


def run_checks(engine: Engine, checks: Sequence[BatchCheck], report: BatchReport, asset_key: dg.AssetKey):
    entity_ids = sorted(set(report.entity_ids))
    with engine.connect() as conn:
        for name, description, count_bad in checks:
            bad = conn.execute(count_bad, {"entity_ids": entity_ids}).scalar_one() if entity_ids else 0
            yield dg.AssetCheckResult(
                asset_key=asset_key,
                check_name=name,
                passed=bad == 0,
                severity=dg.AssetCheckSeverity.WARN,
                metadata={"violations": bad, "entities_checked": len(entity_ids), "rule": description},
            )


def work_batch(
    context: dg.AssetExecutionContext,
    engine: Engine,
    stage: Stage,
    *,
    limit: int | None = None,
    describe: Callable[[BatchReport], dict[str, Any]] | None = None,
) -> BatchReport:
    """Claim and work one batch as this run (worker id = run id); fail the step only when nothing succeeded."""
    # An error before the claim (database unreachable) propagates: no job was touched, so the
    # step's retry policy may retry it.
    head = context.run.tags.get(BATCH_HEAD_TAG)
    try:
        report = run_batches(
            engine,
            stage,
            context.run.run_id,
            max_batches=get_settings().max_batches_per_run,
            limit=limit,
            start=queue.ClaimStart.from_text(head) if head else None,
        )
    except BatchAborted as exc:
        # After the claim the jobs belong to the database's retries (through the lease reaper).
        raise dg.Failure(description=str(exc), allow_retries=False) from exc
    context.log.info(
        f"{report.job_type}: claimed {report.claimed}, completed {report.completed}, failed {report.failed} "
        f"({dict(report.failures_by_class)}) in {report.seconds:.2f}s"
    )
    if report.claimed and not report.completed and report.failed:
        # Every job failed: each is already reported and the database retries it (or holds it as
        # permanently failed), so this step must not be retried by Dagster as well.
        raise dg.Failure(
            description=f"all {report.failed} {report.job_type} jobs of this batch failed: {dict(report.failures_by_class)}",
            metadata=batch_metadata(report, describe(report) if describe else None),
            allow_retries=False,
        )
    return report
