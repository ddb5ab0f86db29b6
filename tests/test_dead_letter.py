"""The dead letter (seeds/002): jobs that failed for good, permanently or after their last retry, are
listed with their class and last error; `hreg jobs retry` queues a manual job that takes one up."""

from __future__ import annotations

import json
import uuid

import sqlalchemy as sa
from click.testing import CliRunner

from orchestration.cli import main
from orchestration.runtime import queue
from orchestration.runtime.failures import JobError
from queue_helpers import claim_and_fail, claim_one, entity, insert_entity, insert_search, job, make_due

BROKEN = JobError("parser_error", "element 'rechtstraeger' missing", source="xjustiz", code="/nachricht/grunddaten")


def fail_for_good_after_retries(engine: sa.Engine) -> str:
    """A search's discovery that times out on every attempt; returns the job."""
    with engine.begin() as conn:
        insert_search(conn)
        max_retries = queue.job_types(conn)["basic_discovery"].max_retries
    for attempt in range(max_retries + 1):
        with engine.begin() as conn:
            job_id = claim_and_fail(
                conn, "basic_discovery", JobError("timeout", f"attempt {attempt + 1} took too long")
            )
            make_due(conn, job_id)
    return job_id


def fail_permanently(engine: sa.Engine) -> tuple[str, str]:
    """An entity whose SI document the parser cannot read; returns (entity, job)."""
    with engine.begin() as conn:
        entity_id = insert_entity(conn, "xml_ready")
        return entity_id, claim_and_fail(conn, "xml_parsing", BROKEN)


def hreg(*args: str):
    result = CliRunner().invoke(main, list(args))
    return result


def listed(*args: str) -> list[dict]:
    result = hreg("jobs", "dead-letter", "--json", *args)
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines()]


def test_jobs_that_failed_for_good_are_listed_with_class_and_last_error(engine):
    exhausted = fail_for_good_after_retries(engine)
    entity_id, broken = fail_permanently(engine)
    with engine.begin() as conn:  # a transient failure with retries left is re-queued, not dead
        insert_search(conn)
        still_retrying = claim_and_fail(conn, "basic_discovery", JobError("dependency_unavailable", "503"))

    rows = {row["id"]: row for row in listed()}
    assert set(rows) == {exhausted, broken}
    assert still_retrying not in rows
    assert (rows[broken]["type"], rows[broken]["failure_class"], rows[broken]["permanent"]) == (
        "xml_parsing",
        "parser_error",
        True,
    )
    assert (rows[broken]["last_error"], rows[broken]["error_code"]) == (BROKEN.message, BROKEN.code)
    assert rows[broken]["attempts"] == 1 and rows[broken]["entity_id"] == entity_id
    with engine.connect() as conn:
        max_retries = queue.job_types(conn)["basic_discovery"].max_retries
    assert (rows[exhausted]["failure_class"], rows[exhausted]["permanent"]) == ("timeout", False)
    assert rows[exhausted]["attempts"] == max_retries + 1
    assert rows[exhausted]["last_error"] == f"attempt {max_retries + 1} took too long"

    assert [row["id"] for row in listed("--type", "xml_parsing")] == [broken]
    assert [row["id"] for row in listed("--class", "timeout")] == [exhausted]
    assert listed("--type", "shareholder_parsing") == []

    table = hreg("jobs", "dead-letter")
    assert table.exit_code == 0, table.output
    assert broken in table.output and "permanent" in table.output and "retries exhausted" in table.output
    assert "element 'rechtstraeger' missing" in table.output


def test_an_unknown_type_or_class_is_refused(engine):
    assert "unknown job type" in hreg("jobs", "dead-letter", "--type", "xml_parse").output
    assert hreg("jobs", "dead-letter", "--class", "oops").exit_code != 0


def test_a_retry_queues_a_manual_job_that_takes_up_the_failed_one_and_completes_it(engine):
    entity_id, broken = fail_permanently(engine)
    user = str(uuid.uuid4())
    result = hreg("jobs", "retry", broken, "--reason", "parser 1.4 reads this producer", "--user", user)
    assert result.exit_code == 0, result.output
    with engine.begin() as conn:
        (retry_id,) = conn.execute(
            sa.text("SELECT id::text FROM processing.processing_jobs WHERE previous_job_id = :j"), {"j": broken}
        ).scalars()
        retried, original = job(conn, retry_id), job(conn, broken)
        assert retry_id in result.output
        assert (retried.type, retried.status, retried.trigger) == ("xml_parsing", "queued", "manual")
        assert (str(retried.requested_by), retried.reason) == (user, "parser 1.4 reads this producer")
        assert (retried.entity_id, retried.raw_document_id) == (original.entity_id, original.raw_document_id)
        assert entity(conn, entity_id).processing_status == "xml_parsing_failed"
    assert broken not in [row["id"] for row in listed()]  # taken up: no longer in the dead letter

    with engine.begin() as conn:
        claimed = claim_one(conn, "xml_parsing")
        assert claimed.id == retry_id
        queue.complete(conn, "worker-1", [(claimed.id, {"revision": 1})])
        assert entity(conn, entity_id).processing_status == "parsed"


def test_a_retry_is_refused_for_a_job_that_is_not_failed_was_retried_or_does_not_exist(engine):
    _, broken = fail_permanently(engine)
    user = str(uuid.uuid4())
    with engine.begin() as conn:
        insert_search(conn)
        (queued,) = conn.execute(
            sa.text("SELECT id::text FROM processing.processing_jobs WHERE status = 'queued'")
        ).scalars()

    not_failed = hreg("jobs", "retry", queued, "--reason", "again", "--user", user)
    assert not_failed.exit_code != 0 and "is queued, not failed" in not_failed.output

    first = hreg("jobs", "retry", broken, "--reason", "again", "--user", user)
    twice = hreg("jobs", "retry", broken, "--reason", "again", "--user", user)
    assert first.exit_code == 0, first.output
    assert twice.exit_code != 0 and "taken up already" in twice.output

    unknown = hreg("jobs", "retry", str(uuid.uuid4()), "--reason", "again", "--user", user)
    assert unknown.exit_code != 0 and "does not exist" in unknown.output

    no_reason = hreg("jobs", "retry", broken, "--reason", " ", "--user", user)
    assert no_reason.exit_code != 0 and "reason" in no_reason.output
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM processing.processing_jobs")).scalar_one() == 3


def test_a_retry_needs_the_person_who_asks(engine, monkeypatch):
    _, broken = fail_permanently(engine)
    monkeypatch.delenv("HREG_USER_ID", raising=False)
    result = hreg("jobs", "retry", broken, "--reason", "again")
    assert result.exit_code != 0 and "--user" in result.output
