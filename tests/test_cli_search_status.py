"""`hreg search` and `hreg status` against a real database."""

from __future__ import annotations

import json
import uuid
from datetime import datetime

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from orchestration.cli import main
from orchestration.db.engine import get_engine
from orchestration.runtime import queue
from orchestration.runtime.failures import JobError
from queue_helpers import claim_one, insert_entity, insert_search, job, search, store_si_document


@pytest.fixture
def hreg(db_url, settings):
    """Runs `hreg` in this process against the test's database (HREG_DATABASE_URL)."""
    runner = CliRunner()
    yield lambda *args: runner.invoke(main, list(args))
    get_engine(settings).dispose()


def printed_ids(output: str) -> dict[str, str]:
    return dict(line.split() for line in output.splitlines())


def test_search_saves_the_search_and_prints_it_with_its_queued_job(hreg, engine):
    user_id = str(uuid.uuid4())
    result = hreg(
        "search",
        "Muster Bau",
        "--mode",
        "exact",
        "--register-type",
        "HRB",
        "--court",
        "D2601V",
        "--include-deleted",
        "--user",
        user_id,
    )
    assert result.exit_code == 0, result.output
    ids = printed_ids(result.output)

    with engine.begin() as conn:
        saved = search(conn, ids["search"])
        assert (
            str(saved.user_id),
            saved.query,
            saved.mode,
            saved.register_type,
            saved.court,
            saved.include_deleted,
        ) == (user_id, "Muster Bau", "exact", "HRB", "D2601V", True)
        queued = job(conn, ids["job"])
        assert (str(queued.search_id), queued.type, queued.status) == (ids["search"], "basic_discovery", "queued")


def test_search_without_options_searches_all_words_for_the_command_line_user(hreg, engine):
    result = hreg("search", "Alpha Beta")
    assert result.exit_code == 0, result.output
    with engine.begin() as conn:
        saved = search(conn, printed_ids(result.output)["search"])
    assert (str(saved.user_id), saved.mode, saved.register_type, saved.include_deleted) == (
        str(uuid.UUID(int=0)),
        "all",
        None,
        False,
    )


def test_a_blank_search_is_refused_and_nothing_is_saved(hreg, engine):
    result = hreg("search", "   ")
    assert result.exit_code == 2
    assert "must not be blank" in result.output
    with engine.begin() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM public.searches")).scalar_one() == 0


def test_status_of_an_empty_queue(hreg):
    result = hreg("status")
    assert result.exit_code == 0, result.output
    assert "no jobs" in result.output and "no failed jobs" in result.output


# Jobs are dated back by days, hours and half an hour: the ages shown in hours ("2d 02h") stay the
# same for the half hour after, far longer than any test may take (pytest's 600 s).
def date_back(conn: sa.Connection, age: str, **where: str) -> None:
    """Move the creation of the jobs matching ``where`` (column = value) ``age`` (an interval) into the past."""
    conditions = " AND ".join(f"{column}::text = :{column}" for column in where)
    conn.execute(
        sa.text(
            f"UPDATE processing.processing_jobs SET created_at = now() - CAST(:age AS interval) WHERE {conditions}"
        ),
        {"age": age, **where},
    )


def clock(engine: sa.Engine) -> datetime:
    """The database's clock, which dates the jobs and measures their ages."""
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT clock_timestamp()")).scalar_one()


def oldest_created(engine: sa.Engine, **where: str) -> datetime:
    conditions = " AND ".join(f"{column}::text = :{column}" for column in where)
    with engine.connect() as conn:
        return conn.execute(
            sa.text(f"SELECT min(created_at) FROM processing.processing_jobs WHERE {conditions}"), where
        ).scalar_one()


def fill_queue(engine: sa.Engine) -> None:
    """Three searches: one failed for good (created a day and three hours ago), one queued two days
    and two hours ago, one queued just now."""
    with engine.begin() as conn:
        insert_search(conn)
        failed = claim_one(conn, "basic_discovery")
        queue.fail(conn, "worker-1", [(failed.id, JobError("parser_error", "unknown result table"))])
        date_back(conn, "1 day 3 hours 30 minutes", id=str(failed.id))
    with engine.begin() as conn:
        waiting = insert_search(conn)
        date_back(conn, "2 days 2 hours 30 minutes", search_id=str(waiting))
        insert_search(conn)


def test_status_prints_depth_age_and_failures_as_tables(hreg, engine):
    fill_queue(engine)
    result = hreg("status")
    assert result.exit_code == 0, result.output
    lines = [line.split() for line in result.output.splitlines()]
    assert ["basic_discovery", "queued", "2", "2d", "02h"] in lines
    assert ["basic_discovery", "failed", "1", "1d", "03h"] in lines
    assert ["basic_discovery", "parser_error", "1"] in lines


def test_status_as_json(hreg, engine):
    fill_queue(engine)
    before = clock(engine)
    result = hreg("status", "--json")
    after = clock(engine)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    depth = {(row["type"], row["status"]): row for row in report["queue"]}
    assert {key: row["jobs"] for key, row in depth.items()} == {
        ("basic_discovery", "queued"): 2,
        ("basic_discovery", "failed"): 1,
    }
    # The oldest queued job's age when the command read the queue: between the clock before and after.
    created = oldest_created(engine, status="queued")
    age = depth["basic_discovery", "queued"]["oldest_age_s"]
    assert (before - created).total_seconds() <= age <= (after - created).total_seconds()
    assert report["failures"] == [{"type": "basic_discovery", "failure_class": "parser_error", "jobs": 1}]


def fill_queue_of_both_priorities(engine: sa.Engine) -> None:
    """People's searches and a monitoring rule's re-checks of two companies, as the database
    queues them: a search running and one queued (interactive), a re-check running and one queued
    (background), a parse of a downloaded document queued (interactive) and a search failed."""
    with engine.begin() as conn:
        insert_search(conn)
        failed = claim_one(conn, "basic_discovery")
        queue.fail(conn, "worker-1", [(failed.id, JobError("parser_error", "unknown result table"))])
        insert_search(conn)
        assert claim_one(conn, "basic_discovery").priority == "interactive"
        for _ in range(2):
            conn.execute(sa.text("SELECT automation.request_rediscovery(:e)"), {"e": insert_entity(conn)})
        assert claim_one(conn, "basic_discovery").priority == "background"
        insert_search(conn)
        store_si_document(conn, insert_entity(conn))
        date_back(conn, "1 day 5 hours 30 minutes", type="basic_discovery", priority="interactive", status="queued")
        date_back(conn, "2 days 3 hours 30 minutes", type="basic_discovery", priority="background", status="queued")
        date_back(conn, "3 days 1 hour 30 minutes", type="xml_parsing", status="queued")


def test_status_counts_queued_and_running_jobs_by_priority(hreg, engine):
    fill_queue_of_both_priorities(engine)
    result = hreg("status")
    assert result.exit_code == 0, result.output
    section = result.output.split("Queued and running jobs by priority\n")[1].split("\n\n")[0]
    assert [line.split() for line in section.splitlines()] == [
        ["type", "priority", "queued", "running", "oldest", "queued"],
        ["basic_discovery", "interactive", "1", "1", "1d", "05h"],
        ["basic_discovery", "background", "1", "1", "2d", "03h"],
        ["xml_parsing", "interactive", "1", "0", "3d", "01h"],
    ]


def test_status_by_priority_as_json(hreg, engine):
    fill_queue_of_both_priorities(engine)
    with engine.begin() as conn:  # every queued re-check taken: the running one has no queued age
        claim_one(conn, "basic_discovery")
    before = clock(engine)
    result = hreg("status", "--json")
    after = clock(engine)
    assert result.exit_code == 0, result.output
    rows = {(row["type"], row["priority"]): row for row in json.loads(result.output)["priorities"]}
    assert {key: (row["queued"], row["running"]) for key, row in rows.items()} == {
        ("basic_discovery", "interactive"): (0, 2),
        ("basic_discovery", "background"): (1, 1),
        ("xml_parsing", "interactive"): (1, 0),
    }
    assert rows["basic_discovery", "interactive"]["oldest_queued_age_s"] is None
    created = oldest_created(engine, type="basic_discovery", priority="background", status="queued")
    age = rows["basic_discovery", "background"]["oldest_queued_age_s"]
    assert (before - created).total_seconds() <= age <= (after - created).total_seconds()


def test_status_without_active_jobs_says_so(hreg):
    result = hreg("status")
    assert result.exit_code == 0, result.output
    assert "no queued or running jobs" in result.output
