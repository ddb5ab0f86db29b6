"""What the sensor of a job type (orchestration.jobs.specs) runs: a job over the asset its jobs
feed, or, for an asset that a run spanning courts cannot be a step of, the queue's batches as one
op, built here from what the asset's module says a queue run does (its ``QueueWork``)."""

import inspect
from collections.abc import Callable, Generator
from typing import Any

import dagster as dg
from sqlalchemy.engine import Engine

from assets.batch import as_op_events
from assets.court_reporting import ParsedCourts
from orchestration.jobs.specs import JobTypeSpec
from orchestration.runtime.worker import BatchReport
from resources.database import DatabaseResource
from resources.job_queue import JobQueueResource
from resources.stages import StagesResource

# A queue run's work: given the run, the database, the stages, the job type and the batches it
# may work, it yields the run's events and returns its report. Its name names the op, its
# docstring describes it.
QueueWork = Callable[
    [dg.OpExecutionContext, Engine, StagesResource, JobTypeSpec, int], Generator[Any, None, BatchReport]
]


def parsed_courts(spec: JobTypeSpec, asset_key: dg.AssetKey, documents_key: dg.AssetKey) -> ParsedCourts:
    """The court-partitioned asset ``asset_key``, parsed from ``documents_key`` as ``spec`` says."""
    if spec.courts is None or spec.version is None:
        raise ValueError(f"{spec.name} parses no court-partitioned asset")
    courts = spec.courts
    return ParsedCourts(
        asset_key, documents_key, spec.version, courts.queries, spec.checks, courts.written, courts.redo
    )


def queue_op(spec: JobTypeSpec, work: QueueWork) -> dg.OpDefinition:
    """The op of a queue run of ``spec``'s jobs: ``work`` with the job type's stage."""

    @dg.op(name=work.__name__, out={}, description=inspect.getdoc(work))
    def from_the_queue(
        context: dg.OpExecutionContext,
        database: DatabaseResource,
        stages: StagesResource,
        job_queue: JobQueueResource,
    ):
        yield from as_op_events(work(context, database.get_engine(), stages, spec, job_queue.max_batches_per_run))

    return from_the_queue


# Returns a job, or an asset job Dagster resolves when the code location loads (a type it does not export).
def sensor_job(spec: JobTypeSpec, runs: dg.AssetsDefinition | QueueWork, executor: dg.ExecutorDefinition):
    """The job ``spec``'s sensor runs over a batch of due jobs: ``runs``, an asset or a queue run.

    A court-partitioned asset whose input is court-partitioned cannot be a step of a run without a
    partition (Dagster reads the input's data versions for the run's partitions), and a queue run
    spans courts. Its op reports the materializations, observations and checks of the courts it
    touched, as the asset does in a backfill."""
    name = f"{spec.name}_job"
    tags = {"hreg/job_type": spec.name}
    description = f"Works one batch of due {spec.name} jobs."
    if isinstance(runs, dg.AssetsDefinition):
        return dg.define_asset_job(
            name=name,
            selection=dg.AssetSelection.assets(runs),
            executor_def=executor,
            tags=tags,
            description=description,
        )
    op = queue_op(spec, runs)

    @dg.job(name=name, executor_def=executor, tags=tags, description=description)
    def work_the_queue():
        op()

    return work_the_queue
