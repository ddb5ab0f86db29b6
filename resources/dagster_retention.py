"""How long Dagster's own storage keeps finished runs, as a Dagster resource."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dagster import ConfigurableResource
from pydantic import Field

from orchestration.settings import Settings


class DagsterRetentionResource(ConfigurableResource):
    """The age after which the retention sensor deletes a finished run nothing keeps."""

    retention_days: float = Field(
        description="Finished runs are deleted this many days after they were created (HREG_DAGSTER_RETENTION_DAYS)."
    )

    def created_before(self, now: datetime | None = None) -> datetime:
        """Runs created before this moment are old."""
        return (now or datetime.now(UTC)) - timedelta(days=self.retention_days)

    @classmethod
    def from_settings(cls, settings: Settings) -> DagsterRetentionResource:
        return cls(retention_days=settings.dagster_retention_days)
