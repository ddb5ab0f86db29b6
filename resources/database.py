"""The application database as a Dagster resource."""

from __future__ import annotations

from functools import lru_cache

from dagster import ConfigurableResource
from pydantic import Field
from sqlalchemy.engine import Engine

from orchestration.db.engine import app_url, create_app_engine


@lru_cache(maxsize=8)
def _engine_for(url: str) -> Engine:
    # One pool per process and URL: runs and sensor ticks reuse connections.
    return create_app_engine(url or app_url())


class DatabaseResource(ConfigurableResource):
    """PostgreSQL holding the job tables and the content; empty URL means HREG_DATABASE_URL or the embedded server."""

    url: str = Field("", description="SQLAlchemy URL; empty: taken from the settings.")

    def get_engine(self) -> Engine:
        return _engine_for(self.url)
