"""Database URLs and engines: the application database and Dagster's own, on one server."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine, make_url

from orchestration.db import embedded
from orchestration.settings import Settings


def _psycopg2(url: str | URL) -> URL:
    # SQLAlchemy 2.1 sends a plain postgresql:// URL to psycopg 3, which dagster-postgres cannot use.
    url = make_url(url)
    if url.drivername in ("postgresql", "postgres", "postgresql+psycopg"):
        url = url.set(drivername="postgresql+psycopg2")
    return url


class NoDatabaseServer(RuntimeError):
    """A process of a multi-host deployment has no database URL."""


def refuse_embedded_in_cluster(settings: Settings) -> None:
    """Raise ``NoDatabaseServer`` when a process of the cluster has no database URL."""
    # An embedded server on a worker host is an empty database no other host sees: its runs
    # would claim nothing, and whatever it stored would be lost to the cluster.
    if settings.cluster and not settings.database_url:
        raise NoDatabaseServer(
            "HREG_CLUSTER is set but HREG_DATABASE_URL is empty: a process of the cluster works against "
            "the cluster's PostgreSQL server and does not start an embedded one (docs/deployment.md)"
        )


def app_url(settings: Settings) -> URL:
    """URL of the application database, starting the embedded server when no URL is set."""
    if settings.database_url:
        return _psycopg2(settings.database_url)
    refuse_embedded_in_cluster(settings)
    return _psycopg2(embedded.server_url(settings.pgdata_dir, embedded.APP_DATABASE))


def dagster_url(settings: Settings) -> URL:
    """URL of Dagster's storage: a separate database beside the application's."""
    url = app_url(settings)
    name = embedded.DAGSTER_DATABASE if not settings.database_url else f"{url.database}_dagster"
    return url.set(database=name)


def ensure_database(url: URL) -> None:
    """Create the database of ``url`` when it does not exist yet."""
    admin = sa.create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            exists = conn.execute(sa.text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": url.database}).scalar()
            if not exists:
                conn.execute(sa.text(f'CREATE DATABASE "{url.database}"'))
    finally:
        admin.dispose()


def create_app_engine(url: URL | str, *, worker_role: str = "", **kwargs) -> Engine:
    """An engine of the application database at ``url``; every connection takes ``worker_role``
    when one is given."""
    engine = sa.create_engine(_psycopg2(url), pool_pre_ping=True, **kwargs)
    if worker_role:

        @sa.event.listens_for(engine, "connect")
        def _set_role(dbapi_conn, _record):
            with dbapi_conn.cursor() as cur:
                cur.execute(f'SET ROLE "{worker_role}"')

    return engine


def get_engine(settings: Settings) -> Engine:
    """The engine of the application database the settings name (HREG_DATABASE_URL, or the
    embedded server under HREG_DATA_DIR), whose connections take HREG_WORKER_ROLE.

    One engine per process and database, so runs, sensor ticks and commands reuse its pool."""
    refuse_embedded_in_cluster(settings)
    return engine_for(settings.database_url or embedded_url(settings.pgdata_dir), settings.worker_role)


@lru_cache(maxsize=8)
def engine_for(url: str, worker_role: str = "") -> Engine:
    """The one engine of this process for ``url``, whose connections take ``worker_role`` (if any)."""
    return create_app_engine(url, worker_role=worker_role)


@lru_cache(maxsize=8)
def embedded_url(pgdata_dir: Path) -> str:
    # Looked up once: finding the server (and starting it when needed) costs a subprocess.
    return embedded.server_url(pgdata_dir, embedded.APP_DATABASE)
