"""What every job-table asset does in a run: work one batch of its job type, describe it once.

Per-job detail stays in our tables (step history, revisions); Dagster gets one materialization
per batch, since an event per entity would cap a run near 50–100 entities/s.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any

import dagster as dg
from sqlalchemy.engine import Engine

from assets.retries import retried_before_claim
from orchestration.db import queries
from orchestration.jobs.checks import BatchCheck
from orchestration.runtime import queue
from orchestration.runtime.worker import BatchAborted, BatchReport, Stage, run_batches

# The head of the batch a sensor requested the run for (queue.ClaimStart as text): the run's claim
# starts there.
BATCH_HEAD_TAG = "hreg/batch_head"
SAMPLE_ROWS = 10
TOUCHED_ENTITIES_SHOWN = 100

CHECK_QUERIES = queries.load("batch_checks")


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


def check_specs(checks: Sequence[BatchCheck], asset_key: dg.AssetKey) -> list[dg.AssetCheckSpec]:
    return [dg.AssetCheckSpec(check.name, asset=asset_key, description=check.description) for check in checks]


def run_checks(engine: Engine, checks: Sequence[BatchCheck], report: BatchReport, asset_key: dg.AssetKey):
    entity_ids = sorted(set(report.entity_ids))
    with engine.connect() as conn:
        for check in checks:
            parameters = {**check.parameters, "entity_ids": entity_ids}
            bad = conn.execute(CHECK_QUERIES[check.query], parameters).scalar_one() if entity_ids else 0
            yield dg.AssetCheckResult(
                asset_key=asset_key,
                check_name=check.name,
                passed=bad == 0,
                severity=dg.AssetCheckSeverity.WARN,
                metadata={"violations": bad, "entities_checked": len(entity_ids), "rule": check.description},
            )


def work_batch(
    context: dg.AssetExecutionContext | dg.OpExecutionContext,
    engine: Engine,
    stage: Stage,
    *,
    max_batches: int,
    limit: int | None = None,
    describe: Callable[[BatchReport], dict[str, Any]] | None = None,
) -> BatchReport:
    """Claim and work up to ``max_batches`` batches as this run (worker id = run id), from the head
    of the batch its sensor requested it for; fail the step only when nothing succeeded."""
    head = context.run.tags.get(BATCH_HEAD_TAG)
    # An error before the claim (database unreachable) is retried as the job type's row says: no
    # job was touched.
    with retried_before_claim(context, engine, stage.job_type):
        try:
            report = run_batches(
                engine,
                stage,
                context.run.run_id,
                max_batches=max_batches,
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


def as_op_events(events: Generator[Any, None, BatchReport]) -> Generator[Any, None, BatchReport]:
    """The events of a queue run as an op (not an asset step) may yield them, check results as the
    evaluations Dagster records for them; returns the run's report."""
    while True:
        try:
            event = next(events)
        except StopIteration as done:
            return done.value
        if isinstance(event, dg.AssetCheckResult):
            # run_checks names both: an op has no asset to infer them from.
            assert event.asset_key is not None and event.check_name is not None
            event = dg.AssetCheckEvaluation(
                asset_key=event.asset_key,
                check_name=event.check_name,
                passed=event.passed,
                severity=event.severity,
                metadata=event.metadata,
            )
        yield event
