"""Re-parses of stored SI documents against the real database: backfill runs over register court
partitions, revisions written only for what changed, previous_job links, one active job per
document and parser version, failed courts re-executed, failure classes, and the history of a
company's record."""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from decimal import Decimal

import dagster as dg
import pytest
import sqlalchemy as sa

import orchestration.records.reparse
from orchestration.db.migrate import sync_job_types
from orchestration.definitions import build_definitions
from orchestration.jobs.specs import JOB_TYPES, JobTypes
from orchestration.records.documents import DocumentStore
from orchestration.records.reparse import ReparseScope, enqueue_reparse
from orchestration.runtime import queue
from orchestration.runtime.worker import run_batch, work_claimed
from orchestration.shareholders.reader_version import PARSER_VERSION as SHAREHOLDER_READER_VERSION
from orchestration.stages.parsing import XmlParsingStage
from orchestration.xjustiz import PARSER_VERSION, parse_si
from pipeline_helpers import (
    add_entity_with_si,
    history_rows,
    materializations_of,
    record_as_of,
    run_court_partitions,
    sample_si_files,
)
from process_helpers import wait_until
from queue_helpers import expire_lease
from sample_register.shareholder_lists import generate_list

NEXT_VERSION = f"{PARSER_VERSION}-next"
# The run tags of a backfill's runs and the provenance tag Dagster's UI reads, by their stored
# values (pinned in tests/test_dagster_internals.py).
BACKFILL_ID_TAG = "dagster/backfill"
ASSET_PARTITION_RANGE_START_TAG = "dagster/asset_partition_range_start"
ASSET_PARTITION_RANGE_END_TAG = "dagster/asset_partition_range_end"
DOCUMENTS_EVENT_POINTER_TAG = "dagster/input_event_pointer/raw_si_documents"
USER = str(uuid.uuid4())
# The entities of the fixture are filed at two register courts: Munich and Berlin (Charlottenburg).
COURTS = ("D2601", "F1103")


@pytest.fixture
def store(settings) -> DocumentStore:
    return DocumentStore(settings.documents_dir)


@pytest.fixture
def parsed(engine, store, samples_dir) -> dict[str, str]:
    """Six entities whose SI documents were parsed on upload, three at each court of COURTS:
    entity id -> register number in its document."""
    for i, path in enumerate(sample_si_files(samples_dir)[:6]):
        add_entity_with_si(engine, store, path.read_bytes(), number=str(500 + i), court_code=COURTS[i // 3])
    report = run_batch(engine, XmlParsingStage(JOB_TYPES.xml_parsing, store), "upload-worker")
    assert (report.claimed, report.completed) == (6, 6)
    numbers = {str(r.entity_id): r.record["register"]["number"] for r in revisions(engine)}
    assert len(set(numbers.values())) == 6
    return numbers


def deploy(engine, settings, job_types: JobTypes) -> JobTypes:
    """Deploy ``job_types`` as a deploy does: the code location is built with them (the tests
    pass them to build_definitions), and `hreg db upgrade` names their versions in
    processing.job_types."""
    with engine.begin() as conn:
        sync_job_types(conn, settings, job_types.versions())
    return job_types


def deploy_parser(
    engine, settings, version: str, renamed_numbers: frozenset[str] = frozenset(), parse=parse_si
) -> JobTypes:
    """Deploy parser ``version``, whose parse (``parse``, by default this code's) names the
    companies in ``renamed_numbers`` differently."""

    def new_parse_si(data: bytes, **options):
        record = parse(data, **options)
        if record.register.number in renamed_numbers:
            record = record.model_copy(update={"name": f"{record.name} (neu)"})
        return record

    return deploy(engine, settings, JOB_TYPES.deploying(JOB_TYPES.xml_parsing, version, new_parse_si))


def materialize_courts(
    first: str,
    last: str | None = None,
    *,
    job_types: JobTypes,
    success: bool = True,
    instance: dg.DagsterInstance | None = None,
) -> dg.ExecuteInProcessResult:
    """A backfill run of company_records over the courts ``first`` to ``last`` (a range of partition
    keys, as a multi-run backfill launches it) by the code location deploying ``job_types``,
    executed in process (on ``instance``, or on an instance of its own)."""
    if last is None:
        options = {"partition_key": first}
    else:
        options = {"tags": {ASSET_PARTITION_RANGE_START_TAG: first, ASSET_PARTITION_RANGE_END_TAG: last}}
    with contextlib.nullcontext(instance) if instance else dg.instance_for_test() as run_instance:
        result = run_court_partitions(
            build_definitions(job_types=job_types), "company_records", run_instance, **options
        )
    assert result.success is success
    return result


def court_metadata(result: dg.ExecuteInProcessResult) -> dict[str, dict]:
    """Court partition -> the metadata of its materialization in the run."""
    return {
        m.partition: {key: value.value for key, value in m.metadata.items()}
        for m in materializations_of(result, "company_records")
    }


def revisions(engine) -> list[sa.Row]:
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT * FROM content.entity_revisions ORDER BY id")).all()


def reparse_job_rows(engine) -> list[sa.Row]:
    """Every parser_change job, one row each (a company tried twice shows twice)."""
    with engine.connect() as conn:
        return conn.execute(
            sa.text("""SELECT entity_id::text, status, worker_id FROM processing.processing_jobs
                        WHERE trigger = 'parser_change'"""),
        ).all()


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


def test_a_version_bump_with_unchanged_output_writes_no_revision(engine, settings, parsed):
    before = revisions(engine)
    uploads = jobs_by_entity(engine, trigger="upload")
    deployed = deploy_parser(engine, settings, NEXT_VERSION)

    by_court = court_metadata(materialize_courts(*COURTS, job_types=deployed))

    # Every court of the range is materialized, those without companies with nothing to do.
    assert {c for c in by_court if by_court[c]["records"]} == set(COURTS)
    assert len(by_court) > 2 and all(m["parser_version"] == NEXT_VERSION for m in by_court.values())
    for court in COURTS:
        assert (by_court[court]["records"], by_court[court]["revisions_written"], by_court[court]["failed"]) == (
            3,
            0,
            0,
        )
    assert revisions(engine) == before
    reparses = jobs_by_entity(engine, trigger="parser_change")
    assert set(reparses) == set(parsed)
    for entity_id, job in reparses.items():
        assert (job.status, job.parser_version, job.requested_by, job.reason) == ("completed", NEXT_VERSION, None, None)
        assert job.previous_job_id == uploads[entity_id].id
        assert job.raw_document_id == uploads[entity_id].raw_document_id  # the stored document, not a download
    # Nothing is left to do: running the courts again re-parses nothing.
    again = court_metadata(materialize_courts(*COURTS, job_types=deployed))
    assert {m["records"] for m in again.values()} == {0}
    assert jobs_by_entity(engine, trigger="parser_change") == reparses


def test_a_parser_change_writes_exactly_the_changed_records_and_keeps_their_history(engine, settings, parsed):
    renamed = set(list(parsed)[1:3])
    old_names = {str(r.entity_id): r.record["name"] for r in revisions(engine)}
    uploads = jobs_by_entity(engine, trigger="upload")
    before_reparse = database_now(engine)
    deployed = deploy_parser(engine, settings, NEXT_VERSION, frozenset(parsed[e] for e in renamed))

    by_court = court_metadata(materialize_courts(*COURTS, job_types=deployed))

    assert sum(m["records"] for m in by_court.values()) == 6
    assert sum(m["revisions_written"] for m in by_court.values()) == 2
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
        old_names[entity_id],
        uploads[entity_id].id,
        PARSER_VERSION,
    )
    assert (now["record"]["name"], now["job_id"]) == (f"{old_names[entity_id]} (neu)", reparses[entity_id].id)
    # An unchanged record is still the one its first parse wrote.
    assert unchanged_now["job_id"] == uploads[unchanged_id].id


def test_the_same_reparse_asked_twice_is_queued_once_and_finished_work_can_run_again(engine, parsed, store):
    with engine.begin() as conn:
        first = enqueue_reparse(conn, ReparseScope(), parser_version=NEXT_VERSION)
    with engine.begin() as conn:
        second = enqueue_reparse(conn, ReparseScope(), parser_version=NEXT_VERSION)
        manual = enqueue_reparse(
            conn,
            ReparseScope(),
            parser_version=NEXT_VERSION,
            trigger="manual",
            requested_by=USER,
            reason="asked while the backfill was queued",
        )
    assert (first, second, manual) == (6, 0, 0)

    run_batch(engine, XmlParsingStage(JOB_TYPES.xml_parsing, store), "reparse-worker")
    completed = jobs_by_entity(engine, trigger="parser_change")
    with engine.begin() as conn:
        again = enqueue_reparse(
            conn,
            ReparseScope(),
            parser_version=NEXT_VERSION,
            trigger="manual",
            requested_by=USER,
            reason="officer data checked by hand",
        )
    assert again == 6
    for entity_id, job in jobs_by_entity(engine, trigger="manual").items():
        assert (job.status, job.previous_job_id, str(job.requested_by)) == ("queued", completed[entity_id].id, USER)


@pytest.mark.parametrize(
    "requested_by, reason",
    [(None, "unit of field DIM confirmed"), (USER, None), (USER, "  ")],
    ids=["no requester", "no reason", "a blank reason"],
)
def test_the_database_refuses_a_manual_reparse_without_requester_and_reason(engine, parsed, requested_by, reason):
    with pytest.raises(sa.exc.IntegrityError, match="processing_jobs_manual_has_requester"), engine.begin() as conn:
        enqueue_reparse(
            conn,
            ReparseScope(),
            parser_version=NEXT_VERSION,
            trigger="manual",
            requested_by=requested_by,
            reason=reason,
        )


def failing_parse(exception: Exception, failing_number: str):
    def parse(data: bytes, **options):
        record = parse_si(data, **options)
        if record.register.number == failing_number:
            raise exception
        return record

    return parse


def reparse_one_failing(engine, settings, store, parsed, exception: Exception) -> tuple[str, sa.Row]:
    """Re-parse every entity with a parser that raises ``exception`` on one of them."""
    failing_entity, number = next(iter(parsed.items()))
    deployed = deploy_parser(engine, settings, NEXT_VERSION, parse=failing_parse(exception, number))
    with engine.begin() as conn:
        enqueue_reparse(conn, ReparseScope(), parser_version=NEXT_VERSION)
    report = run_batch(engine, XmlParsingStage(deployed.xml_parsing, store), "reparse-worker")
    assert (report.completed, report.failed) == (5, 1)
    return failing_entity, jobs_by_entity(engine, trigger="parser_change")[failing_entity]


def test_a_court_with_a_failed_reparse_fails_alone_and_re_executing_it_redoes_only_the_failure(
    engine, settings, store, parsed
):
    berlin = [e for e in parsed if e in set(list(parsed)[3:])]
    failing_entity = berlin[0]
    failing = failing_parse(KeyError("rechtsform"), parsed[failing_entity])
    deployed = deploy_parser(engine, settings, NEXT_VERSION, parse=failing)

    failed_run = materialize_courts(*COURTS, success=False, job_types=deployed)

    # Munich is materialized; Berlin, with one failed document, is not, and the run says why.
    assert set(court_metadata(failed_run)) >= {"D2601"} and "F1103" not in court_metadata(failed_run)
    (failure,) = [e for e in failed_run.all_events if e.is_step_failure]
    assert "F1103 {'parser_error': 1}" in failure.step_failure_data.error.message
    failed_job = jobs_by_entity(engine, trigger="parser_change")[failing_entity]
    assert (failed_job.status, failed_job.failure_class) == ("failed", "parser_error")

    # The parser is fixed and Berlin is re-executed: only the failed document is parsed again.
    deployed = deploy_parser(engine, settings, NEXT_VERSION)
    jobs_before = {j.id for j in jobs_by_entity(engine, type="xml_parsing").values()}
    retried = court_metadata(materialize_courts("F1103", job_types=deployed))
    assert (retried["F1103"]["records"], retried["F1103"]["failed"]) == (1, 0)
    with engine.connect() as conn:
        redo = conn.execute(
            sa.text("""
            SELECT * FROM processing.processing_jobs WHERE type = 'xml_parsing' AND previous_job_id = :j"""),
            {"j": failed_job.id},
        ).one()
    assert (str(redo.entity_id), redo.trigger, redo.status, redo.parser_version) == (
        failing_entity,
        "parser_change",
        "completed",
        NEXT_VERSION,
    )

    # Re-executing a finished court writes nothing new: no job, no revision.
    revisions_before = revisions(engine)
    jobs_before = len(job_rows_all(engine))
    assert court_metadata(materialize_courts("F1103", job_types=deployed))["F1103"]["records"] == 0
    assert (len(job_rows_all(engine)), revisions(engine)) == (jobs_before, revisions_before)


def held_by_a_person(engine, entity_id: str) -> list[queue.ClaimedJob]:
    """A person's re-parse of one company, claimed by another worker (their run) and not yet reported."""
    with engine.begin() as conn:
        enqueue_reparse(
            conn,
            ReparseScope(entity_ids=(entity_id,)),
            parser_version=NEXT_VERSION,
            trigger="manual",
            requested_by=USER,
            reason="the register entry changed today",
        )
        return queue.claim_for_entities(conn, "xml_parsing", [entity_id], NEXT_VERSION, "person-run", 600)


def test_a_court_whose_company_a_person_is_parsing_is_materialized_once_that_parse_is_done(
    engine, settings, store, parsed
):
    deployed = deploy_parser(engine, settings, NEXT_VERSION)
    munich = [entity for entity in parsed if entity not in list(parsed)[3:]]
    held = held_by_a_person(engine, munich[0])
    assert len(held) == 1

    def person_reports_after_the_run_reached_munich():
        def run_worked_munich():
            with engine.connect() as conn:
                return (
                    conn.execute(
                        sa.text("""SELECT count(*) FROM processing.processing_jobs
                                WHERE entity_id = ANY(CAST(:e AS uuid[])) AND trigger = 'parser_change'
                                  AND status = 'completed'"""),
                        {"e": munich[1:]},
                    ).scalar_one()
                    == 2
                )

        wait_until(run_worked_munich, 60, "the backfill run to re-parse Munich's other companies")
        work_claimed(engine, XmlParsingStage(JOB_TYPES.xml_parsing, store), "person-run", held, 600)

    person = threading.Thread(target=person_reports_after_the_run_reached_munich)
    person.start()
    try:
        result = materialize_courts(*COURTS, job_types=deployed)
    finally:
        person.join()

    # Munich is materialized, as current: two companies re-parsed by the run, one by the person's.
    by_court = court_metadata(result)
    assert (by_court["D2601"]["records"], by_court["D2601"]["held_by_other_workers"]) == (2, 1)
    assert by_court["D2601"]["unfinished"] == 0 and by_court["F1103"]["records"] == 3
    jobs = jobs_by_entity(engine, parser_version=NEXT_VERSION)
    assert {entity: job.status for entity, job in jobs.items()} == dict.fromkeys(parsed, "completed")
    assert jobs[munich[0]].worker_id == "person-run"


def test_a_run_done_with_its_courts_helps_another_run_of_its_backfill_and_leaves_the_court_to_it(
    engine, settings, store, parsed
):
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE processing.job_types SET batch_size = 1 WHERE type = 'xml_parsing'"))
    berlin = sorted(list(parsed)[3:])  # in the order a run walks a court's companies (their ids)
    # Berlin's last document cannot be parsed by the new version.
    parse_next = failing_parse(KeyError("rechtsform"), parsed[berlin[-1]])

    def berlin_taken_from_both_ends(data: bytes, **options):
        # Berlin's run parses its first company only once the other run has taken the last one.
        if parse_si(data).register.number == parsed[berlin[0]]:
            wait_until(lambda: started(berlin[-1:]), 60, "the other run to take Berlin's last company")
        return parse_next(data, **options)

    deployed = deploy_parser(engine, settings, NEXT_VERSION, parse=berlin_taken_from_both_ends)

    def started(entities: list[str]) -> int:
        with engine.connect() as conn:
            return conn.execute(
                sa.text("""SELECT count(*) FROM processing.processing_jobs
                        WHERE entity_id = ANY(CAST(:e AS uuid[])) AND trigger = 'parser_change'"""),
                {"e": entities},
            ).scalar_one()

    # Two runs of one backfill, as the daemon launches them: Berlin's run starts first; Munich's
    # run starts once Berlin's has claimed its first company.
    results: dict[str, dg.ExecuteInProcessResult] = {}
    with dg.instance_for_test() as instance:

        def run(court: str) -> None:
            tags = {BACKFILL_ID_TAG: "parser-change", ASSET_PARTITION_RANGE_START_TAG: court}
            tags[ASSET_PARTITION_RANGE_END_TAG] = court
            defs = build_definitions(job_types=deployed)
            results[court] = run_court_partitions(defs, "company_records", instance, tags=tags)

        berlin_run = threading.Thread(target=run, args=("F1103",))
        berlin_run.start()
        try:
            wait_until(lambda: started(berlin), 60, "Berlin's run to claim its first company")
            run("D2601")
        finally:
            berlin_run.join()

    # Munich's run, done with Munich, took Berlin's companies from the last one back, until it met
    # Berlin's run: each company was tried once, by one of the two runs.
    jobs = reparse_job_rows(engine)
    assert sorted(job.entity_id for job in jobs) == sorted(parsed)
    by_entity = {job.entity_id: job for job in jobs}
    assert {entity: by_entity[entity].status for entity in berlin} == {
        berlin[0]: "completed",
        berlin[1]: "completed",
        berlin[2]: "failed",
    }
    assert by_entity[berlin[0]].worker_id == results["F1103"].run_id
    assert by_entity[berlin[-1]].worker_id == results["D2601"].run_id
    # Munich's run reported Munich only. Berlin's run reported Berlin failed, for the document
    # the other run failed on, once the companies that run had taken were done.
    assert results["D2601"].success and set(court_metadata(results["D2601"])) == {"D2601"}
    assert not results["F1103"].success and not court_metadata(results["F1103"])
    (failure,) = [e for e in results["F1103"].all_events if e.is_step_failure]
    assert "F1103 {'parser_error': 1}" in failure.step_failure_data.error.message


def test_a_company_another_worker_finishes_while_a_run_queues_its_batch_is_not_parsed_again(
    engine, settings, store, parsed
):
    deployed = deploy_parser(engine, settings, NEXT_VERSION)
    stage = XmlParsingStage(deployed.xml_parsing, store)
    berlin = sorted(list(parsed)[3:])
    # Another worker (a person's run, say) is parsing Berlin's first company for the new version.
    with engine.begin() as conn:
        enqueue_reparse(conn, ReparseScope(entity_ids=(berlin[0],)), parser_version=NEXT_VERSION)
        held = queue.claim_for_entities(conn, "xml_parsing", berlin[:1], NEXT_VERSION, "other-worker", 600)
    finished: list[str] = []

    @sa.event.listens_for(engine, "before_cursor_execute")
    def finish_between_read_and_insert(conn, cursor, statement, parameters, context, executemany):
        # The run has read Berlin's unfinished companies, the other worker's among them; before
        # its jobs are inserted, the other worker finishes (and commits) that company.
        if not finished and "INSERT INTO processing.processing_jobs" in statement:
            finished.append(berlin[0])
            assert work_claimed(engine, stage, "other-worker", held, 600).completed == 1

    try:
        court = orchestration.records.reparse.reparse_court(
            engine,
            stage,
            "backfill-run",
            "F1103",
            redo=orchestration.records.reparse.SI_REPARSE,
            parser_version=NEXT_VERSION,
            batch_size=3,
            lease_seconds=600,
            since=None,
        )
    finally:
        sa.event.remove(engine, "before_cursor_execute", finish_between_read_and_insert)

    assert finished == [berlin[0]]
    jobs = reparse_job_rows(engine)
    assert sorted((job.entity_id, job.worker_id) for job in jobs) == sorted(
        [(berlin[0], "other-worker"), (berlin[1], "backfill-run"), (berlin[2], "backfill-run")]
    )
    assert {job.status for job in jobs} == {"completed"}
    assert (court.report.completed, court.held_elsewhere) == (2, 0)


class GiveWayClock:
    """The clock a backfill run gives way by, moved only by the test; each of the run's pauses
    between two looks at people's work is counted (and lasts a few real milliseconds)."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.pauses = 0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses += 1
        time.sleep(0.01)


def test_a_backfill_run_gives_way_while_a_persons_job_runs_as_long_as_the_setting_allows(
    engine, settings, store, parsed, monkeypatch
):
    deployed = deploy_parser(engine, settings, NEXT_VERSION)
    monkeypatch.setenv("HREG_BACKFILL_GIVE_WAY_SECONDS", "60")
    clock = GiveWayClock()
    monkeypatch.setattr(orchestration.records.reparse, "time", clock)
    munich, berlin = list(parsed)[:3], list(parsed)[3:]
    held = held_by_a_person(engine, munich[0])  # a person's parse of a Munich company, running throughout

    def berlin_by_the_run() -> dict[str, int]:
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text("""SELECT status::text, count(*) FROM processing.processing_jobs
                            WHERE entity_id = ANY(CAST(:e AS uuid[])) AND trigger = 'parser_change'
                            GROUP BY status"""),
                {"e": berlin},
            ).all()
        return dict(rows)

    results: list[dg.ExecuteInProcessResult] = []
    backfill = threading.Thread(
        target=lambda: results.append(materialize_courts("F1103", job_types=deployed))
    )  # a backfill of Berlin
    backfill.start()
    try:
        # The run has claimed Berlin's companies and pauses before parsing them: the person is at work.
        wait_until(lambda: clock.pauses or not backfill.is_alive(), 120, "the backfill run to give way")
        assert clock.pauses and berlin_by_the_run() == {"running": 3}
        # A second before the limit, it still gives way: it looks again and pauses again, parsing nothing.
        clock.now += 59
        pauses = clock.pauses
        wait_until(lambda: clock.pauses >= pauses + 2 or not backfill.is_alive(), 120, "two more pauses")
        assert berlin_by_the_run() == {"running": 3}
        # At the limit it goes on, while the person's job still runs.
        clock.now += 1
        backfill.join(timeout=180)
        assert not backfill.is_alive() and results[0].success
    finally:
        if backfill.is_alive():  # a check failed: the person's job ends, and with it any wait
            clock.now += 3600
            work_claimed(engine, XmlParsingStage(JOB_TYPES.xml_parsing, store), "person-run", held, 600)
        backfill.join()
    assert berlin_by_the_run() == {"completed": 3}
    with engine.connect() as conn:
        person = conn.execute(
            sa.text("SELECT status::text FROM processing.processing_jobs WHERE id = :id"), {"id": held[0].id}
        ).scalar_one()
    assert person == "running"


def test_a_document_stored_at_a_court_while_the_run_works_it_is_parsed_before_the_court_is_reported(
    engine, settings, store, parsed, samples_dir
):
    munich_numbers = [parsed[entity] for entity in list(parsed)[:3]]
    newcomer = sample_si_files(samples_dir)[6]
    arrived: list[str] = []

    def parse_while_a_download_stores_another(data: bytes, **options):
        record = parse_si(data, **options)
        # A person's download stores a new company at Munich while the run parses Munich's last one.
        if record.register.number == munich_numbers[-1] and not arrived:
            arrived.append(add_entity_with_si(engine, store, newcomer.read_bytes(), number="600", court_code="D2601"))
        return record

    deployed = deploy_parser(engine, settings, NEXT_VERSION, parse=parse_while_a_download_stores_another)

    result = materialize_courts(*COURTS, job_types=deployed)
    by_court = court_metadata(result)

    # Munich is reported once the newcomer is parsed too, by this run, as current: the job its
    # upload queued for the version deployed, which the run took up.
    assert arrived and (by_court["D2601"]["records"], by_court["D2601"]["unfinished"]) == (4, 0)
    newcomer_job = jobs_by_entity(engine, parser_version=NEXT_VERSION)[arrived[0]]
    assert (newcomer_job.status, newcomer_job.trigger, newcomer_job.worker_id) == ("completed", "upload", result.run_id)


def test_a_court_held_by_a_worker_that_never_reports_fails_the_run_after_its_lease(
    engine, settings, store, parsed, monkeypatch
):
    deployed = deploy_parser(engine, settings, NEXT_VERSION)
    monkeypatch.setattr(queue, "REAPER_INTERVAL_SECONDS", 0)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE processing.job_types SET lease_seconds = 2 WHERE type = 'xml_parsing'"))
    munich = [entity for entity in parsed if entity not in list(parsed)[3:]]
    assert len(held_by_a_person(engine, munich[0])) == 1  # and the person's run dies holding it

    result = materialize_courts(*COURTS, success=False, job_types=deployed)

    # Berlin is done; Munich is not materialized, and the run says which court waits for whom.
    assert "F1103" in court_metadata(result) and "D2601" not in court_metadata(result)
    (failure,) = [e for e in result.all_events if e.is_step_failure]
    assert (
        "D2601 (companies not parsed by this version, 1 held by other workers)"
        in failure.step_failure_data.error.message
    )


def job_rows_all(engine) -> list[sa.Row]:
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT id FROM processing.processing_jobs")).all()


def entity_status(engine, entity_id: str) -> str:
    with engine.connect() as conn:
        return conn.execute(
            sa.text("SELECT processing_status FROM content.entities WHERE id = :e"), {"e": entity_id}
        ).scalar_one()


def test_a_transient_failure_is_retried_with_backoff_and_leaves_the_entity_parsed(engine, settings, store, parsed):
    entity_id, job = reparse_one_failing(engine, settings, store, parsed, TimeoutError("document store slow"))

    assert (job.status, job.retry_count, job.failure_class) == ("queued", 1, None)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT now()")).scalar_one() < job.next_attempt_at
        assert queue.count_due(conn, "xml_parsing") == 0  # backing off
    assert entity_status(engine, entity_id) == "parsed"
    steps = [(h.status, h.attempt_number, h.error_type) for h in history_rows(engine, job.id)]
    assert steps == [("running", 1, None), ("failed", 1, "timeout"), ("queued", 2, None)]


def test_a_permanent_failure_is_not_retried_marks_the_entity_and_waits_for_a_manual_job(
    engine, settings, store, parsed
):
    entity_id, job = reparse_one_failing(engine, settings, store, parsed, KeyError("rechtsform"))

    assert (job.status, job.retry_count, job.failure_class) == ("failed", 0, "parser_error")
    assert "KeyError" in job.result["error"]["message"]
    assert entity_status(engine, entity_id) == "xml_parsing_failed"
    with engine.connect() as conn:
        assert queue.count_due(conn, "xml_parsing") == 0

    fixed = deploy_parser(engine, settings, NEXT_VERSION)  # the parser is fixed
    with engine.begin() as conn:
        queued = enqueue_reparse(
            conn,
            ReparseScope(entity_ids=(entity_id,)),
            parser_version=NEXT_VERSION,
            trigger="manual",
            requested_by=USER,
            reason="rechtsform mapping fixed",
        )
    assert queued == 1
    assert run_batch(engine, XmlParsingStage(fixed.xml_parsing, store), "reparse-worker").completed == 1
    manual = jobs_by_entity(engine, trigger="manual")[entity_id]
    assert (manual.status, manual.previous_job_id) == ("completed", job.id)
    assert entity_status(engine, entity_id) == "parsed"


def test_an_expired_lease_is_retried(engine, store, parsed):
    with engine.begin() as conn:
        enqueue_reparse(conn, ReparseScope(), parser_version=NEXT_VERSION)
        claimed = queue.claim(conn, "xml_parsing", 10, "vanished-worker", lease_seconds=60)
    assert len(claimed) == 6
    with engine.begin() as conn:
        assert queue.reap_expired(conn) == []  # leases still running are left alone
        for job in claimed:
            expire_lease(conn, job.id)
        assert len(queue.reap_expired(conn)) == 6

    for job in jobs_by_entity(engine, trigger="parser_change").values():
        assert (job.status, job.retry_count) == ("queued", 1)
        steps = [(h.status, h.worker_id, h.error_type) for h in history_rows(engine, job.id)]
        assert steps == [
            ("running", "vanished-worker", None),
            ("failed", "vanished-worker", "lease_expired"),
            ("queued", None, None),
        ]
    assert {entity_status(engine, e) for e in parsed} == {"parsed"}


def test_claims_after_a_bulk_reparse_look_up_each_candidates_entity(engine):
    """Statistics taken while nothing was queued must not make each candidate of a claim scan
    every queued job: that made the claims of a backfill quadratic."""
    with engine.begin() as conn:
        # Entities whose documents a parser version has taken, made in bulk: the plan is the point here.
        conn.execute(
            sa.text("""
            WITH documents AS (
                INSERT INTO content.raw_documents (sha256, kind, media_type, size_bytes, content)
                SELECT encode(sha256(n::text::bytea), 'hex'), 'si', 'application/xml', 1, '\\x00'
                  FROM generate_series(1, 3000) n
                RETURNING id)
            INSERT INTO content.entities (court_code, register_type, register_number, name, current_si_document_id,
                                          processing_status)
            SELECT 'D2601V', 'HRB', (100000 + row_number() OVER ())::text, 'Firma', id, 'parsed' FROM documents
        """)
        )
        enqueue_reparse(conn, ReparseScope(), parser_version=PARSER_VERSION)
        conn.execute(sa.text("UPDATE processing.processing_jobs SET status = 'completed'"))
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("ANALYZE processing.processing_jobs"))
    with engine.begin() as conn:
        enqueue_reparse(conn, ReparseScope(), parser_version=NEXT_VERSION)
        plan = "\n".join(
            conn.execute(
                sa.text("EXPLAIN " + queue.QUERIES["claim"].text),
                {
                    "job_type": "xml_parsing",
                    "limit": 5000,
                    "worker_id": "w",
                    "lease_seconds": 60,
                    "background_allowed": True,
                    **queue.QUEUE_HEAD,
                },
            ).scalars()
        )
    assert "processing_jobs_active_work_key" not in plan, plan
    assert "processing_jobs_entity_idx" in plan, plan


def test_a_backfill_of_shareholders_rereads_the_stored_lists_of_its_courts(engine, settings, store):
    """Shareholder lists are partitioned by court too: the upload's job carries the reader's
    version, so a run for the court finds nothing to do; after a new reader version it re-reads
    the stored lists, writes no new list revision when nothing changed, and finds nothing to do
    the second time."""
    listed = generate_list(5, company_name="Muster GmbH", capital=Decimal("25000"), layout="per_share", form="text_pdf")
    with engine.begin() as conn:
        entity_id = str(
            conn.execute(
                sa.text("""
            INSERT INTO content.entities (court_code, register_type, register_number, name, processing_status)
            VALUES ('D2601', 'HRB', '4711', 'Muster GmbH', 'parsed') RETURNING id""")
            ).scalar_one()
        )
        document_id = store.store(
            conn, listed.content, kind="shareholder_list", media_type=listed.media_type, entity_id=entity_id
        )
        conn.execute(
            sa.text("""
            INSERT INTO processing.processing_jobs (type, entity_id, raw_document_id, trigger)
            VALUES ('shareholder_parsing', :e, :d, 'automatic')"""),
            {"e": entity_id, "d": document_id},
        )

    def run(job_types: JobTypes = JOB_TYPES, **options) -> dg.ExecuteInProcessResult:
        """The sensor's run, or with ``partition_key`` a backfill's run of that court, by the code
        location deploying ``job_types``."""
        defs = build_definitions(settings, job_types)
        with dg.instance_for_test() as instance:
            if options:
                result = run_court_partitions(defs, "shareholders", instance, **options)
            else:
                result = defs.resolve_job_def("shareholder_parsing_job").execute_in_process(instance=instance)
        assert result.success
        return result

    first = run()  # the sensor's run: the upload's job, reported for Munich's partition
    (materialization,) = materializations_of(first, "shareholders")
    assert (materialization.partition, materialization.metadata["revisions_written"].value) == ("D2601", 1)

    unchanged = run(partition_key="D2601")  # the same reader has read every list of the court
    (materialization,) = materializations_of(unchanged, "shareholders")
    assert materialization.metadata["records"].value == 0

    next_version = f"{SHAREHOLDER_READER_VERSION}-next"
    deployed = deploy(engine, settings, JOB_TYPES.deploying(JOB_TYPES.shareholder_parsing, next_version))
    reread = run(deployed, partition_key="D2601")
    (materialization,) = materializations_of(reread, "shareholders")
    metadata = {key: value.value for key, value in materialization.metadata.items()}
    assert (metadata["records"], metadata["revisions_written"], metadata["parser_version"]) == (1, 0, next_version)
    with engine.connect() as conn:
        jobs = conn.execute(
            sa.text("""
            SELECT trigger, parser_version, status, previous_job_id, raw_document_id::text
              FROM processing.processing_jobs WHERE type = 'shareholder_parsing' ORDER BY created_at""")
        ).all()
        lists = conn.execute(sa.text("SELECT count(*) FROM content.shareholder_lists")).scalar_one()
    assert [(j.trigger, j.parser_version, j.status) for j in jobs] == [
        ("automatic", SHAREHOLDER_READER_VERSION, "completed"),
        ("parser_change", next_version, "completed"),
    ]
    assert jobs[1].raw_document_id == document_id and jobs[1].previous_job_id is not None
    assert lists == 1
    again = run(deployed, partition_key="D2601")
    (materialization,) = materializations_of(again, "shareholders")
    assert materialization.metadata["records"].value == 0


def test_a_backfill_run_reports_documents_dagster_has_not_seen_once_before_the_courts_that_read_them(
    engine, settings, parsed
):
    # The fixture's documents were stored without a download run: Dagster has no event of them.
    deployed = deploy_parser(engine, settings, NEXT_VERSION)
    documents = dg.AssetKey("raw_si_documents")
    with dg.instance_for_test() as instance:
        first = materialize_courts(*COURTS, instance=instance, job_types=deployed)
        events = [(e.asset_key.path[0], e.partition) for e in first.get_asset_materialization_events()]
        # Each court with documents gets one documents event, ahead of every court's records.
        assert sorted(events[:2]) == [("raw_si_documents", court) for court in sorted(COURTS)]
        assert {asset for asset, _ in events[2:]} == {"company_records"}
        storage_ids = instance.get_latest_storage_id_by_partition(
            documents, dg.DagsterEventType.ASSET_MATERIALIZATION, set(COURTS)
        )
        for court in COURTS:
            (records,) = [m for m in materializations_of(first, "company_records") if m.partition == court]
            assert records.tags[DOCUMENTS_EVENT_POINTER_TAG] == str(storage_ids[court])

        # The next version's run finds the documents as Dagster knows them and reports none again.
        deployed = deploy_parser(engine, settings, f"{NEXT_VERSION}-2")
        second = materialize_courts(*COURTS, instance=instance, job_types=deployed)
        assert not materializations_of(second, "raw_si_documents")
        assert {m.partition for m in materializations_of(second, "company_records")} >= set(COURTS)
