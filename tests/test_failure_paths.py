"""Failure paths: retries with backoff and then the final failure, for each job type and each link
(search, entity); the step history of every attempt; permanent failure classes; the stage gate."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import pytest
import sqlalchemy as sa

from orchestration.runtime import queue
from orchestration.runtime.failures import FailureClass, JobError
from queue_helpers import (
    claim_and_fail,
    claim_one,
    download_shareholder_list,
    entity,
    history,
    insert_entity,
    insert_search,
    job,
    make_due,
    request_research,
    search,
    store_si_document,
)


@dataclass(frozen=True)
class FailurePath:
    """A job type on one link: how to create its job, and the status it leaves on the linked record."""

    job_type: str
    create: Callable[[sa.Connection], str]  # returns the id of the linked search or entity
    linked_status: Callable[[sa.Connection, str], str]
    final_status: str


def discovery_requested_by_user(conn: sa.Connection) -> str:
    return insert_entity(conn, "basic_discovery_running")


def shareholder_research_requested(conn: sa.Connection) -> str:
    entity_id = insert_entity(conn, "parsed")
    request_research(conn, entity_id)
    return entity_id


def shareholder_list_downloaded(conn: sa.Connection) -> str:
    entity_id = shareholder_research_requested(conn)
    download_shareholder_list(conn, entity_id)
    return entity_id


def search_status(conn: sa.Connection, search_id: str) -> str:
    return search(conn, search_id).status


def processing_status(conn: sa.Connection, entity_id: str) -> str:
    return entity(conn, entity_id).processing_status


def shareholder_research_status(conn: sa.Connection, entity_id: str) -> str:
    return entity(conn, entity_id).shareholder_research_status


FAILURE_PATHS = {
    "basic_discovery-search": FailurePath("basic_discovery", insert_search, search_status, "failed"),
    "basic_discovery-entity": FailurePath(
        "basic_discovery", discovery_requested_by_user, processing_status, "xml_download_failed"
    ),
    "xml_parsing-entity": FailurePath(
        "xml_parsing", lambda conn: insert_entity(conn, "xml_ready"), processing_status, "xml_parsing_failed"
    ),
    "shareholder_download-entity": FailurePath(
        "shareholder_download", shareholder_research_requested, shareholder_research_status, "failed"
    ),
    "shareholder_parsing-entity": FailurePath(
        "shareholder_parsing", shareholder_list_downloaded, shareholder_research_status, "failed"
    ),
}
# seeds/002's classes; lease_expired, the reaper's, is tested in test_lease_reaping.
TRANSIENT_CLASSES = [FailureClass.DEPENDENCY_UNAVAILABLE, FailureClass.TIMEOUT]
PERMANENT_CLASSES = [FailureClass.INVALID_FILE, FailureClass.PARSER_ERROR, FailureClass.UNSUPPORTED_VERSION]


def attempt_error(attempt: int) -> JobError:
    """A distinct transient error per attempt, so that each history row can be matched to its attempt."""
    failure_class = TRANSIENT_CLASSES[attempt % len(TRANSIENT_CLASSES)]
    return JobError(failure_class, f"attempt {attempt} failed", source="register", code=f"50{attempt}")


def history_step(row: sa.Row) -> tuple[str, int, dict | None]:
    """A history row as (status, attempt, structured error), the error as JobError.to_error() gives it."""
    error = None
    if row.error_message is not None:
        error = {
            "type": row.error_type,
            "message": row.error_message,
            "source": row.error_source,
            "code": row.error_code,
        }
    return row.status, row.attempt_number, error


@pytest.mark.parametrize("path", FAILURE_PATHS.values(), ids=FAILURE_PATHS.keys())
def test_transient_failures_are_retried_with_backoff_then_fail_the_linked_record(engine, path):
    with engine.begin() as conn:
        subject_id = path.create(conn)
        settings = queue.job_types(conn)[path.job_type]
        assert path.linked_status(conn, subject_id) != path.final_status

    attempts = settings.max_retries + 1
    for attempt in range(1, attempts):
        with engine.begin() as conn:
            job_id = claim_and_fail(conn, path.job_type, attempt_error(attempt))
            retried = job(conn, job_id)
            waited = retried.next_attempt_at - conn.execute(sa.text("SELECT now()")).scalar_one()
            assert (retried.status, retried.retry_count) == ("queued", attempt)
            assert (retried.worker_id, retried.started_at, retried.failure_class) == (None, None, None)
            # Exponential backoff from job_types, capped, with jitter of up to half the delay.
            delay = min(settings.backoff_cap_s, settings.backoff_base_s * 2 ** (attempt - 1))
            assert timedelta(seconds=delay / 2) <= waited <= timedelta(seconds=delay)
            assert path.linked_status(conn, subject_id) != path.final_status
            make_due(conn, job_id)

    with engine.begin() as conn:
        assert claim_and_fail(conn, path.job_type, attempt_error(attempts)) == job_id
        failed = job(conn, job_id)
        assert (failed.status, failed.retry_count) == ("failed", settings.max_retries)
        assert failed.failure_class == attempt_error(attempts).failure_class
        assert path.linked_status(conn, subject_id) == path.final_status
        assert queue.claim(conn, path.job_type, 10, "worker-2", 60) == []

        # Only basic_discovery jobs log their creation.
        expected = [("queued", 1, None)] if path.job_type == "basic_discovery" else []
        for attempt in range(1, attempts + 1):
            expected += [("running", attempt, None), ("failed", attempt, attempt_error(attempt).to_error())]
            if attempt < attempts:
                expected.append(("queued", attempt + 1, None))
        assert [history_step(row) for row in history(conn, job_id)] == expected


@pytest.mark.parametrize("failure_class", PERMANENT_CLASSES)
@pytest.mark.parametrize("path", FAILURE_PATHS.values(), ids=FAILURE_PATHS.keys())
def test_permanent_failure_classes_fail_at_once_without_retries(engine, path, failure_class):
    with engine.begin() as conn:
        subject_id = path.create(conn)
    with engine.begin() as conn:
        error = JobError(
            failure_class, "element 'rechtstraeger' missing", source="xjustiz", code="/nachricht/grunddaten"
        )
        job_id = claim_and_fail(conn, path.job_type, error)
        failed = job(conn, job_id)
        assert (failed.status, failed.retry_count, failed.failure_class) == ("failed", 0, failure_class)
        assert path.linked_status(conn, subject_id) == path.final_status
        last = history(conn, job_id)[-1]
        assert (last.status, last.attempt_number) == ("failed", 1)
        assert (last.error_type, last.error_message, last.error_source, last.error_code) == (
            failure_class,
            "element 'rechtstraeger' missing",
            "xjustiz",
            "/nachricht/grunddaten",
        )


def test_a_final_failure_of_a_parse_of_an_older_document_leaves_the_entity_to_the_newer_one(engine):
    with engine.begin() as conn:
        entity_id = insert_entity(conn, "xml_ready")
        older = claim_one(conn, "xml_parsing")
    with engine.begin() as conn:
        store_si_document(conn, entity_id)
        queue.fail(conn, "worker-1", [(older.id, JobError("parser_error", "cannot read"))])
        assert job(conn, older.id).status == "failed"
        assert processing_status(conn, entity_id) == "xml_ready"


def test_a_worker_cannot_report_a_job_it_does_not_hold(engine):
    with engine.begin() as conn:
        insert_search(conn)
        claimed = claim_one(conn, "basic_discovery", worker_id="worker-1")
        assert queue.fail(conn, "worker-2", [(claimed.id, JobError("timeout", "slow"))]) == set()
        assert queue.complete(conn, "worker-2", [(claimed.id, {})]) == set()
        assert job(conn, claimed.id).status == "running"


# The stage gate: a later stage of an entity waits while an earlier one is unfinished or failed.


def test_a_parse_waits_for_the_discovery_of_its_entity_and_stays_blocked_after_it_fails(engine):
    with engine.begin() as conn:
        entity_id = insert_entity(conn, "basic_discovery_running")
        discovery = claim_one(conn, "basic_discovery")
        store_si_document(conn, entity_id)
    with engine.begin() as conn:
        assert queue.count_due(conn, "xml_parsing") == 0
        queue.fail(conn, "worker-1", [(discovery.id, JobError("invalid_file", "not a result page"))])
    with engine.begin() as conn:
        assert queue.claim(conn, "xml_parsing", 10, "worker-1", 60) == []


def test_a_later_successful_discovery_releases_the_blocked_parse(engine):
    with engine.begin() as conn:
        entity_id = insert_entity(conn, "basic_discovery_running")
        discovery = claim_one(conn, "basic_discovery")
        store_si_document(conn, entity_id)
        queue.fail(conn, "worker-1", [(discovery.id, JobError("invalid_file", "not a result page"))])
    with engine.begin() as conn:
        rerun_id = queue.enqueue(
            conn,
            "basic_discovery",
            entity_id=entity_id,
            trigger="manual",
            requested_by=str(uuid.uuid4()),
            reason="portal page fixed",
            previous_job_id=discovery.id,
        )
    with engine.begin() as conn:
        assert claim_one(conn, "basic_discovery").id == rerun_id
        assert queue.count_due(conn, "xml_parsing") == 0
        queue.complete(conn, "worker-1", [(rerun_id, {})])
    with engine.begin() as conn:
        assert claim_one(conn, "xml_parsing").entity_id == entity_id
