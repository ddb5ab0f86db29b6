"""A person asks for a company's current printout (AD, "Aktueller Abdruck"): the application's SQL
function or `hreg entity printout` queues an interactive printout_download job, the sensor's run
downloads the PDF from the sample register over HTTP, stores it as a document (on S3 too) and
reports the company's court partition of `printouts`; a request within the freshness window
reuses the stored printout, and `hreg entity show` lists it."""

from __future__ import annotations

import io
import json
import uuid

import boto3
import dagster as dg
import pdfplumber
import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from orchestration.cli import main
from orchestration.definitions import build_definitions
from orchestration.runtime.failures import FailureClass, JobError
from pipeline_helpers import history_rows, job_rows, materializations_of, run_what_the_sensor_requests
from queue_helpers import claim_and_fail, request_research, store_si_document
from service_helpers import moto_s3_server

BUCKET = "hreg-printouts"


def request_as_application(engine: sa.Engine, entity_id: str, user: str | None) -> str:
    with engine.begin() as conn:
        conn.execute(sa.text("SET LOCAL ROLE hreg_app"))
        return str(
            conn.execute(
                sa.text("SELECT processing.request_printout(:e, :u)"), {"e": entity_id, "u": user}
            ).scalar_one()
        )


@pytest.fixture
def company(configured_sample_register):
    """A company of the sample register, known to the database as a search would have found it."""
    companies = configured_sample_register.corpus.companies
    names = [c.name for c in companies]
    return next(c for c in companies if c.seed is not None and not c.deleted and names.count(c.name) == 1)


@pytest.fixture
def entity_id(engine, company) -> str:
    with engine.begin() as conn:
        return str(
            conn.execute(
                sa.text("""
                    INSERT INTO content.entities (court_code, court_name, register_type, register_number,
                                                  register_suffix, name)
                    VALUES (:court, :court_name, :type, :number, :suffix, :name) RETURNING id"""),
                {
                    "court": company.court.code,
                    "court_name": company.court.name,
                    "type": company.register_type,
                    "number": company.register_number,
                    "suffix": company.register_suffix or "",
                    "name": company.name,
                },
            ).scalar_one()
        )


def printout_rows(engine: sa.Engine, entity_id: str) -> list[sa.Row]:
    with engine.connect() as conn:
        return conn.execute(
            sa.text("""SELECT id::text, media_type, content IS NULL AS elsewhere, storage_path
                         FROM content.raw_documents WHERE entity_id = :e AND kind = 'printout'"""),
            {"e": entity_id},
        ).all()


def text_of(pdf: bytes) -> str:
    with pdfplumber.open(io.BytesIO(pdf)) as document:
        return "\n".join(page.extract_text() or "" for page in document.pages)


@pytest.fixture
def s3_settings(sample_register_settings, tmp_path, monkeypatch):
    """The test's settings with every document, however small, in a bucket of moto's S3 server."""
    with moto_s3_server(tmp_path / "moto") as environment:
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        boto3.client("s3").create_bucket(
            Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": "eu-central-1"}
        )
        yield sample_register_settings.model_copy(
            update={"document_store": f"s3://{BUCKET}/register", "document_inline_limit_bytes": 0}
        )


def test_a_persons_request_is_downloaded_stored_on_s3_and_reported_for_its_court(
    engine, company, entity_id, s3_settings, configured_sample_register
):
    user = str(uuid.uuid4())
    job_id = request_as_application(engine, entity_id, user)
    assert request_as_application(engine, entity_id, user) == job_id  # asked again while queued: the same job
    (queued,) = job_rows(engine, "printout_download")
    assert (queued.status, queued.priority, queued.trigger, str(queued.requested_by), queued.reason) == (
        "queued",
        "interactive",
        "manual",
        user,
        "printout requested",
    )

    served_before = len(configured_sample_register.retrieval_log.retrievals)
    defs = build_definitions(s3_settings)
    with dg.instance_for_test() as instance:
        (run,) = run_what_the_sensor_requests(defs, "printout_download", instance)
    # The company's row found again by its register number, and its AD downloaded.
    assert configured_sample_register.retrieval_log.kinds(since=served_before) == {"entity_lookup": 1, "document": 1}

    (job,) = job_rows(engine, "printout_download")
    assert job.status == "completed" and job.result["retrieved"] is True
    steps = [(h.status, h.dagster_run_id) for h in history_rows(engine, job_id)]
    assert steps == [("running", run.run_id), ("completed", run.run_id)]

    (printout,) = printout_rows(engine, entity_id)
    assert job.result["raw_document_id"] == printout.id
    assert (printout.media_type, printout.elsewhere) == ("application/pdf", True)
    # The bytes are in the bucket under the row's key, and read back as the register's printout.
    stored = boto3.client("s3").get_object(Bucket=BUCKET, Key=f"register/{printout.storage_path}")["Body"].read()
    text = text_of(stored)
    assert "Aktueller Abdruck" in text
    assert f"Amtsgericht {company.court.name} {company.designation}" in text

    (materialization,) = materializations_of(run, "printouts")
    assert materialization.partition == company.court.code[:5]
    assert materialization.metadata["completed"].value == 1


def test_a_request_within_the_freshness_window_reuses_the_stored_printout(
    engine, entity_id, sample_register_settings, configured_sample_register
):
    defs = build_definitions(sample_register_settings)
    with dg.instance_for_test() as instance:
        request_as_application(engine, entity_id, str(uuid.uuid4()))
        (first_run,) = run_what_the_sensor_requests(defs, "printout_download", instance)
        served_before = len(configured_sample_register.retrieval_log.retrievals)
        request_as_application(engine, entity_id, str(uuid.uuid4()))
        (again,) = run_what_the_sensor_requests(defs, "printout_download", instance)

    assert configured_sample_register.retrieval_log.kinds(since=served_before) == {}
    first, second = job_rows(engine, "printout_download")
    assert second.status == "completed" and second.result["retrieved"] is False
    assert second.result["raw_document_id"] == first.result["raw_document_id"]
    assert len(printout_rows(engine, entity_id)) == 1
    # The partition is reported again, with the same printout: its data version does not change.
    (reported,) = materializations_of(first_run, "printouts")
    (reported_again,) = materializations_of(again, "printouts")
    assert reported_again.partition == reported.partition
    assert reported_again.tags == reported.tags and reported.tags

    # Outside the window the register is asked again.
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE processing.processing_jobs SET completed_at = completed_at - interval '25 hours'"))
    request_as_application(engine, entity_id, str(uuid.uuid4()))
    with dg.instance_for_test() as instance:
        run_what_the_sensor_requests(defs, "printout_download", instance)
    assert job_rows(engine, "printout_download")[-1].result["retrieved"] is True


def test_the_cli_requests_a_printout_and_entity_show_lists_it(
    engine, entity_id, sample_register_settings, configured_sample_register
):
    runner = CliRunner()
    requested = runner.invoke(main, ["entity", "printout", entity_id, "--user", str(uuid.uuid4())])
    assert requested.exit_code == 0, requested.output
    (job,) = job_rows(engine, "printout_download")
    assert str(job.id) in requested.output and job.priority == "interactive"

    before = runner.invoke(main, ["entity", "show", entity_id])
    assert f"no printout yet (ask with: hreg entity printout {entity_id})" in before.output

    with dg.instance_for_test() as instance:
        run_what_the_sensor_requests(build_definitions(sample_register_settings), "printout_download", instance)
    (printout,) = printout_rows(engine, entity_id)

    shown = runner.invoke(main, ["entity", "show", entity_id])
    assert shown.exit_code == 0, shown.output
    (line,) = [line for line in shown.output.splitlines() if printout.id in line]
    assert "printout" in line.split()
    assert "no printout yet" not in shown.output
    view = json.loads(runner.invoke(main, ["entity", "show", entity_id, "--json"]).output)
    assert [(d["id"], d["kind"], d["media_type"]) for d in view["documents"]] == [
        (printout.id, "printout", "application/pdf")
    ]


def test_the_request_function_is_the_applications_alone_and_refuses_an_unknown_company(engine, entity_id):
    with engine.connect() as conn:
        function = conn.execute(
            sa.text("""
                SELECT p.prosecdef AS definer, p.proconfig AS config,
                       has_function_privilege('public', p.oid, 'EXECUTE') AS public,
                       has_function_privilege('hreg_app', p.oid, 'EXECUTE') AS app,
                       has_function_privilege('hreg_worker', p.oid, 'EXECUTE') AS worker
                  FROM pg_proc p WHERE p.oid = 'processing.request_printout'::regproc""")
        ).one()
    assert function.definer and function.config == ["search_path=pg_catalog, processing, content, pg_temp"]
    assert (function.public, function.app, function.worker) == (False, True, False)

    with pytest.raises(sa.exc.DBAPIError, match="does not exist"):
        request_as_application(engine, str(uuid.uuid4()), None)
    # The application may not queue the job behind the function's back.
    with engine.begin() as conn, pytest.raises(sa.exc.DBAPIError, match="permission denied"):
        conn.execute(sa.text("SET LOCAL ROLE hreg_app"))
        conn.execute(
            sa.text("INSERT INTO processing.processing_jobs (type, entity_id) VALUES ('printout_download', :e)"),
            {"e": entity_id},
        )


def due(engine: sa.Engine, job_type: str) -> list[str]:
    with engine.connect() as conn:
        ids = conn.execute(sa.text("SELECT id FROM processing.due_jobs WHERE type = :t"), {"t": job_type}).scalars()
        return [str(i) for i in ids]


def test_a_printout_waits_for_no_other_job_of_its_company_and_holds_none_back(engine, entity_id):
    no_list = JobError(FailureClass.INVALID_FILE, "the DK tree holds no shareholder list", source="test")
    with engine.begin() as conn:
        # The company files no shareholder list: its download failed for good.
        request_research(conn, entity_id)
        claim_and_fail(conn, "shareholder_download", no_list)
    printout = request_as_application(engine, entity_id, str(uuid.uuid4()))
    assert due(engine, "printout_download") == [printout]

    with engine.begin() as conn:
        claim_and_fail(conn, "printout_download", JobError(FailureClass.INVALID_FILE, "not a PDF", source="test"))
        store_si_document(conn, entity_id)  # its parse is queued
    (parse,) = job_rows(engine, "xml_parsing")
    assert due(engine, "xml_parsing") == [str(parse.id)]
