"""Upgrading from each earlier revision of our schema, with rows in every table, loses nothing.

A database at the newest schema gets what the application and the workers write (a search, a
company it found with its SI document and a parsed revision, a shareholder list, an announcement,
a monitoring rule with its firing, a finished job moved to the archive by the archive function, a
retrieval token taken): its triggers make the jobs and their step history. For each earlier revision, a database migrated only that far
gets those rows, in the columns that revision has (triggers off, as rows already written; a table
or column a later revision adds is left out), and is then upgraded as `hreg db upgrade` does: every
row is still there afterwards, with the same values in every column it had (the job types and
failure classes: the same rows, whose settings the upgrade writes anew).
"""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory

from orchestration.db.migrate import MIGRATIONS_DIR, _alembic_config, upgrade
from orchestration.settings import Settings
from test_migrations import empty_database

SCHEMAS = ("public", "content", "processing", "automation")
BOOKKEEPING = {("public", "alembic_version"), ("public", "sql_definitions")}
# Tables whose rows are the code's configuration: an upgrade writes what the code decides into
# their other columns (parser versions, batch sizes, leases), so only that each row is there counts.
CONFIGURATION_KEYS = {("processing", "job_types"): ["type"], ("processing", "failure_classes"): ["failure_class"]}
USER, ORGANIZATION = str(uuid.uuid4()), str(uuid.uuid4())


def earlier_revisions() -> list[str]:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    script = ScriptDirectory.from_config(config)
    revisions = [revision.revision for revision in script.walk_revisions()]  # newest first
    return list(reversed(revisions))[:-1]


def fill(engine: sa.Engine) -> None:
    """A row in every table of the newest schema, written as the application and the workers do."""
    with engine.begin() as conn:
        run = lambda sql, **params: conn.execute(sa.text(sql), params)  # noqa: E731
        search = run(
            "INSERT INTO public.searches (user_id, query) VALUES (:u, 'Beispiel') RETURNING id", u=USER
        ).scalar()
        entity = run(
            """INSERT INTO content.entities (court_code, court_name, register_type, register_number, name, seat,
                                             discovered_by_search_id)
               VALUES ('D2601', 'München', 'HRB', '123456', 'Beispiel Bau GmbH', 'München', :s) RETURNING id""",
            s=search,
        ).scalar()
        run("INSERT INTO public.search_results (search_id, position, entity_id) VALUES (:s, 1, :e)", s=search, e=entity)
        document = run(
            """INSERT INTO content.raw_documents (sha256, entity_id, kind, media_type, filename, size_bytes, content)
               VALUES (repeat('a', 64), :e, 'si', 'application/xml', 'si.xml', 7, '<si/>\n'::bytea) RETURNING id""",
            e=entity,
        ).scalar()
        run("UPDATE content.entities SET current_si_document_id = :d WHERE id = :e", d=document, e=entity)
        run(
            """INSERT INTO content.entity_revisions (entity_id, source_record_key, content_hash, record, parser_version,
                                                     raw_document_id)
               VALUES (:e, 'D2601-HRB-123456', 'hash-1', '{"name": "Beispiel Bau GmbH"}', '1.0.0', :d)""",
            e=entity,
            d=document,
        )
        listed = run(
            """INSERT INTO content.shareholder_lists (entity_id, raw_document_id, content_hash, method, total_nominal,
                                                      currency, capital, valid)
               VALUES (:e, :d, 'hash-2', 'rules', 25000, 'EUR', 25000, true) RETURNING id""",
            e=entity,
            d=document,
        ).scalar()
        run(
            """INSERT INTO content.shareholders (list_id, entity_id, position, kind, name, seat, nominal_total, percentage)
               VALUES (:l, :e, 1, 'organisation', 'Beispiel Holding GmbH', 'Berlin', 25000, 100)""",
            l=listed,
            e=entity,
        )
        run(
            """INSERT INTO content.register_announcements (portal_id, published, category, court_code, register_type,
                                                           register_number, name, entity_id)
               VALUES ('A-1', DATE '2026-01-05', 'Veränderungen', 'D2601', 'HRB', '123456', 'Beispiel Bau GmbH', :e)""",
            e=entity,
        )
        run("INSERT INTO content.announcement_polls (court_code, day, found) VALUES ('D2601', DATE '2026-01-05', 1)")
        rule = run(
            """INSERT INTO automation.trigger_rule (name, source_type, action_type, action_config, organization_id)
               VALUES ('Beispiel beobachten', 'entity_changed', 'notification', '{"title": "geändert"}', :o)
               RETURNING id""",
            o=ORGANIZATION,
        ).scalar()
        run(
            "INSERT INTO automation.watch_list (organization_id, trigger_rule_id, entity_id) VALUES (:o, :r, :e)",
            o=ORGANIZATION,
            r=rule,
            e=entity,
        )
        run(
            """INSERT INTO automation.trigger_log (trigger_rule_id, event_key, subject_id, trigger_on, action_type,
                                                   organization_id)
               VALUES (:r, 'revision:1', :e, 'entity_changed', 'notification', :o)""",
            r=rule,
            e=entity,
            o=ORGANIZATION,
        )
        run(
            """INSERT INTO automation.scheduled_action (trigger_rule_id, subject_id, organization_id, action_type,
                                                        action_config, execute_at)
               VALUES (:r, :e, :o, 'notification', '{"title": "später"}', now() + interval '1 day')""",
            r=rule,
            e=entity,
            o=ORGANIZATION,
        )
        run(
            "INSERT INTO automation.scheduled_trigger_execution (trigger_rule_id, scheduled_at) VALUES (:r, now())",
            r=rule,
        )
        run(
            "INSERT INTO automation.notifications (organization_id, entity_id, title) VALUES (:o, :e, 'geändert')",
            o=ORGANIZATION,
            e=entity,
        )
        # The search's job done by a worker (its step history written by the trigger) and archived.
        run("UPDATE processing.processing_jobs SET status = 'running', worker_id = 'w1' WHERE search_id = :s", s=search)
        run(
            "UPDATE processing.processing_jobs SET status = 'completed', completed_at = now() WHERE search_id = :s",
            s=search,
        )
        assert run("SELECT processing.archive_completed_jobs(interval '-1 day', 100)").scalar() == 1
        # Another search, whose job waits in the queue.
        run("INSERT INTO public.searches (user_id, query) VALUES (:u, 'Muster') RETURNING id", u=USER)
        run("SELECT processing.take_rate_limit_token('register', 60.0, 1.0, 'interactive', 2, 10.0)")
    with engine.connect() as conn:
        empty = [table for table, count in row_counts(conn).items() if not count]
    assert empty == [], f"no row in {empty}"


def tables(conn: sa.Connection) -> dict[tuple[str, str], list[str]]:
    """(schema, table) -> its columns, of our schemas."""
    found: dict[tuple[str, str], list[str]] = {}
    for schema, table, column in conn.execute(
        sa.text("""SELECT c.table_schema, c.table_name, c.column_name FROM information_schema.columns c
                   JOIN information_schema.tables t USING (table_schema, table_name)
                   WHERE c.table_schema = ANY(:schemas) AND t.table_type = 'BASE TABLE'
                   ORDER BY c.table_schema, c.table_name, c.ordinal_position"""),
        {"schemas": list(SCHEMAS)},
    ):
        if (schema, table) not in BOOKKEEPING:
            found.setdefault((schema, table), []).append(column)
    return found


def generated_columns(conn: sa.Connection) -> set[tuple[str, str, str]]:
    """Columns PostgreSQL computes itself (GENERATED ALWAYS AS …), which no insert names."""
    return {
        tuple(row)
        for row in conn.execute(
            sa.text("""SELECT table_schema, table_name, column_name FROM information_schema.columns
                       WHERE table_schema = ANY(:schemas) AND is_generated <> 'NEVER'"""),
            {"schemas": list(SCHEMAS)},
        )
    }


def row_counts(conn: sa.Connection) -> dict[str, int]:
    return {
        f"{schema}.{table}": conn.execute(sa.text(f'SELECT count(*) FROM "{schema}"."{table}"')).scalar_one()
        for schema, table in tables(conn)
    }


def rows(conn: sa.Connection, schema: str, table: str, columns: list[str]) -> set[tuple]:
    """The rows of a table over ``columns``, as text (values compare across column type changes)."""
    selected = ", ".join(f'"{column}"::text' for column in columns)
    return {tuple(row) for row in conn.execute(sa.text(f'SELECT {selected} FROM "{schema}"."{table}"'))}


@pytest.fixture(scope="module")
def newest(server_url, template_url):
    with empty_database(server_url, f"hreg_test_filled_{uuid.uuid4().hex[:8]}") as engine:
        upgrade(engine, Settings())
        fill(engine)
        yield engine


@pytest.mark.parametrize("revision", earlier_revisions())
def test_upgrading_from_an_earlier_revision_with_rows_in_every_table_loses_nothing(server_url, newest, revision):
    with newest.connect() as source, empty_database(server_url, f"hreg_test_from_{revision}") as engine:
        with engine.begin() as conn:
            command.upgrade(_alembic_config(conn), revision)
        before: dict[tuple[str, str], set[tuple]] = {}
        with engine.begin() as conn:
            # Rows as an earlier release wrote them: its triggers made them already.
            conn.execute(sa.text("SET LOCAL session_replication_role = replica"))
            at_revision = tables(conn)
            for (schema, table), columns in at_revision.items():
                newest_columns = tables(source).get((schema, table), [])
                computed = generated_columns(conn)
                shared = [
                    column for column in columns if column in newest_columns and (schema, table, column) not in computed
                ]
                # The revision's own migrations wrote its configuration rows; a job type or failure
                # class a later revision adds is not one that revision's columns can hold.
                if not shared or (schema, table) in CONFIGURATION_KEYS:
                    continue
                names = ", ".join(f'"{column}"' for column in shared)
                values = ", ".join(f":p{i}" for i in range(len(shared)))
                # As text, which PostgreSQL reads back into each column's type.
                for row in rows(source, schema, table, shared):
                    conn.execute(
                        sa.text(
                            f'INSERT INTO "{schema}"."{table}" ({names}) OVERRIDING SYSTEM VALUE VALUES ({values}) '
                            "ON CONFLICT DO NOTHING"
                        ),
                        {f"p{i}": value for i, value in enumerate(row)},
                    )
            for (schema, table), columns in at_revision.items():
                before[schema, table] = rows(conn, schema, table, columns)
        assert all(before.values()), [table for table, found in before.items() if not found]

        upgrade(engine, Settings())

        with engine.connect() as conn:
            after_tables = tables(conn)
            lost = {}
            for (schema, table), found in before.items():
                kept_columns = CONFIGURATION_KEYS.get((schema, table)) or [
                    c for c in at_revision[schema, table] if c in after_tables.get((schema, table), [])
                ]
                assert kept_columns, f"{schema}.{table} is gone"
                previous = {tuple(row[at_revision[schema, table].index(c)] for c in kept_columns) for row in found}
                missing = previous - rows(conn, schema, table, kept_columns)
                if missing:
                    lost[f"{schema}.{table}"] = missing
        assert lost == {}
