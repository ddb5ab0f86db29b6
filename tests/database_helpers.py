"""Databases for tests: fresh clones of the migrated template, and process caches to reset."""

from __future__ import annotations

import uuid
from contextlib import contextmanager

import sqlalchemy as sa

TEMPLATE_DB = "hreg_test_template"


def clear_process_caches() -> None:
    """Forget settings and engines cached for the process, so they follow this test's database."""
    from orchestration.db.engine import get_engine
    from orchestration.settings import get_settings
    from resources.database import _engine_for

    get_settings.cache_clear()
    get_engine.cache_clear()
    _engine_for.cache_clear()


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
