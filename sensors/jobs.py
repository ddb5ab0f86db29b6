"""One sensor per job type: poll the due queued jobs and request runs over batches.
A tick only reads the queue; the runs claim and work the jobs. The run key is the identity of a
batch (the id, attempt and due time of its first job), so a duplicated tick, or a tick that
comes before the last requested run has claimed its batch, requests nothing new; a batch still
due after its run ended is requested again under a new key. The batch head
tag tells the run where its batch starts, and the run's claim starts there. Runs in flight
are counted, so that a deep queue never floods the daemon.
"""

import json
from collections.abc import Mapping

import dagster as dg

from assets.batch import BATCH_HEAD_TAG
from assets.retries import retry_tags
from orchestration.jobs.specs import JobTypeSpec
from orchestration.runtime import queue
from resources.database import DatabaseResource
from resources.job_queue import JobQueueResource
from sensors.database import skip_while_database_unavailable

IN_FLIGHT = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]
JOB_TYPE_TAG = "hreg/job_type"
RUN_KEY_TAG = "dagster/run_key"
# The run queue starts runs of higher priority first (Dagster's default is 0, which background
# runs and backfill runs keep): a person's batch goes ahead of them.
PRIORITY_TAG = "dagster/priority"
RUN_PRIORITY = {"interactive": "10", "background": "0"}


def build_job_sensor(spec: JobTypeSpec, job, versions: Mapping[str, str]) -> dg.SensorDefinition:
    """The sensor of ``spec``'s jobs, which requests runs of ``job`` while the database names the
    parser ``versions`` the code location deploys."""
    job_type = spec.name

    @dg.sensor(
        name=f"{job_type}_sensor",
        job=job,
        minimum_interval_seconds=spec.sensor_interval_seconds,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description=f"Requests runs of {job.name} over batches of due {job_type} jobs "
        "(batch size from processing.job_types).",
    )
    @skip_while_database_unavailable
    def job_sensor(context: dg.SensorEvaluationContext, database: DatabaseResource, job_queue: JobQueueResource):
        max_in_flight = job_queue.max_runs_in_flight
        in_flight = context.instance.get_runs_count(dg.RunsFilter(job_name=job.name, statuses=IN_FLIGHT))
        room = max_in_flight - in_flight
        if room <= 0:
            return dg.SkipReason(f"{in_flight} {job.name} runs in flight (limit {max_in_flight}); waiting for them")
        engine = database.get_engine()
        # Checked at each tick, not when the location loads (which needs no database): runs of
        # this code against an older schema would fail inside the run. Imported here: Alembic adds
        # a third of a second to the start of every run's process, which loads this module.
        from orchestration.db.migrate import schema_behind

        behind = schema_behind(engine, versions)
        if behind:
            return dg.SkipReason(
                f"{behind}: run `hreg db upgrade` against this database; no runs are requested until then"
            )
        with engine.connect() as conn:
            row = queue.job_types(conn)[job_type]
            heads = queue.batch_heads(conn, job_type, row.batch_size, room, background_slots=row.background_slots)
        if not heads:
            return dg.SkipReason(f"no due {job_type} jobs")
        batches = {f"{job_type}:{head.key}": head for head in heads}
        requested = json.loads(context.cursor).get("run_keys", {}) if context.cursor else {}
        run_keys = {batch: _run_key(context.instance, job.name, batch, requested.get(batch)) for batch in batches}
        context.update_cursor(json.dumps({"run_keys": run_keys}))
        new = [batch for batch, run_key in run_keys.items() if run_key != requested.get(batch)]
        if not new:
            return dg.SkipReason(f"the {len(batches)} due batches of {job_type} are already requested")
        return [
            dg.RunRequest(
                run_key=run_keys[batch],
                tags={
                    JOB_TYPE_TAG: job_type,
                    BATCH_HEAD_TAG: batches[batch].start.to_text(),
                    PRIORITY_TAG: RUN_PRIORITY[batches[batch].priority],
                    **retry_tags(row),
                },
            )
            for batch in new
        ]

    return job_sensor


def _run_key(instance: dg.DagsterInstance, job_name: str, batch: str, requested: str | None) -> str:
    """The run key for a due batch: the batch itself when it was not requested yet, the run key
    already requested while that run may still take it, and a new one once that run has ended
    with the batch still due (its launch failed, or it ended before its claim): otherwise the
    batch would wait for good, since Dagster never starts a run key twice."""
    if requested is None:
        return batch
    (run,) = instance.get_runs(dg.RunsFilter(job_name=job_name, tags={RUN_KEY_TAG: requested}), limit=1) or (None,)
    if run is None or run.status in IN_FLIGHT:
        return requested
    launches = int(requested.rpartition("#")[2]) if "#" in requested else 1
    return f"{batch}#{launches + 1}"


@dg.sensor(
    name="lease_reaper_sensor",
    minimum_interval_seconds=queue.REAPER_INTERVAL_SECONDS,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Fails running jobs whose lease expired (failure class lease_expired), so that the "
    "database re-queues them: the jobs of a run that crashed or was cancelled.",
)
@skip_while_database_unavailable
def lease_reaper_sensor(context: dg.SensorEvaluationContext, database: DatabaseResource):
    # A single UPDATE on the lease index; bookkeeping, not job work, so it runs in the tick.
    with database.get_engine().begin() as conn:
        reaped = queue.reap_expired(conn)
    if reaped:
        context.log.warning(f"reaped {len(reaped)} jobs with expired leases: {reaped[:20]}")
    return dg.SkipReason(f"reaped {len(reaped)} expired leases")


def _release_jobs_of(context: dg.RunStatusSensorContext, database: DatabaseResource) -> None:
    run = context.dagster_run
    with database.get_engine().begin() as conn:
        released = queue.release_run_jobs(conn, run.run_id, run.status.value)
    if released:
        context.log.warning(f"run {run.run_id} ended {run.status.value}: released {len(released)} jobs {released[:20]}")


@dg.run_failure_sensor(
    name="failed_run_jobs_sensor",
    monitor_all_code_locations=False,
    minimum_interval_seconds=5,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Gives back the jobs a failed run still held (failure class lease_expired, so the database "
    "retries them): with run monitoring, a run whose process died is marked failed within a minute.",
)
def failed_run_jobs_sensor(context: dg.RunFailureSensorContext, database: DatabaseResource):
    _release_jobs_of(context, database)


@dg.run_status_sensor(
    name="canceled_run_jobs_sensor",
    run_status=dg.DagsterRunStatus.CANCELED,
    minimum_interval_seconds=5,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Gives back the jobs a canceled run still held, as failed_run_jobs_sensor does for failed runs.",
)
def canceled_run_jobs_sensor(context: dg.RunStatusSensorContext, database: DatabaseResource):
    _release_jobs_of(context, database)


@dg.sensor(
    name="job_archive_sensor",
    minimum_interval_seconds=300,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Moves jobs completed longer ago than HREG_JOB_ARCHIVE_AFTER_DAYS to processing.job_archive, "
    "in batches, so the queue table stays small; the step history keeps every attempt.",
)
@skip_while_database_unavailable
def job_archive_sensor(context: dg.SensorEvaluationContext, database: DatabaseResource, job_queue: JobQueueResource):
    # Bookkeeping, not job work, so it runs in the tick, as the reaper does; a tick moves at most
    # ten batches and leaves the rest to the next.
    moved = queue.archive_all_completed(
        database.get_engine(), job_queue.archive_after, job_queue.archive_batch_size, max_batches=10
    )
    return dg.SkipReason(f"archived {moved} completed jobs")
