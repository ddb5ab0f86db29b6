"""How Dagster's own storage is kept bounded, as a Dagster resource: how long it keeps finished
runs, and how large a table its nightly packing rewrites."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dagster import ConfigurableResource
from pydantic import Field

from orchestration.settings import Settings


class DagsterRetentionResource(ConfigurableResource):
    """The age after which the retention sensor deletes a finished run nothing keeps, and the
    largest table the nightly packing rewrites."""

    retention_days: float = Field(
        description="Finished runs are deleted this many days after they were created (HREG_DAGSTER_RETENTION_DAYS)."
    )
    rewrite_max_mb: float = Field(
        description="Tables up to this size are rewritten by the nightly packing, larger ones have their indexes "
        "rebuilt on Sunday night (HREG_DAGSTER_REWRITE_MAX_MB)."
    )

    @property
    def rewrite_max_bytes(self) -> int:
        return int(self.rewrite_max_mb * 2**20)

    def created_before(self, now: datetime | None = None) -> datetime:
        """Runs created before this moment are old."""
        return (now or datetime.now(UTC)) - timedelta(days=self.retention_days)

    @classmethod
    def from_settings(cls, settings: Settings) -> DagsterRetentionResource:
        return cls(retention_days=settings.dagster_retention_days, rewrite_max_mb=settings.dagster_rewrite_max_mb)
