"""Databases for tests: fresh clones of the migrated template, and the settings to re-read."""

from __future__ import annotations

import uuid
from contextlib import contextmanager

import sqlalchemy as sa

TEMPLATE_DB = "hreg_test_template"


def clear_process_caches() -> None:
    """Forget the settings read from the environment, so they follow this test's (engines are
    kept per database URL and need no reset)."""
    from orchestration.settings import get_settings

    get_settings.cache_clear()


@contextmanager
def fresh_database(server_url):
    """A new database cloned from the migrated template, dropped afterwards."""
    name = f"hreg_test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE_DB}"'))
    try:
        yield server_url.set(database=name)
    finally:
        with admin.connect() as conn:
            for db in (name, f"{name}_dagster"):
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)'))
        admin.dispose()
