"""Databases for tests: fresh clones of the migrated template."""

from __future__ import annotations

import uuid
from contextlib import contextmanager

import sqlalchemy as sa

TEMPLATE_DB = "hreg_test_template"


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
