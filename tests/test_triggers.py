"""Every trigger of seeds/000 and the completion paths: each fires when it should and not otherwise,
has its effect, and cannot loop. Each test runs in one transaction that counts the calls of every
trigger function."""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa

from orchestration.runtime import queue
from orchestration.runtime.failures import JobError
from queue_helpers import (
    claim_and_fail,
    claim_one,
    count_trigger_calls,
    download_shareholder_list,
    entity,
    history,
    insert_entity,
    insert_raw_document,
    insert_search,
    job,
    jobs,
    request_research,
    search,
    set_entity,
    store_si_document,
    track_function_calls,
)


@pytest.fixture
def conn(engine):
    with engine.begin() as conn:
        track_function_calls(conn)
        yield conn


def calls_during(conn: sa.Connection, action) -> dict[str, int]:
    """Trigger function calls caused by ``action``, by function name."""
    before = count_trigger_calls(conn)
    action()
    after = count_trigger_calls(conn)
    return {name: calls - before.get(name, 0) for name, calls in after.items() if calls != before.get(name, 0)}


def job_type_setting(conn: sa.Connection, job_type: str, column: str):
    return conn.execute(
        sa.text(f"SELECT {column} FROM processing.job_types WHERE type = :t"), {"t": job_type}
    ).scalar_one()


# create_basic_discovery_job ---------------------------------------------------------------------


def test_a_new_search_gets_one_queued_basic_discovery_job_with_its_user_and_query(conn):
    user_id = str(uuid.uuid4())
    search_id = insert_search(conn, "Muster Bau", user_id=user_id, mode="exact", register_type="HRB", court="D2601V")

    [created] = jobs(conn, search_id=search_id)
    assert (created.type, created.status, created.retry_count) == ("basic_discovery", "queued", 0)
    assert created.max_retries == job_type_setting(conn, "basic_discovery", "max_retries")
    assert created.data["user_id"] == user_id
    assert (created.data["query"], created.data["search_mode"], created.data["register_type"]) == (
        "Muster Bau",
        "exact",
        "HRB",
    )
    [logged] = history(conn, created.id)
    assert (logged.status, logged.step_type, logged.attempt_number) == ("queued", "basic_discovery", 1)


def test_updating_a_search_creates_no_job(conn):
    search_id = insert_search(conn)
    calls = calls_during(
        conn,
        lambda: conn.execute(
            sa.text("UPDATE public.searches SET result_count = 3, court = 'D2601V' WHERE id = :id"), {"id": search_id}
        ),
    )
    assert "create_basic_discovery_job" not in calls
    assert len(jobs(conn, search_id=search_id)) == 1


# create_entity_discovery_job ---------------------------------------------------------------------


def test_discovered_entity_moved_to_basic_discovery_running_gets_an_exact_discovery_job(conn):
    entity_id = insert_entity(conn, name="Alpha Logistik GmbH")
    calls = calls_during(conn, lambda: set_entity(conn, entity_id, processing_status="basic_discovery_running"))

    assert calls["create_entity_discovery_job"] == 1
    [created] = jobs(conn, entity_id=entity_id)
    assert (created.type, created.status, created.search_id) == ("basic_discovery", "queued", None)
    assert created.data["trigger_source"] == "user_discovery"
    assert (created.data["search_mode"], created.data["max_results"]) == ("exact_match", 1)
    assert created.data["search_term"] == "Alpha Logistik GmbH"
    assert [row.status for row in history(conn, created.id)] == ["queued"]


@pytest.mark.parametrize(
    "from_status, to_status",
    [
        ("xml_download_failed", "basic_discovery_running"),
        ("parsed", "basic_discovery_running"),
        ("discovered", "xml_download_failed"),
    ],
)
def test_other_status_changes_create_no_discovery_job(conn, from_status, to_status):
    entity_id = insert_entity(conn, from_status)
    calls = calls_during(conn, lambda: set_entity(conn, entity_id, processing_status=to_status))
    assert "create_entity_discovery_job" not in calls
    assert jobs(conn, entity_id=entity_id, type="basic_discovery") == []


def test_changing_other_entity_columns_does_not_fire_entity_discovery(conn):
    entity_id = insert_entity(conn, "basic_discovery_running")
    calls = calls_during(conn, lambda: set_entity(conn, entity_id, name="Renamed GmbH", seat="Köln"))
    assert "create_entity_discovery_job" not in calls
    assert "create_xml_parsing_job" not in calls


def test_asking_again_while_discovery_is_queued_keeps_one_active_job(conn):
    entity_id = insert_entity(conn)
    for status in ("basic_discovery_running", "discovered", "basic_discovery_running"):
        set_entity(conn, entity_id, processing_status=status)
    assert len(jobs(conn, entity_id=entity_id, type="basic_discovery")) == 1


# create_xml_parsing_job --------------------------------------------------------------------------


def test_entity_inserted_with_a_downloaded_document_gets_a_parsing_job(conn):
    document_id = insert_raw_document(conn, entity_id=None)
    entity_id = str(
        conn.execute(
            sa.text("""
        INSERT INTO content.entities (court_code, register_type, register_number, name,
                                      processing_status, current_si_document_id)
        VALUES ('D2601V', 'HRB', '4711', 'Beta AG', 'xml_ready', :doc) RETURNING id
    """),
            {"doc": document_id},
        ).scalar_one()
    )

    [created] = jobs(conn, entity_id=entity_id)
    assert (created.type, created.status, created.trigger) == ("xml_parsing", "queued", "upload")
    assert str(created.raw_document_id) == document_id
    assert created.parser_version == job_type_setting(conn, "xml_parsing", "current_version")
    # Only basic_discovery jobs log their creation.
    assert history(conn, created.id) == []


def test_entity_inserted_as_discovered_gets_no_parsing_job(conn):
    inserted: list[str] = []
    calls = calls_during(conn, lambda: inserted.append(insert_entity(conn)))
    assert "create_xml_parsing_job" not in calls
    assert jobs(conn, entity_id=inserted[0], type="xml_parsing") == []
    # The count sees the trigger once it fires: the same entity's document downloaded.
    assert calls_during(conn, lambda: store_si_document(conn, inserted[0]))["create_xml_parsing_job"] == 1
    assert len(jobs(conn, entity_id=inserted[0], type="xml_parsing")) == 1


def test_entity_updated_to_xml_ready_gets_a_parsing_job_for_its_document(conn):
    entity_id = insert_entity(conn, "basic_discovery_running")
    document_id = store_si_document(conn, entity_id)
    [created] = jobs(conn, entity_id=entity_id, type="xml_parsing")
    assert str(created.raw_document_id) == document_id


def test_xml_ready_entity_gets_a_new_job_only_for_a_new_document(conn):
    entity_id = insert_entity(conn, "xml_ready")
    first_document_id = str(entity(conn, entity_id).current_si_document_id)
    set_entity(conn, entity_id, name="Renamed GmbH", seat="Köln")
    assert len(jobs(conn, entity_id=entity_id, type="xml_parsing")) == 1

    newer_document_id = store_si_document(conn, entity_id)
    parsing_jobs = jobs(conn, entity_id=entity_id, type="xml_parsing")
    assert {str(row.raw_document_id) for row in parsing_jobs} == {first_document_id, newer_document_id}


# on_job_failure ----------------------------------------------------------------------------------


def test_on_job_failure_fires_once_per_failure_and_its_requeue_does_not_fire_it_again(conn):
    insert_search(conn)
    claimed = claim_one(conn, "basic_discovery")
    calls = calls_during(conn, lambda: queue.fail(conn, "worker-1", [(claimed.id, JobError("timeout", "slow"))]))
    assert calls["handle_job_failure_and_retries"] == 1
    assert (job(conn, claimed.id).status, job(conn, claimed.id).retry_count) == ("queued", 1)


def test_on_job_failure_does_not_fire_for_other_updates(conn):
    insert_search(conn)
    claimed = claim_one(conn, "basic_discovery")

    def claim_extend_and_complete():
        queue.extend_leases(conn, [claimed.id], "worker-1", 120)
        queue.complete(conn, "worker-1", [(claimed.id, {"result_count": 0})])

    assert "handle_job_failure_and_retries" not in calls_during(conn, claim_extend_and_complete)


def test_updating_a_finally_failed_job_does_not_fire_on_job_failure_again(conn):
    insert_search(conn)
    claimed = claim_one(conn, "basic_discovery")
    queue.fail(conn, "worker-1", [(claimed.id, JobError("parser_error", "cannot read"))])
    calls = calls_during(
        conn,
        lambda: conn.execute(
            sa.text("UPDATE processing.processing_jobs SET reason = 'looked at it' WHERE id = :id"), {"id": claimed.id}
        ),
    )
    assert "handle_job_failure_and_retries" not in calls
    assert job(conn, claimed.id).status == "failed"


# log_job_step_history ----------------------------------------------------------------------------


def test_history_logs_claim_and_completion_but_not_a_lease_extension(conn):
    insert_search(conn)
    run_id = str(uuid.uuid4())
    claimed = claim_one(conn, "basic_discovery", worker_id=run_id)
    queue.extend_leases(conn, [claimed.id], run_id, 600)
    queue.complete(conn, run_id, [(claimed.id, {"result_count": 2})])

    logged = history(conn, claimed.id)
    assert [(row.status, row.attempt_number) for row in logged] == [("queued", 1), ("running", 1), ("completed", 1)]
    assert [row.worker_id for row in logged[1:]] == [run_id, run_id]
    # A Dagster run claims with its run id, which the history keeps as the run to look at.
    assert logged[-1].dagster_run_id == run_id
    assert logged[-1].duration_ms is not None and logged[-1].error_message is None


def test_history_keeps_no_run_id_for_a_worker_that_is_not_a_run(conn):
    insert_search(conn)
    claimed = claim_one(conn, "basic_discovery", worker_id="host-1:pid-42")
    assert [row.dagster_run_id for row in history(conn, claimed.id)] == [None, None]


# sync_shareholder_download_status / sync_shareholder_parsing_status -----------------------------


def test_claiming_a_shareholder_download_shows_the_research_as_downloading(conn):
    entity_id = insert_entity(conn, "parsed")
    request_research(conn, entity_id)
    assert entity(conn, entity_id).shareholder_research_status == "requested"

    calls = calls_during(conn, lambda: claim_one(conn, "shareholder_download"))
    assert calls["sync_shareholder_download_status"] == 1
    assert "sync_shareholder_parsing_status" not in calls
    assert entity(conn, entity_id).shareholder_research_status == "downloading"


def test_claiming_a_shareholder_parsing_job_shows_the_research_as_parsing(conn):
    entity_id = insert_entity(conn, "parsed")
    request_research(conn, entity_id)
    download_shareholder_list(conn, entity_id)

    calls = calls_during(conn, lambda: claim_one(conn, "shareholder_parsing"))
    assert calls["sync_shareholder_parsing_status"] == 1
    assert "sync_shareholder_download_status" not in calls
    assert entity(conn, entity_id).shareholder_research_status == "parsing"


def test_claiming_other_jobs_leaves_the_shareholder_research_alone(conn):
    entity_id = insert_entity(conn, "xml_ready")
    calls = calls_during(conn, lambda: claim_one(conn, "xml_parsing"))
    assert "sync_shareholder_download_status" not in calls and "sync_shareholder_parsing_status" not in calls
    assert entity(conn, entity_id).shareholder_research_status == "none"


# Completion paths (apply_job_progress) -----------------------------------------------------------


def test_basic_discovery_of_a_search_runs_then_completes_the_search_with_its_result_count(conn):
    search_id = insert_search(conn)
    claimed = claim_one(conn, "basic_discovery")
    assert search(conn, search_id).status == "running"
    queue.complete(conn, "worker-1", [(claimed.id, {"result_count": 7})])
    assert (search(conn, search_id).status, search(conn, search_id).result_count) == ("completed", 7)


def test_xml_parsing_moves_the_entity_to_xml_parsing_then_parsed(conn):
    entity_id = insert_entity(conn, "xml_ready")
    claimed = claim_one(conn, "xml_parsing")
    assert entity(conn, entity_id).processing_status == "xml_parsing"
    calls = calls_during(conn, lambda: queue.complete(conn, "worker-1", [(claimed.id, {})]))
    assert entity(conn, entity_id).processing_status == "parsed"
    # Moving the entity on creates no new work.
    assert "create_xml_parsing_job" not in calls and "create_entity_discovery_job" not in calls
    assert len(jobs(conn, entity_id=entity_id)) == 1


def test_a_parse_of_an_older_document_does_not_mark_the_entity_parsed(conn):
    entity_id = insert_entity(conn, "xml_ready")
    older = claim_one(conn, "xml_parsing")
    store_si_document(conn, entity_id)
    queue.complete(conn, "worker-1", [(older.id, {})])
    assert entity(conn, entity_id).processing_status == "xml_ready"


def test_a_completed_shareholder_download_creates_one_parsing_job_for_the_stored_list(conn):
    entity_id = insert_entity(conn, "parsed")
    download_id = request_research(conn, entity_id)
    list_id = download_shareholder_list(conn, entity_id)

    [parsing] = jobs(conn, entity_id=entity_id, type="shareholder_parsing")
    assert (parsing.status, str(parsing.raw_document_id), str(parsing.previous_job_id)) == (
        "queued",
        list_id,
        download_id,
    )
    assert parsing.max_retries == job_type_setting(conn, "shareholder_parsing", "max_retries")


def test_a_completed_shareholder_parsing_completes_the_research(conn):
    entity_id = insert_entity(conn, "parsed")
    request_research(conn, entity_id)
    download_shareholder_list(conn, entity_id)
    claimed = claim_one(conn, "shareholder_parsing")
    queue.complete(conn, "worker-1", [(claimed.id, {"shareholders": 2})])
    assert entity(conn, entity_id).shareholder_research_status == "completed"
    assert len(jobs(conn, entity_id=entity_id)) == 2


# What a job shows comes from its type's row of processing.job_types ------------------------------


def set_job_type(conn: sa.Connection, job_type: str, **columns) -> None:
    """Change what ``job_type``'s row says, as a new type's migration would write it."""
    assigned = ", ".join(f"{column} = :{column}" for column in columns)
    conn.execute(sa.text(f"UPDATE processing.job_types SET {assigned} WHERE type = :t"), {"t": job_type, **columns})


def test_a_claim_shows_on_the_entity_the_status_its_types_row_names(conn):
    # The shipped row of basic_discovery shows nothing on an entity while its job runs.
    set_job_type(conn, "basic_discovery", entity_status_running="basic_discovery_running")
    entity_id = insert_entity(conn, "parsed")
    conn.execute(sa.text("SELECT processing.open_entity(:id)"), {"id": entity_id})

    claim_one(conn, "basic_discovery")
    assert entity(conn, entity_id).processing_status == "basic_discovery_running"


def test_a_parse_whose_row_names_no_claim_status_leaves_the_entity_until_it_completes(conn):
    set_job_type(conn, "xml_parsing", entity_status_running=None)
    entity_id = insert_entity(conn, "xml_ready")

    claimed = claim_one(conn, "xml_parsing")
    assert entity(conn, entity_id).processing_status == "xml_ready"
    queue.complete(conn, "worker-1", [(claimed.id, {})])
    assert entity(conn, entity_id).processing_status == "parsed"


def test_a_shareholder_claim_shows_the_research_status_its_types_row_names(conn):
    set_job_type(conn, "shareholder_download", entity_status_running=None)
    set_job_type(conn, "shareholder_parsing", entity_status_running="downloading")
    entity_id = insert_entity(conn, "parsed")
    request_research(conn, entity_id)

    claimed = claim_one(conn, "shareholder_download")
    assert entity(conn, entity_id).shareholder_research_status == "requested"
    list_id = insert_raw_document(conn, entity_id, kind="shareholder_list")
    queue.complete(conn, "worker-1", [(claimed.id, {"raw_document_id": list_id})])
    claim_one(conn, "shareholder_parsing")
    assert entity(conn, entity_id).shareholder_research_status == "downloading"


def test_a_completion_shows_the_research_status_its_types_row_names(conn):
    set_job_type(conn, "shareholder_download", entity_status_completed="parsing")
    entity_id = insert_entity(conn, "parsed")
    request_research(conn, entity_id)

    download_shareholder_list(conn, entity_id)
    assert entity(conn, entity_id).shareholder_research_status == "parsing"


def test_a_completed_job_is_continued_only_by_the_type_its_row_names(conn):
    set_job_type(conn, "shareholder_download", continued_by=None)
    entity_id = insert_entity(conn, "parsed")
    request_research(conn, entity_id)

    download_shareholder_list(conn, entity_id)
    assert [row.type for row in jobs(conn, entity_id=entity_id)] == ["shareholder_download"]


def test_a_final_failure_shows_on_the_entity_the_status_its_types_row_names(conn):
    # An entity whose discovery failed for good shows as discovered, to be opened again.
    set_job_type(conn, "basic_discovery", entity_status_failed="discovered")
    entity_id = insert_entity(conn, "discovered")
    conn.execute(sa.text("SELECT processing.open_entity(:id)"), {"id": entity_id})

    claim_and_fail(conn, "basic_discovery", JobError("parser_error", "cannot read the result page"))
    assert entity(conn, entity_id).processing_status == "discovered"


def test_a_final_failure_of_a_type_whose_row_names_no_status_leaves_the_entity_alone(conn):
    set_job_type(conn, "shareholder_parsing", entity_status_failed=None)
    entity_id = insert_entity(conn, "parsed")
    request_research(conn, entity_id)
    download_shareholder_list(conn, entity_id)

    claim_and_fail(conn, "shareholder_parsing", JobError("parser_error", "not a shareholder list"))
    assert entity(conn, entity_id).shareholder_research_status == "parsing"


# delete_job_step_history ------------------------------------------------------------------------


def test_a_deleted_search_takes_its_job_and_the_job_history_along_and_nothing_else(conn):
    search_id, other_search_id = insert_search(conn), insert_search(conn)
    claim_one(conn, "basic_discovery")
    [deleted_job], [kept_job] = jobs(conn, search_id=search_id), jobs(conn, search_id=other_search_id)

    conn.execute(sa.text("DELETE FROM public.searches WHERE id = :id"), {"id": search_id})
    assert (
        conn.execute(
            sa.text("SELECT count(*) FROM processing.processing_jobs WHERE id = :id"), {"id": deleted_job.id}
        ).scalar_one()
        == 0
    )
    assert history(conn, deleted_job.id) == []
    assert len(history(conn, kept_job.id)) >= 1
