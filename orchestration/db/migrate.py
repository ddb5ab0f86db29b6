"""Schema migrations: Alembic's versioned deltas (SQL in ``db/sql/migrations``), then the current
definitions of functions, triggers and views (``db/sql_definitions.py``)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from functools import cache
from pathlib import Path

import sqlalchemy as sa
from alembic import command, op
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Engine

from orchestration.db import sql_definitions
from orchestration.jobs.specs import JOB_TYPES, JobTypes
from orchestration.records.documents import DocumentStore
from orchestration.settings import Settings

MIGRATION_SQL_DIR = Path(__file__).parent / "sql" / "migrations"
MIGRATIONS_DIR = Path(__file__).parent / "migrations"
# Serialises concurrent `upgrade` calls (webserver, daemon and CLI starting together).
_MIGRATION_LOCK_KEY = 0x68726567  # "hreg"


def run_sql_file(name: str) -> None:
    """Execute one SQL file of ``db/sql/migrations`` inside the running migration."""
    sql_definitions.run_sql(op.get_bind(), (MIGRATION_SQL_DIR / name).read_text())


def apply_definitions(*names: str) -> None:
    """Apply definition files a migration's own statements need (e.g. a function a new column calls)."""
    sql_definitions.apply(op.get_bind(), only=list(names))


def _alembic_config(connection: sa.Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["connection"] = connection
    return config


def upgrade(engine: Engine, settings: Settings, job_types: JobTypes = JOB_TYPES) -> None:
    """Bring the schema to the newest revision and sync job settings, with the parser versions
    of ``job_types`` (default: this code's); harmless when current."""
    with engine.begin() as connection:
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _MIGRATION_LOCK_KEY})
        command.upgrade(_alembic_config(connection), "head")
        sync_job_types(connection, settings, job_types.versions())
    adopt_local_paths(engine, settings)


def adopt_local_paths(engine: Engine, settings: Settings) -> None:
    """Move documents that rows name by an absolute local path into the configured store."""
    with engine.begin() as connection:
        _moved, missing = DocumentStore(settings.document_store_location).adopt_local_paths(connection)
    if missing:
        shown = ", ".join(missing[:3]) + (" …" if len(missing) > 3 else "")
        warnings.warn(
            f"{len(missing)} stored documents name local files that do not exist ({shown}); "
            "their rows keep the path until the files are back and `hreg db upgrade` runs again",
            stacklevel=2,
        )


@cache
def head_revision() -> str:
    """The newest revision this code knows (read once: the scripts do not change under a process)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None, "the package ships its migrations"
    return head


def schema_behind(engine: Engine, versions: Mapping[str, str]) -> str | None:
    """What makes the database older than this code (its revision, one of the parser ``versions``
    deployed (job type -> version) it does not name yet), or None when it is current;
    ``hreg db upgrade`` brings it up."""
    revision, head = current_revision(engine), head_revision()
    if revision != head:
        return f"the schema is at revision {revision or '(none)'}, this code needs {head}"
    with engine.connect() as connection:
        named: dict[str, str] = dict(
            connection.execute(sa.text("SELECT type, current_version FROM processing.job_types")).all()
        )
    for job_type, version in versions.items():
        if named.get(job_type) != version:
            return f"processing.job_types names {job_type} version {named.get(job_type)}, this code has {version}"
    return None


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as connection:
        exists = connection.execute(sa.text("SELECT to_regclass('public.alembic_version')")).scalar()
        if not exists:
            return None
        return connection.execute(sa.text("SELECT version_num FROM public.alembic_version")).scalar()


def sync_job_types(connection: sa.Connection, settings: Settings, versions: Mapping[str, str]) -> None:
    """Write what the code decides into processing.job_types: the parser ``versions`` it deploys
    (job type -> version) and batch sizes."""
    for job_type, version in versions.items():
        connection.execute(
            sa.text("UPDATE processing.job_types SET current_version = :v WHERE type = :type"),
            {"v": version, "type": job_type},
        )
    for job_type, size in settings.batch_sizes.items():
        updated = connection.execute(
            sa.text("UPDATE processing.job_types SET batch_size = :size WHERE type = :type"),
            {"size": size, "type": job_type},
        ).rowcount
        if not updated:
            raise ValueError(
                f"HREG_BATCH_SIZES names an unknown job type {job_type!r}: {json.dumps(settings.batch_sizes)}"
            )
