"""Re-parses of stored SI documents against the real database: revisions written only for what
changed, previous_job links, one active job per document and parser version, failure classes,
and the history of a company's record."""

from __future__ import annotations

import time
import uuid

import dagster as dg
import pytest
import sqlalchemy as sa

import assets.company_records
import orchestration.stages.parsing
from orchestration import queue
from orchestration.definitions import build_definitions
from orchestration.documents import DocumentStore
from orchestration.reparse import ReparseScope, enqueue_reparse
from orchestration.revisions import record_as_of
from orchestration.settings import get_settings
from orchestration.stages.parsing import XmlParsingStage
from orchestration.worker import run_batch
from orchestration.xjustiz import PARSER_VERSION, parse_si
from pipeline_helpers import add_entity_with_si, history_rows, sample_si_files

NEXT_VERSION = f"{PARSER_VERSION}-next"
USER = str(uuid.uuid4())


@pytest.fixture
def store(db_url) -> DocumentStore:
    return DocumentStore(get_settings().documents_dir)


@pytest.fixture
def parsed(engine, store, samples_dir) -> dict[str, str]:
    """Six entities whose SI documents were parsed on upload: entity id -> register number in its document."""
    for i, path in enumerate(sample_si_files(samples_dir)[:6]):
        add_entity_with_si(engine, store, path.read_bytes(), number=str(500 + i))
    report = run_batch(engine, XmlParsingStage(store), "upload-worker")
    assert (report.claimed, report.completed) == (6, 6)
    numbers = {str(r.entity_id): r.record["register"]["number"] for r in revisions(engine)}
    assert len(set(numbers.values())) == 6
    return numbers


def deploy_parser(monkeypatch, version: str, renamed_numbers: frozenset[str] = frozenset()) -> None:
    """What deploying a new parser version changes in this process: the version the asset runs
    with, and the parse function (which names the companies in ``renamed_numbers`` differently)."""

    def new_parse_si(data: bytes, **options):
        record = parse_si(data, **options)
        if record.register.number in renamed_numbers:
            record = record.model_copy(update={"name": f"{record.name} (neu)"})
        return record.model_copy(update={"parser_version": version})

    monkeypatch.setattr(assets.company_records, "PARSER_VERSION", version)
    monkeypatch.setattr(orchestration.stages.parsing, "parse_si", new_parse_si)


def materialize_company_records(reparse: str = "stale") -> dg.ExecuteInProcessResult:
    """A run of company_records as launched from the UI (config ``reparse``), executed in process."""
    with dg.instance_for_test() as instance:
        result = build_definitions().resolve_job_def("xml_parsing_job").execute_in_process(
            instance=instance, run_config={"ops": {"company_records": {"config": {"reparse": reparse}}}}
        )
    assert result.success
    return result


def materialization_metadata(result: dg.ExecuteInProcessResult) -> dict:
    (materialization,) = result.asset_materializations_for_node("company_records")
    return {key: value.value for key, value in materialization.metadata.items()}


def revisions(engine) -> list[sa.Row]:
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT * FROM content.entity_revisions ORDER BY id")).all()


def jobs_by_entity(engine, **where: str) -> dict[str, sa.Row]:
    conditions = " AND ".join(f"{column} = :{column}" for column in where)
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text(f"SELECT * FROM processing.processing_jobs WHERE type = 'xml_parsing' AND {conditions}"), where
        ).all()
    return {str(row.entity_id): row for row in rows}


def database_now(engine):
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT now()")).scalar_one()


def test_a_version_bump_with_unchanged_output_writes_no_revision(engine, parsed, monkeypatch):
    before = revisions(engine)
    uploads = jobs_by_entity(engine, trigger="upload")
    deploy_parser(monkeypatch, NEXT_VERSION)

    metadata = materialization_metadata(materialize_company_records())

    assert (metadata["reparses_queued"], metadata["completed"], metadata["total_new_revision"]) == (6, 6, 0)
    assert revisions(engine) == before
    reparses = jobs_by_entity(engine, trigger="parser_change")
    assert set(reparses) == set(parsed)
    for entity_id, job in reparses.items():
        assert (job.status, job.parser_version, job.requested_by, job.reason) == ("completed", NEXT_VERSION, None, None)
        assert job.previous_job_id == uploads[entity_id].id
        assert job.raw_document_id == uploads[entity_id].raw_document_id  # the stored document, not a download
    # Nothing is stale any more: launching again queues nothing.
    assert materialization_metadata(materialize_company_records())["reparses_queued"] == 0


def test_a_parser_change_writes_exactly_the_changed_records_and_keeps_their_history(engine, parsed, monkeypatch):
    renamed = set(list(parsed)[1:3])
    old_names = {str(r.entity_id): r.record["name"] for r in revisions(engine)}
    uploads = jobs_by_entity(engine, trigger="upload")
    before_reparse = database_now(engine)
    deploy_parser(monkeypatch, NEXT_VERSION, frozenset(parsed[e] for e in renamed))

    metadata = materialization_metadata(materialize_company_records())

    assert (metadata["completed"], metadata["total_new_revision"]) == (6, 2)
    reparses = jobs_by_entity(engine, trigger="parser_change")
    new_revisions = revisions(engine)[6:]
    assert {str(r.entity_id) for r in new_revisions} == renamed
    for revision in new_revisions:
        entity_id = str(revision.entity_id)
        assert revision.record["name"] == f"{old_names[entity_id]} (neu)"
        assert (revision.job_id, revision.parser_version) == (reparses[entity_id].id, NEXT_VERSION)
    assert {e: job.result["new_revision"] for e, job in reparses.items()} == {e: e in renamed for e in parsed}
    with engine.connect() as conn:
        names = dict(conn.execute(sa.text("SELECT id::text, name FROM content.entities")).all())
        entity_id = next(iter(renamed))
        then = record_as_of(conn, entity_id, before_reparse)
        now = record_as_of(conn, entity_id, database_now(engine))
        unchanged_id = next(e for e in parsed if e not in renamed)
        unchanged_now = record_as_of(conn, unchanged_id, database_now(engine))
    assert {e: names[e] for e in renamed} == {e: f"{old_names[e]} (neu)" for e in renamed}
    assert (then["record"]["name"], then["job_id"], then["parser_version"]) == (
        old_names[entity_id], uploads[entity_id].id, PARSER_VERSION)
    assert (now["record"]["name"], now["job_id"]) == (f"{old_names[entity_id]} (neu)", reparses[entity_id].id)
    # An unchanged record is still the one its first parse wrote.
    assert unchanged_now["job_id"] == uploads[unchanged_id].id


def test_the_same_reparse_asked_twice_is_queued_once_and_finished_work_can_run_again(engine, parsed, store):
    with engine.begin() as conn:
        first = enqueue_reparse(conn, ReparseScope(), parser_version=NEXT_VERSION)
    with engine.begin() as conn:
        second = enqueue_reparse(conn, ReparseScope(), parser_version=NEXT_VERSION)
        manual = enqueue_reparse(conn, ReparseScope(), parser_version=NEXT_VERSION, trigger="manual",
                                 requested_by=USER, reason="asked while the backfill was queued")
    assert (first, second, manual) == (6, 0, 0)

    run_batch(engine, XmlParsingStage(store), "reparse-worker")
    completed = jobs_by_entity(engine, trigger="parser_change")
    with engine.begin() as conn:
        again = enqueue_reparse(conn, ReparseScope(), parser_version=NEXT_VERSION, trigger="manual",
                                requested_by=USER, reason="officer data checked by hand")
    assert again == 6
    for entity_id, job in jobs_by_entity(engine, trigger="manual").items():
        assert (job.status, job.previous_job_id, str(job.requested_by)) == ("queued", completed[entity_id].id, USER)


@pytest.mark.parametrize("requested_by, reason", [(None, "unit of field DIM confirmed"), (USER, None), (USER, "  ")])
def test_the_database_refuses_a_manual_reparse_without_requester_and_reason(engine, parsed, requested_by, reason):
    with pytest.raises(sa.exc.IntegrityError, match="processing_jobs_manual_has_requester"), engine.begin() as conn:
        enqueue_reparse(conn, ReparseScope(), parser_version=NEXT_VERSION, trigger="manual",
                        requested_by=requested_by, reason=reason)


def failing_parse(exception: Exception, failing_number: str):
    def parse(data: bytes, **options):
        record = parse_si(data, **options)
        if record.register.number == failing_number:
            raise exception
        return record

    return parse


def reparse_one_failing(engine, store, monkeypatch, parsed, exception: Exception) -> tuple[str, sa.Row]:
    """Re-parse every entity with a parser that raises ``exception`` on one of them."""
    failing_entity, number = next(iter(parsed.items()))
    monkeypatch.setattr(orchestration.stages.parsing, "parse_si", failing_parse(exception, number))
    with engine.begin() as conn:
        enqueue_reparse(conn, ReparseScope(), parser_version=NEXT_VERSION)
    report = run_batch(engine, XmlParsingStage(store), "reparse-worker")
    assert (report.completed, report.failed) == (5, 1)
    return failing_entity, jobs_by_entity(engine, trigger="parser_change")[failing_entity]


def entity_status(engine, entity_id: str) -> str:
    with engine.connect() as conn:
        return conn.execute(
            sa.text("SELECT processing_status FROM content.entities WHERE id = :e"), {"e": entity_id}
        ).scalar_one()


def test_a_transient_failure_is_retried_with_backoff_and_leaves_the_entity_parsed(engine, store, parsed, monkeypatch):
    entity_id, job = reparse_one_failing(engine, store, monkeypatch, parsed, TimeoutError("document store slow"))

    assert (job.status, job.retry_count, job.failure_class) == ("queued", 1, None)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT now()")).scalar_one() < job.next_attempt_at
        assert queue.count_due(conn, "xml_parsing") == 0  # backing off
    assert entity_status(engine, entity_id) == "parsed"
    steps = [(h.status, h.attempt_number, h.error_type) for h in history_rows(engine, job.id)]
    assert steps == [("running", 1, None), ("failed", 1, "timeout"), ("queued", 2, None)]


def test_a_permanent_failure_is_not_retried_marks_the_entity_and_waits_for_a_manual_job(
    engine, store, parsed, monkeypatch
):
    entity_id, job = reparse_one_failing(engine, store, monkeypatch, parsed, KeyError("rechtsform"))

    assert (job.status, job.retry_count, job.failure_class) == ("failed", 0, "parser_error")
    assert "KeyError" in job.result["error"]["message"]
    assert entity_status(engine, entity_id) == "xml_parsing_failed"
    with engine.connect() as conn:
        assert queue.count_due(conn, "xml_parsing") == 0

    monkeypatch.setattr(orchestration.stages.parsing, "parse_si", parse_si)  # the parser is fixed
    with engine.begin() as conn:
        queued = enqueue_reparse(conn, ReparseScope(entity_id=entity_id), parser_version=NEXT_VERSION,
                                 trigger="manual", requested_by=USER, reason="rechtsform mapping fixed")
    assert queued == 1
    assert run_batch(engine, XmlParsingStage(store), "reparse-worker").completed == 1
    manual = jobs_by_entity(engine, trigger="manual")[entity_id]
    assert (manual.status, manual.previous_job_id) == ("completed", job.id)
    assert entity_status(engine, entity_id) == "parsed"


def test_an_expired_lease_is_retried(engine, store, parsed):
    with engine.begin() as conn:
        enqueue_reparse(conn, ReparseScope(), parser_version=NEXT_VERSION)
        claimed = queue.claim(conn, "xml_parsing", 10, "vanished-worker", lease_seconds=1)
    assert len(claimed) == 6
    time.sleep(1.2)
    with engine.begin() as conn:
        assert len(queue.reap_expired(conn)) == 6

    for job in jobs_by_entity(engine, trigger="parser_change").values():
        assert (job.status, job.retry_count) == ("queued", 1)
        steps = [(h.status, h.worker_id, h.error_type) for h in history_rows(engine, job.id)]
        assert steps == [("running", "vanished-worker", None), ("failed", "vanished-worker", "lease_expired"),
                         ("queued", None, None)]
    assert {entity_status(engine, e) for e in parsed} == {"parsed"}


def test_claims_after_a_bulk_reparse_look_up_each_candidates_entity(engine):
    """Statistics taken while nothing was queued must not make each candidate of a claim scan
    every queued job: that made the claims of a backfill quadratic."""
    with engine.begin() as conn:
        # Entities whose documents a parser version has taken, made in bulk: the plan is the point here.
        conn.execute(sa.text("""
            WITH documents AS (
                INSERT INTO content.raw_documents (sha256, kind, media_type, size_bytes, content)
                SELECT encode(sha256(n::text::bytea), 'hex'), 'si', 'application/xml', 1, '\\x00'
                  FROM generate_series(1, 3000) n
                RETURNING id)
            INSERT INTO content.entities (court_code, register_type, register_number, name, current_si_document_id,
                                          processing_status)
            SELECT 'D2601V', 'HRB', (100000 + row_number() OVER ())::text, 'Firma', id, 'parsed' FROM documents
        """))
        enqueue_reparse(conn, ReparseScope(), parser_version=PARSER_VERSION)
        conn.execute(sa.text("UPDATE processing.processing_jobs SET status = 'completed'"))
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("ANALYZE processing.processing_jobs"))
    with engine.begin() as conn:
        enqueue_reparse(conn, ReparseScope(), parser_version=NEXT_VERSION)
        plan = "\n".join(conn.execute(sa.text("EXPLAIN " + queue.CLAIM.text), {
            "job_type": "xml_parsing", "limit": 5000, "worker_id": "w", "lease_seconds": 60, "background_allowed": True}).scalars())
    assert "processing_jobs_active_work_key" not in plan, plan
    assert "processing_jobs_entity_idx" in plan, plan
