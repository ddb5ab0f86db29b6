"""What a person looks at on the command line: `hreg search show`, `hreg entity show`, `hreg entity
open`, and a one-line error instead of a traceback when the database is missing or not migrated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from orchestration.cli import main
from orchestration.db.engine import get_engine
from orchestration.jobs.specs import JOB_TYPES
from orchestration.records.documents import DocumentStore
from orchestration.runtime.worker import run_batches
from orchestration.stages.parsing import XmlParsingStage
from pipeline_helpers import add_entity_with_si
from queue_helpers import insert_entity, insert_search
from sample_register import start_sample_register_in_thread

REAL_SI = "BE-Berlin_Charlottenburg_HRB_248040+SI-20230514155133.xml"


@pytest.fixture
def hreg(db_url, settings):
    """Runs `hreg` in this process against the test's database (HREG_DATABASE_URL)."""
    runner = CliRunner()
    yield lambda *args: runner.invoke(main, list(args))
    get_engine(settings).dispose()


@pytest.fixture
def parsed_company(engine, samples_dir, tmp_path):
    """A company whose real SI document is stored and parsed: 24/7 Music GmbH, HRB 248040 B."""
    store = DocumentStore(tmp_path / "documents")
    content = (samples_dir / "xjustiz" / REAL_SI).read_bytes()
    entity_id = add_entity_with_si(engine, store, content, number="248040", name="24/7 Music GmbH")
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "UPDATE content.entities SET court_code = 'F1103', register_suffix = 'B', court_name = :c WHERE id = :e"
            ),
            {"e": entity_id, "c": "Berlin (Charlottenburg)"},
        )
    run_batches(engine, XmlParsingStage(JOB_TYPES.xml_parsing, store), "test-parsing", max_batches=2)
    return entity_id


def add_shareholder_list(engine, entity_id: str, *, valid: bool) -> None:
    checks = [
        {
            "name": "percentages_sum_to_100",
            "status": "passed" if valid else "failed",
            "message": "the shares sum to 90 %",
        }
    ]
    with engine.begin() as conn:
        list_id = conn.execute(
            sa.text("""
                INSERT INTO content.shareholder_lists
                    (entity_id, content_hash, method, total_nominal, currency, capital, validation, valid)
                VALUES (:e, 'h', 'rules', 25200, 'EUR', 25200, CAST(:v AS jsonb), :valid) RETURNING id"""),
            {"e": entity_id, "v": json.dumps({"checks": checks}), "valid": valid},
        ).scalar_one()
        conn.execute(
            sa.text("""
                INSERT INTO content.shareholders
                    (list_id, entity_id, position, kind, name, seat, nominal_total, percentage)
                VALUES (:l, :e, 1, 'organisation', 'Beispiel Holding GmbH', 'Hamburg', 25200, 100)"""),
            {"l": list_id, "e": entity_id},
        )


def test_entity_show_prints_the_record_officers_shareholders_and_history(hreg, engine, parsed_company):
    add_shareholder_list(engine, parsed_company, valid=False)
    by_id = hreg("entity", "show", parsed_company)
    assert by_id.exit_code == 0, by_id.output
    by_register = hreg("entity", "show", "F1103", "HRB", "248040")
    assert by_register.output == by_id.output
    out = by_id.output
    # Read from the document: the company, its capital, its managing director's role, Berlin.
    assert out.startswith("24/7 Music GmbH")
    assert "25200.00 EUR" in out and "Berlin" in out
    officers = out.split("\nOfficers\n")[1].split("\n\n")[0]
    assert len(officers.splitlines()) == 2  # header and the one managing director
    # A list whose rules did not hold is shown for review, never as checked.
    shareholders = out.split("\nShareholders\n")[1].split("\n\n")[0]
    assert "needs review" in shareholders and "percentages_sum_to_100" in shareholders
    assert "Beispiel Holding GmbH" in shareholders and "checked" not in shareholders
    history = out.split("\nRevision history\n")[1]
    assert len(history.strip().splitlines()) == 2  # header and one revision

    view = json.loads(hreg("entity", "show", parsed_company, "--json").output)
    assert view["entity"]["processing_status"] == "parsed"
    assert view["record"]["capital"] == {"amount": "25200.00", "currency": "EUR"}
    assert len(view["officers"]) == 1 and len(view["revisions"]) == 1
    assert view["shareholders"]["review_status"] == "needs review"


def test_entity_show_of_a_checked_list_and_of_an_unparsed_entity(hreg, engine, parsed_company):
    add_shareholder_list(engine, parsed_company, valid=True)
    assert "read by rules: checked" in hreg("entity", "show", parsed_company).output
    with engine.begin() as conn:
        discovered = insert_entity(conn)
    out = hreg("entity", "show", discovered).output
    assert f"No parsed record yet: open it with: hreg entity open {discovered}." in out


def test_entity_open_takes_the_applications_path_and_queues_an_interactive_job(hreg, engine, parsed_company):
    with engine.begin() as conn:
        discovered = insert_entity(conn)
    result = hreg("entity", "open", discovered)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"entity {discovered}: basic_discovery_running, job ")
    # A parsed company is refreshed the same way.
    assert hreg("entity", "open", parsed_company).exit_code == 0
    with engine.connect() as conn:
        jobs = conn.execute(
            sa.text("""
            SELECT entity_id::text, status, priority::text, data ->> 'trigger_source' AS source
              FROM processing.processing_jobs WHERE type = 'basic_discovery' ORDER BY created_at""")
        ).all()
    assert [tuple(j) for j in jobs] == [
        (discovered, "queued", "interactive", "user_discovery"),
        (parsed_company, "queued", "interactive", "user_discovery"),
    ]


def test_entity_commands_name_what_they_cannot_find(hreg):
    unknown = str(uuid.uuid4())
    assert hreg("entity", "show", unknown).output.strip() == f"Error: there is no entity {unknown}"
    result = hreg("entity", "open", "D2601", "HRB", "1")
    assert result.exit_code == 1 and "no entity D2601 HRB 1 is known" in result.output


def test_search_show_lists_the_results_with_each_entitys_status(hreg, engine, parsed_company):
    with engine.begin() as conn:
        search_id = insert_search(conn, "Music")
        other = insert_entity(conn, name="Music Verlag GmbH")
        conn.execute(
            sa.text(
                "INSERT INTO public.search_results (search_id, position, entity_id) VALUES (:s, 1, :a), (:s, 2, :b)"
            ),
            {"s": search_id, "a": parsed_company, "b": other},
        )
    pending = hreg("search", "show", search_id).output
    assert "pending" in pending and "results appear when it completes" in pending
    with engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE public.searches SET status = 'completed', result_count = 2 WHERE id = :s"), {"s": search_id}
        )
    out = hreg("search", "show", search_id).output
    lines = out.splitlines()
    assert lines[1] == "completed: 2 results"
    first, second = (line for line in lines if line.lstrip().startswith(("1 ", "2 ")))
    assert "24/7 Music GmbH" in first and "parsed" in first and "HRB 248040 B" in first
    assert "Music Verlag GmbH" in second and "discovered" in second
    listed = json.loads(hreg("search", "show", search_id, "--json").output)
    assert [r["name"] for r in listed["results"]] == ["24/7 Music GmbH", "Music Verlag GmbH"]


# ----------------------------------------------------------------------------- database problems


def run_hreg(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(Path(sys.executable).parent / "hreg"), *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_one_line_error(result: subprocess.CompletedProcess, *expected: str) -> None:
    assert result.returncode == 1, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr
    for text in expected:
        assert text in errors[0]


@pytest.mark.parametrize(
    "args",
    [("status",), ("search", "GmbH"), ("search", "show", str(uuid.UUID(int=1))), ("entity", "open", "X", "HRB", "1")],
)
def test_a_database_that_is_not_migrated_gets_a_one_line_error_with_what_to_run(server_url, args):
    name = f"hreg_unmigrated_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        url = server_url.set(database=name).render_as_string(hide_password=False)
        assert_one_line_error(run_hreg({"HREG_DATABASE_URL": url}, *args), "not migrated", "hreg db upgrade")
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        admin.dispose()


def test_an_unreachable_database_gets_a_one_line_error(tmp_path):
    result = run_hreg(
        {"HREG_DATABASE_URL": "postgresql://nobody@127.0.0.1:9/hreg", "HREG_DATA_DIR": str(tmp_path)}, "status"
    )
    assert_one_line_error(result, "cannot reach the database", "HREG_DATABASE_URL")


def test_a_fresh_data_directory_says_to_migrate_instead_of_a_traceback(tmp_path, samples_dir):
    """The newcomer's first try, before `hreg dev` or `hreg db upgrade`: `hreg register search GmbH`
    (the register answers; the shared rate limit lives in the database) and `hreg search GmbH`."""
    env = {"HREG_DATABASE_URL": "", "HREG_DATA_DIR": str(tmp_path / "fresh")}
    try:
        with start_sample_register_in_thread(samples_dir=samples_dir) as register:
            result = run_hreg({**env, "HREG_REGISTER_URL": register.url}, "register", "search", "GmbH")
        assert_one_line_error(result, "does not exist yet", "hreg db upgrade")
        assert_one_line_error(run_hreg(env, "search", "GmbH"), "does not exist yet", "hreg db upgrade")
    finally:
        run_hreg(env, "db", "stop")
