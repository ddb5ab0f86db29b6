"""`hreg reparse` against a real database: scopes, manual jobs with requester and reason, and
the parser_change jobs a parser change leaves to do."""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from orchestration.cli import main
from orchestration.db.engine import get_engine
from orchestration.db.migrate import sync_job_types
from orchestration.jobs.specs import JOB_TYPES
from orchestration.records.documents import DocumentStore
from orchestration.runtime.worker import run_batch
from orchestration.stages.parsing import XmlParsingStage
from orchestration.xjustiz import PARSER_VERSION
from pipeline_helpers import add_entity_with_si, job_rows, sample_si_files

USER = str(uuid.uuid4())


@pytest.fixture
def hreg(db_url, monkeypatch, settings):
    """Runs `hreg` in this process against the test's database, with no user in the environment."""
    monkeypatch.delenv("HREG_USER_ID", raising=False)
    runner = CliRunner()
    yield lambda *args: runner.invoke(main, list(args))
    get_engine(settings).dispose()


@pytest.fixture
def entities(engine, settings, samples_dir) -> list[str]:
    """Three parsed entities, the first two found by one search; then the search id."""
    store = DocumentStore(settings.documents_dir)
    ids = [
        add_entity_with_si(engine, store, path.read_bytes(), number=str(700 + i))
        for i, path in enumerate(sample_si_files(samples_dir)[:3])
    ]
    with engine.begin() as conn:
        search_id = conn.execute(
            sa.text("INSERT INTO public.searches (user_id, query) VALUES (:u, 'Muster') RETURNING id"), {"u": USER}
        ).scalar_one()
        conn.execute(
            sa.text("UPDATE content.entities SET discovered_by_search_id = :s WHERE id = ANY(CAST(:ids AS uuid[]))"),
            {"s": search_id, "ids": ids[:2]},
        )
    assert run_batch(engine, XmlParsingStage(JOB_TYPES.xml_parsing, store), "upload-worker").completed == 3
    return [*ids, str(search_id)]


def manual_jobs(engine) -> list[sa.Row]:
    return [job for job in job_rows(engine, "xml_parsing") if job.trigger == "manual"]


def test_a_manual_reparse_carries_its_requester_and_reason_and_is_queued_once(hreg, engine, entities):
    result = hreg("reparse", "--all", "--reason", "court names re-mapped", "--user", USER)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"queued 3 manual re-parse jobs for parser {PARSER_VERSION}, 0 already active"
    jobs = manual_jobs(engine)
    assert {(str(j.requested_by), j.reason, j.parser_version, j.status) for j in jobs} == {
        (USER, "court names re-mapped", PARSER_VERSION, "queued")
    }
    uploads = {j.entity_id: j.id for j in job_rows(engine, "xml_parsing") if j.trigger == "upload"}
    assert {j.previous_job_id for j in jobs} == set(uploads.values())
    assert all(uploads[j.entity_id] == j.previous_job_id for j in jobs)

    again = hreg("reparse", "--all", "--reason", "court names re-mapped", "--user", USER)
    assert again.output.strip() == f"queued 0 manual re-parse jobs for parser {PARSER_VERSION}, 3 already active"
    assert len(manual_jobs(engine)) == 3


def test_the_user_comes_from_the_environment_and_a_manual_reparse_without_one_is_refused(
    hreg, engine, entities, monkeypatch
):
    refused = hreg("reparse", "--all", "--reason", "court names re-mapped")
    assert refused.exit_code == 2
    assert "needs the person who asks: pass --user UUID or set HREG_USER_ID" in refused.output
    no_reason = hreg("reparse", "--all", "--reason", " ", "--user", USER)
    assert no_reason.exit_code == 2 and "needs --reason" in no_reason.output
    assert manual_jobs(engine) == []

    monkeypatch.setenv("HREG_USER_ID", USER)
    assert hreg("reparse", "--all", "--reason", "court names re-mapped").exit_code == 0
    assert {str(j.requested_by) for j in manual_jobs(engine)} == {USER}


def test_scopes_pick_one_entity_the_entities_of_a_search_or_those_updated_since_a_date(hreg, engine, entities):
    first, second, third, search_id = entities
    user = ("--reason", "scope check", "--user", USER)

    assert hreg("reparse", "--entity", third, *user).output.startswith("queued 1 manual")
    assert hreg("reparse", "--search", search_id, *user).output.startswith("queued 2 manual")
    assert {str(j.entity_id) for j in manual_jobs(engine)} == {first, second, third}

    future = hreg("reparse", "--since", "2999-01-01", *user)
    assert future.output.splitlines() == [
        f"queued 0 manual re-parse jobs for parser {PARSER_VERSION}, 0 already active",
        "nothing to re-parse in this scope",
    ]
    assert hreg("reparse", "--since", "2000-01-01", *user).output.strip() == (
        f"queued 0 manual re-parse jobs for parser {PARSER_VERSION}, 3 already active"
    )


@pytest.mark.parametrize(
    "arguments, message",
    [
        ((), "choose exactly one of --all, --entity, --search, --since, --court or --stale"),
        (("--all", "--stale"), "choose exactly one of"),
        (("--stale", "--reason", "new parser"), "--stale queues parser_change jobs, which carry no --user or --reason"),
        (("--stale", "--user", USER), "--stale queues parser_change jobs"),
    ],
)
def test_unclear_requests_are_refused(hreg, engine, entities, arguments, message):
    result = hreg("reparse", *arguments)
    assert result.exit_code == 2 and message in result.output
    assert len(job_rows(engine, "xml_parsing")) == 3  # only the uploads


def test_stale_queues_parser_change_jobs_for_what_the_new_parser_has_not_taken(
    hreg, engine, settings, entities, monkeypatch
):
    assert hreg("reparse", "--stale").output.splitlines() == [
        f"queued 0 parser_change re-parse jobs for parser {PARSER_VERSION}, 0 already active",
        f"every stored SI document has been taken by parser {PARSER_VERSION}",
    ]

    with engine.begin() as conn:  # parser 9.0.0 is deployed, as `hreg db upgrade` records it
        sync_job_types(conn, settings, JOB_TYPES.deploying(JOB_TYPES.xml_parsing, "9.0.0").versions())
    monkeypatch.setenv("HREG_USER_ID", USER)  # a user in the environment is no request for a manual job
    result = hreg("reparse", "--stale")
    assert result.output.strip() == "queued 3 parser_change re-parse jobs for parser 9.0.0, 0 already active"
    assert hreg("reparse", "--stale").output.startswith(
        "queued 0 parser_change re-parse jobs for parser 9.0.0, 3 already active"
    )
    queued = [j for j in job_rows(engine, "xml_parsing") if j.trigger == "parser_change"]
    assert {(j.parser_version, j.requested_by, j.reason) for j in queued} == {("9.0.0", None, None)}


def test_a_court_scope_queues_manual_jobs_for_that_courts_companies_only(hreg, engine, entities):
    user = ("--reason", "court names re-mapped", "--user", USER)
    assert hreg("reparse", "--court", "F1103", *user).output.splitlines() == [
        f"queued 0 manual re-parse jobs for parser {PARSER_VERSION}, 0 already active",
        "nothing to re-parse in this scope",
    ]
    assert hreg("reparse", "--court", "d2601", *user).output.startswith("queued 3 manual")
    refused = hreg("reparse", "--court", "Z9999", *user)
    assert refused.exit_code == 2 and "not a register court: Z9999" in refused.output
    assert len(manual_jobs(engine)) == 3
