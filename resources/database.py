"""The application database as a Dagster resource."""

from __future__ import annotations

import os

import dagster as dg
from pydantic import Field
from sqlalchemy.engine import Engine

from orchestration.db.engine import get_engine


class DatabaseResource(dg.ConfigurableResource):
    """PostgreSQL holding the job tables and the content."""

    url: str = Field("", description="SQLAlchemy URL; empty: the settings' database (by default the embedded server).")

    def get_engine(self) -> Engine:
        return get_engine(self.url)


def database_from_environment() -> DatabaseResource:
    """The code location's database: HREG_DATABASE_URL (which `hreg dev` sets for Dagster's
    processes) as an ``EnvVar``, so the UI shows where the URL comes from and never its password;
    without it, the settings' default, as the CLI has it."""
    if os.environ.get("HREG_DATABASE_URL"):
        return DatabaseResource(url=dg.EnvVar("HREG_DATABASE_URL"))
    return DatabaseResource()
