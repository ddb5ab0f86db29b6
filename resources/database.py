"""The application database as a Dagster resource."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
from pydantic import Field
from sqlalchemy.engine import Engine

from orchestration.db.engine import embedded_url, engine_for, refuse_embedded_in_cluster
from orchestration.settings import Settings


class DatabaseResource(dg.ConfigurableResource):
    """PostgreSQL holding the job tables and the content."""

    url: str = Field(description="SQLAlchemy URL (HREG_DATABASE_URL); empty: the embedded server in pgdata_dir.")
    pgdata_dir: str = Field(
        description="Data directory of the embedded server (<HREG_DATA_DIR>/postgres), used when url is empty."
    )
    worker_role: str = Field(
        description="Role every connection takes (HREG_WORKER_ROLE), so runs hold only the worker's privileges."
    )

    def get_engine(self) -> Engine:
        # Connects lazily: building the resource, and loading the code location, need no database.
        return engine_for(self.url or embedded_url(Path(self.pgdata_dir)), self.worker_role)

    @classmethod
    def from_settings(cls, settings: Settings) -> DatabaseResource:
        """The settings' database. A URL that came from HREG_DATABASE_URL (which `hreg dev` sets for
        Dagster's processes) stays an ``EnvVar``, so the UI shows where it comes from and never its
        password. A process of the cluster without a URL refuses to load rather than start an
        embedded server no other host sees."""
        refuse_embedded_in_cluster(settings)
        from_environment = bool(settings.database_url) and settings.database_url == os.environ.get("HREG_DATABASE_URL")
        return cls(
            url=dg.EnvVar("HREG_DATABASE_URL") if from_environment else settings.database_url,
            pgdata_dir=str(settings.pgdata_dir),
            worker_role=settings.worker_role,
        )
