"""Dagster's retries of a step that fails before it has claimed jobs, as processing.job_types says.

The row is read when the step starts, not when the code location loads: the location loads
without the database, and a changed max_retries or backoff applies to the next run. Once jobs
are claimed, each job's retries belong to the database trigger (handle_job_failure_and_retries)
alone, so that no failure is retried twice over.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from orchestration.db.problems import database_problem
from orchestration.runtime import queue
from orchestration.runtime.worker import BatchAborted

# The retry settings of the row as the sensor read it when it requested the run: what a step
# retries by when the database is unreachable at its start and the row cannot be read.
RETRY_TAG = "hreg/retry"


def retry_tags(job_type: queue.JobType) -> dict[str, str]:
    return {
        RETRY_TAG: json.dumps(
            {
                "max_retries": job_type.max_retries,
                "backoff_base_s": job_type.backoff_base_s,
                "backoff_cap_s": job_type.backoff_cap_s,
            }
        )
    }


def retry_request(
    max_retries: int, backoff_base_s: float, backoff_cap_s: float, retry_number: int
) -> dg.RetryRequested:
    """A retry after the backoff the database trigger gives a job: exponential, capped, jittered."""
    delay_s = min(backoff_cap_s, backoff_base_s * 2**retry_number) * random.uniform(0.5, 1.0)
    return dg.RetryRequested(max_retries=max_retries, seconds_to_wait=delay_s)


@contextmanager
def retried_before_claim(
    context: dg.AssetExecutionContext | dg.OpExecutionContext, engine: Engine, job_type: str
) -> Iterator[queue.JobType]:
    """Yields the job type's row; a failure in the block, other than one after the claim
    (BatchAborted, or a Failure that forbids retries), is retried as the row says."""
    try:
        with engine.connect() as conn:
            row = queue.job_types(conn)[job_type]
    except sa.exc.SQLAlchemyError as exc:
        problem = database_problem(exc) or f"{type(exc).__name__}: {exc}"
        tagged = context.run.tags.get(RETRY_TAG)
        if tagged is None:
            raise dg.Failure(description=f"cannot read processing.job_types: {problem}", allow_retries=False) from exc
        context.log.warning(f"cannot read processing.job_types ({problem}); retrying as the sensor's tick read it")
        raise retry_request(**json.loads(tagged), retry_number=context.retry_number) from exc
    try:
        yield row
    except (BatchAborted, dg.Failure, dg.RetryRequested):
        raise
    except Exception as exc:
        raise retry_request(row.max_retries, row.backoff_base_s, row.backoff_cap_s, context.retry_number) from exc
