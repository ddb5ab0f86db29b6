"""A person's shareholder request goes request -> download -> parse -> completed, and stays theirs:
the parsing job carries the download's trigger, requester and reason and points back at it.

Through the SQL function the application calls (as the application's role), and through the real
sensors and Dagster runs against the sample register."""

from __future__ import annotations

import uuid

import dagster as dg
import sqlalchemy as sa

from orchestration.definitions import build_definitions
from orchestration.runtime import queue
from pipeline_helpers import history_rows, job_rows, run_what_the_sensor_requests
from queue_helpers import claim_one, insert_entity, insert_raw_document

REASON = "shareholder research requested"  # what request_shareholder_research records for a person


def request_as_application(engine: sa.Engine, entity_id: str, user: str | None) -> str:
    with engine.begin() as conn:
        conn.execute(sa.text("SET LOCAL ROLE hreg_app"))
        return str(
            conn.execute(
                sa.text("SELECT processing.request_shareholder_research(:e, :u)"), {"e": entity_id, "u": user}
            ).scalar_one()
        )


def research_status(engine: sa.Engine, entity_id: str) -> str:
    with engine.connect() as conn:
        return conn.execute(
            sa.text("SELECT shareholder_research_status FROM content.entities WHERE id = :e"), {"e": entity_id}
        ).scalar_one()


def test_a_request_with_a_user_completes_and_its_parse_is_the_same_request(engine):
    with engine.begin() as conn:
        entity_id = insert_entity(conn, "parsed")
    user = str(uuid.uuid4())
    download_id = request_as_application(engine, entity_id, user)
    assert research_status(engine, entity_id) == "requested"

    with engine.begin() as conn:
        conn.execute(sa.text("SET LOCAL ROLE hreg_worker"))
        download = claim_one(conn, "shareholder_download", "worker-1")
        assert download.id == download_id
        list_id = insert_raw_document(conn, entity_id, kind="shareholder_list")
        assert queue.complete(conn, "worker-1", [(download.id, {"raw_document_id": list_id})]) == {download.id}

    (parse,) = job_rows(engine, "shareholder_parsing")
    assert (parse.status, parse.trigger, str(parse.requested_by), parse.reason) == ("queued", "manual", user, REASON)
    assert (str(parse.previous_job_id), str(parse.raw_document_id)) == (download_id, list_id)

    with engine.begin() as conn:
        conn.execute(sa.text("SET LOCAL ROLE hreg_worker"))
        claimed = claim_one(conn, "shareholder_parsing", "worker-1")
        queue.complete(conn, "worker-1", [(claimed.id, {"shareholders": 2})])
    assert research_status(engine, entity_id) == "completed"


def test_a_request_without_a_user_stays_automatic_through_the_parse(engine):
    with engine.begin() as conn:
        entity_id = insert_entity(conn, "parsed")
    download_id = request_as_application(engine, entity_id, None)
    with engine.begin() as conn:
        download = claim_one(conn, "shareholder_download", "worker-1")
        list_id = insert_raw_document(conn, entity_id, kind="shareholder_list")
        queue.complete(conn, "worker-1", [(download.id, {"raw_document_id": list_id})])
    (parse,) = job_rows(engine, "shareholder_parsing")
    assert (parse.trigger, parse.requested_by, parse.reason, str(parse.previous_job_id)) == (
        "automatic",
        None,
        None,
        download_id,
    )


def test_a_request_with_a_user_runs_to_completed_through_sensors_and_runs(
    engine, configured_sample_register, sample_register_settings
):
    companies = configured_sample_register.corpus.companies
    names = [c.name for c in companies]
    company = next(
        c
        for c in companies
        if c.legal_form == "GmbH" and c.files_shareholder_lists and c.capital and names.count(c.name) == 1
    )
    user = str(uuid.uuid4())
    with engine.begin() as conn:
        conn.execute(
            sa.text("INSERT INTO public.searches (user_id, query, mode) VALUES (:u, :q, 'exact')"),
            {"u": user, "q": company.name},
        )
    defs = build_definitions(sample_register_settings)
    with dg.instance_for_test() as instance:
        # The search opens its result for its person: the discovery run fetches and parses its SI.
        run_what_the_sensor_requests(defs, "basic_discovery", instance)
        with engine.connect() as conn:
            entity_id, status = conn.execute(sa.text("SELECT id::text, processing_status FROM content.entities")).one()
        assert status == "parsed"
        download_id = request_as_application(engine, entity_id, user)
        download_runs = run_what_the_sensor_requests(defs, "shareholder_download", instance)
        parsing_runs = run_what_the_sensor_requests(defs, "shareholder_parsing", instance)

    assert research_status(engine, entity_id) == "completed"
    (download,) = job_rows(engine, "shareholder_download")
    (parse,) = job_rows(engine, "shareholder_parsing")
    assert str(download.id) == download_id
    for job in (download, parse):
        assert (job.status, job.trigger, str(job.requested_by), job.reason) == ("completed", "manual", user, REASON)
    assert str(parse.previous_job_id) == download_id
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT count(*) FROM content.shareholders WHERE entity_id = :e"), {"e": entity_id}
        ).scalar_one()
    assert rows > 0
    # Each job's completion is recorded with the run that worked it.
    for job, runs in ((download, download_runs), (parse, parsing_runs)):
        completed = [h.dagster_run_id for h in history_rows(engine, job.id) if h.status == "completed"]
        assert completed and set(completed) <= {r.run_id for r in runs}
