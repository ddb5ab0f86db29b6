"""The current definitions of functions, triggers and views: one SQL file each, applied when changed.

Versioned migrations (``db/migrations/versions``, SQL in ``db/sql/migrations``) change tables,
columns, indexes and roles. Every function (with its triggers and grants) and every view has one
file under ``db/sql/functions`` or ``db/sql/views`` holding its current definition, written to be
re-run (``CREATE OR REPLACE``). After the versioned migrations, an upgrade to head applies each
file whose checksum differs from the one recorded in ``public.sql_definitions``; when a versioned
migration ran it applies all of them, since a table change may have dropped a view or trigger in
its way. Functions come before views, each group in file-name order.
"""

from __future__ import annotations

import hashlib
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

SQL_DIR = Path(__file__).parent / "sql"
DEFINITION_DIRS = ("functions", "views")

# Like alembic_version, bookkeeping of the migrations rather than part of the schema.
CREATE_TRACKING_TABLE = sa.text("""
    CREATE TABLE IF NOT EXISTS public.sql_definitions (
        name        text PRIMARY KEY,
        checksum    text NOT NULL,
        applied_at  timestamptz NOT NULL DEFAULT now()
    )
""")

APPLIED_CHECKSUMS = sa.text("SELECT name, checksum FROM public.sql_definitions")

RECORD_APPLIED = sa.text("""
    INSERT INTO public.sql_definitions (name, checksum) VALUES (:name, :checksum)
    ON CONFLICT (name) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()
""")

FORGET_REMOVED = sa.text("DELETE FROM public.sql_definitions WHERE NOT (name = ANY (CAST(:names AS text[])))")


@dataclass(frozen=True)
class Definition:
    name: str  # path under db/sql, e.g. "functions/apply_job_progress.sql"
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def definitions() -> list[Definition]:
    """Every definition file in the order it is applied."""
    return [
        Definition(str(path.relative_to(SQL_DIR)), path.read_text())
        for directory in DEFINITION_DIRS
        for path in sorted((SQL_DIR / directory).glob("*.sql"))
    ]


def run_sql(connection: sa.Connection, sql: str) -> None:
    """Execute a SQL script as it is written."""
    # Straight to the driver without parameters, so that '%' in PL/pgSQL is not a placeholder.
    dbapi_connection = connection.connection.dbapi_connection
    assert dbapi_connection is not None, "an open connection has one"
    with closing(dbapi_connection.cursor()) as cursor:
        cursor.execute(sql)


def apply(connection: sa.Connection, *, only: list[str] | None = None, everything: bool = False) -> list[str]:
    """Apply the definitions that changed (all with ``everything``; just ``only`` when given).

    Returns the names applied, in order.
    """
    connection.execute(CREATE_TRACKING_TABLE)
    # As pg_dump's restores do: a function body may name a view or function defined later in the
    # order; PL/pgSQL resolves names when it runs, and this makes SQL-language bodies do the same.
    connection.execute(sa.text("SET LOCAL check_function_bodies = off"))
    applied: dict[str, str] = dict(connection.execute(APPLIED_CHECKSUMS).all())
    current = definitions()
    done = []
    for definition in current:
        if only is not None and definition.name not in only:
            continue
        if everything or only is not None or applied.get(definition.name) != definition.checksum:
            run_sql(connection, definition.sql)
            connection.execute(RECORD_APPLIED, {"name": definition.name, "checksum": definition.checksum})
            done.append(definition.name)
    if only is None:
        connection.execute(FORGET_REMOVED, {"names": [d.name for d in current]})
    return done
