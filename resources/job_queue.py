"""How runs and sensors share out the job queue, as a Dagster resource."""

from __future__ import annotations

from datetime import timedelta

from dagster import ConfigurableResource
from pydantic import Field

from orchestration.settings import Settings


class JobQueueResource(ConfigurableResource):
    """Limits of the runs that work the queue, and when completed jobs are archived."""

    max_batches_per_run: int = Field(
        description="Batches one run works at most while due jobs remain (HREG_MAX_BATCHES_PER_RUN)."
    )
    max_runs_in_flight: int = Field(
        description="Runs of one job type queued or running at once at most (HREG_MAX_RUNS_IN_FLIGHT)."
    )
    archive_after_days: float = Field(
        description="Completed jobs move to processing.job_archive this many days after completion "
        "(HREG_JOB_ARCHIVE_AFTER_DAYS)."
    )
    archive_batch_size: int = Field(
        description="Jobs one archive transaction moves at most (HREG_JOB_ARCHIVE_BATCH_SIZE)."
    )

    @property
    def archive_after(self) -> timedelta:
        return timedelta(days=self.archive_after_days)

    @classmethod
    def from_settings(cls, settings: Settings) -> JobQueueResource:
        return cls(
            max_batches_per_run=settings.max_batches_per_run,
            max_runs_in_flight=settings.max_runs_in_flight,
            archive_after_days=settings.job_archive_after_days,
            archive_batch_size=settings.job_archive_batch_size,
        )
