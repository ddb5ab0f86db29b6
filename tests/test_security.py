"""Roles and privileges: each role can do what it must and nothing more; every function is
SECURITY DEFINER with a fixed search_path and not executable by PUBLIC."""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa

from orchestration.runtime import queue
from orchestration.runtime.failures import JobError
from queue_helpers import (
    as_role,
    entity,
    expire_lease,
    insert_entity,
    insert_raw_document,
    insert_search,
    jobs,
    sqlstate_of,
)

INSUFFICIENT_PRIVILEGE = "42501"  # also raised for a row that violates a row-level security policy
SEED_TRIGGER_FUNCTIONS = {
    "create_basic_discovery_job",
    "create_entity_discovery_job",
    "create_xml_parsing_job",
    "handle_job_failure_and_retries",
    "log_job_step_history",
    "sync_shareholder_download_status",
    "sync_shareholder_parsing_status",
}


def our_functions(conn: sa.Connection) -> list[sa.Row]:
    """Every function of the schema, whichever migration made it: not PostgreSQL's, not an extension's."""
    return conn.execute(
        sa.text("""
        SELECT n.nspname AS schema, p.proname AS name, p.oid::regprocedure::text AS signature,
               p.prosecdef AS security_definer, p.proconfig AS config,
               has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute,
               has_function_privilege('hreg_app', p.oid, 'EXECUTE') AS app_execute,
               has_function_privilege('hreg_worker', p.oid, 'EXECUTE') AS worker_execute
          FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'
           AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
    """)
    ).all()


def test_every_function_is_security_definer_with_a_fixed_search_path_and_no_public_execute(engine):
    with engine.begin() as conn:
        functions = our_functions(conn)
    assert {f.name for f in functions} >= SEED_TRIGGER_FUNCTIONS
    for function in functions:
        assert function.security_definer, function.signature
        [search_path] = [c.removeprefix("search_path=") for c in function.config or [] if c.startswith("search_path=")]
        schemas = [schema.strip() for schema in search_path.split(",")]
        assert (schemas[0], schemas[-1]) == ("pg_catalog", "pg_temp"), function.signature
        assert not function.public_execute, function.signature


def test_each_role_may_execute_only_the_functions_it_calls(engine):
    with engine.begin() as conn:
        executable = {
            (f.name, role)
            for f in our_functions(conn)
            if f.schema in ("public", "content", "processing")
            for role, allowed in (("app", f.app_execute), ("worker", f.worker_execute))
            if allowed
        }
    assert executable == {
        ("archive_completed_jobs", "worker"),  # moves old completed jobs; the worker may not delete jobs
        ("job_work_key", "worker"),  # computes the work_key column of the jobs a worker inserts
        ("open_entity", "app"),  # a person opens an entity: its register data, as an interactive job
        ("open_entity", "worker"),  # a search opens its few results
        ("request_printout", "app"),  # a person asks for a company's current printout
        ("request_shareholder_research", "app"),
        ("request_shareholder_research", "worker"),
        ("take_rate_limit_token", "worker"),
    }


# The application ----------------------------------------------------------------------------------


def test_the_app_creates_searches_and_sees_only_its_own(engine):
    alice, bob = str(uuid.uuid4()), str(uuid.uuid4())
    with as_role(engine, "hreg_app", alice) as app:
        alice_search = insert_search(app, "Alpha GmbH", user_id=alice)
    with as_role(engine, "hreg_app", bob) as app:
        insert_search(app, "Beta AG", user_id=bob)
        assert app.execute(sa.text("SELECT query FROM public.searches")).scalars().all() == ["Beta AG"]
    with as_role(engine, "hreg_app", alice) as app:
        assert app.execute(sa.text("SELECT id::text FROM public.searches")).scalars().all() == [alice_search]
    with engine.begin() as owner:
        # The trigger queued the job, though the app may not touch jobs itself.
        assert len(jobs(owner, search_id=alice_search)) == 1


def test_the_app_cannot_create_or_see_searches_of_another_user_or_without_a_user(engine):
    alice, bob = str(uuid.uuid4()), str(uuid.uuid4())
    with engine.begin() as owner:
        insert_search(owner, user_id=bob)
    with as_role(engine, "hreg_app", alice) as app:
        insert = "INSERT INTO public.searches (user_id, query) VALUES (:user_id, 'x')"
        assert sqlstate_of(app, insert, {"user_id": bob}) == INSUFFICIENT_PRIVILEGE
        assert app.execute(sa.text("SELECT count(*) FROM public.searches")).scalar_one() == 0
    with as_role(engine, "hreg_app") as app:
        assert sqlstate_of(app, insert, {"user_id": alice}) == INSUFFICIENT_PRIVILEGE
        assert app.execute(sa.text("SELECT count(*) FROM public.searches")).scalar_one() == 0


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE public.searches SET status = 'completed'",
        "DELETE FROM public.searches",
        "SELECT * FROM processing.processing_jobs",
        "SELECT * FROM processing.job_step_history",
        "INSERT INTO processing.processing_jobs (type, entity_id) SELECT 'xml_parsing', id FROM content.entities",
        "UPDATE content.entities SET name = 'Renamed'",
        "INSERT INTO content.entities (court_code, register_type, register_number, name) VALUES ('X', 'HRB', '1', 'n')",
        "SELECT processing.take_rate_limit_token('register', 60, 1, 'interactive', 1, 600)",
    ],
)
def test_the_app_is_refused_everything_else(engine, statement):
    user_id = str(uuid.uuid4())
    with engine.begin() as owner:
        insert_search(owner, user_id=user_id)
        insert_entity(owner)
    with as_role(engine, "hreg_app", user_id) as app:
        assert sqlstate_of(app, statement) == INSUFFICIENT_PRIVILEGE


def request_discovery(app: sa.Connection, entity_id: str, status: str = "basic_discovery_running") -> int:
    return app.execute(
        sa.text("UPDATE content.entities SET processing_status = :status WHERE id = :id"),
        {"status": status, "id": entity_id},
    ).rowcount


def test_the_app_may_move_a_discovered_entity_to_basic_discovery_running(engine):
    with engine.begin() as owner:
        entity_id = insert_entity(owner)
    with as_role(engine, "hreg_app", str(uuid.uuid4())) as app:
        assert request_discovery(app, entity_id) == 1
    with engine.begin() as owner:
        assert entity(owner, entity_id).processing_status == "basic_discovery_running"
        assert [job.type for job in jobs(owner, entity_id=entity_id)] == ["basic_discovery"]


def test_the_app_may_not_move_an_entity_anywhere_else(engine):
    with engine.begin() as owner:
        discovered_id = insert_entity(owner)
        parsed_id = insert_entity(owner, "parsed")
    with as_role(engine, "hreg_app", str(uuid.uuid4())) as app:
        update = "UPDATE content.entities SET processing_status = :status WHERE id = :id"
        assert sqlstate_of(app, update, {"status": "parsed", "id": discovered_id}) == INSUFFICIENT_PRIVILEGE
        # Rows not in discovered are invisible to the app's update: nothing happens.
        assert request_discovery(app, parsed_id) == 0
    with engine.begin() as owner:
        assert (entity(owner, discovered_id).processing_status, entity(owner, parsed_id).processing_status) == (
            "discovered",
            "parsed",
        )
        assert jobs(owner, entity_id=parsed_id) == []


# The workers ---------------------------------------------------------------------------------------


def test_the_worker_claims_reports_and_reaps_jobs(engine):
    with engine.begin() as owner:
        for _ in range(3):
            insert_search(owner)
    with as_role(engine, "hreg_worker") as worker:
        first, second, third = queue.claim(worker, "basic_discovery", 3, "worker-1", 60)
        assert queue.extend_leases(worker, [first.id], "worker-1", 120) == 1
        assert queue.complete(worker, "worker-1", [(first.id, {"result_count": 1})]) == {first.id}
        assert queue.fail(worker, "worker-1", [(second.id, JobError("timeout", "slow"))]) == {second.id}
        expire_lease(worker, third.id)
        assert queue.reap_expired(worker) == [third.id]
        assert (
            queue.enqueue(
                worker,
                "basic_discovery",
                search_id=first.search_id,
                trigger="manual",
                requested_by=str(uuid.uuid4()),
                reason="search again",
            )
            is not None
        )
        assert worker.execute(sa.text("SELECT count(*) FROM processing.job_step_history")).scalar_one() > 0


def test_the_worker_writes_content(engine):
    with engine.begin() as owner:
        entity_id = insert_entity(owner, "basic_discovery_running")
    with as_role(engine, "hreg_worker") as worker:
        document_id = insert_raw_document(worker, entity_id)
        worker.execute(
            sa.text("""
            UPDATE content.entities SET current_si_document_id = :doc, processing_status = 'xml_ready', seat = 'Köln'
             WHERE id = :id
        """),
            {"doc": document_id, "id": entity_id},
        )
        worker.execute(
            sa.text("""
            INSERT INTO content.entity_revisions (entity_id, source_record_key, content_hash, record, parser_version)
            VALUES (:id, 'D2601V-HRB-1000', 'abc', '{}', '1')
        """),
            {"id": entity_id},
        )
        token = "SELECT processing.take_rate_limit_token('register', 60, 1, 'interactive', 1, 600)"
        assert worker.execute(sa.text(token)).scalar_one() == 0
    with engine.begin() as owner:
        assert [job.type for job in jobs(owner, entity_id=entity_id, type="xml_parsing")] == ["xml_parsing"]


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE processing.job_types SET max_retries = 100",
        "ALTER TABLE processing.job_types ADD COLUMN priority integer",
        "INSERT INTO public.searches (user_id, query) VALUES (gen_random_uuid(), 'x')",
        "DELETE FROM processing.processing_jobs",
        "INSERT INTO processing.job_step_history (job_id, step_type, status, attempt_number) "
        "SELECT id, type, 'completed', 1 FROM processing.processing_jobs",
        "UPDATE processing.job_step_history SET status = 'completed'",
        "DELETE FROM content.entities",
        "ALTER TABLE public.searches DISABLE ROW LEVEL SECURITY",
    ],
)
def test_the_worker_is_refused_everything_else(engine, statement):
    with engine.begin() as owner:
        insert_search(owner)
        insert_entity(owner)
    with as_role(engine, "hreg_worker") as worker:
        assert sqlstate_of(worker, statement) == INSUFFICIENT_PRIVILEGE
