"""Finished entries leave the hot table (seeds/003): completed jobs past the retention period move to
processing.job_archive in batches, safely beside concurrent claims and archivers, and the step
history keeps every attempt."""

from __future__ import annotations

from datetime import timedelta

import dagster as dg
import sqlalchemy as sa

from orchestration.definitions import build_definitions
from orchestration.records.reparse import ReparseScope, enqueue_reparse
from orchestration.runtime import queue
from queue_helpers import (
    as_role,
    claim_and_fail,
    claim_one,
    history,
    insert_entity,
    insert_raw_document,
    insert_search,
    job,
)

WEEK = timedelta(days=7)


def complete_discoveries(engine: sa.Engine, count: int, days_ago: float) -> list[str]:
    """Searches whose discovery jobs completed ``days_ago`` days ago; returns the jobs."""
    with engine.begin() as conn:
        for _ in range(count):
            insert_search(conn)
        claimed = queue.claim(conn, "basic_discovery", count, "worker-1", 60)
        queue.complete(conn, "worker-1", [(c.id, {"result_count": 1}) for c in claimed])
        ids = [c.id for c in claimed]
        conn.execute(
            sa.text("""
                UPDATE processing.processing_jobs SET completed_at = now() - make_interval(secs => :d * 86400)
                 WHERE id = ANY (CAST(:ids AS uuid[]))"""),
            {"d": days_ago, "ids": ids},
        )
    return ids


def archived_ids(conn: sa.Connection) -> set[str]:
    return set(conn.execute(sa.text("SELECT id::text FROM processing.job_archive")).scalars())


def hot_ids(conn: sa.Connection) -> set[str]:
    return set(conn.execute(sa.text("SELECT id::text FROM processing.processing_jobs")).scalars())


def test_completed_jobs_past_retention_move_in_batches_with_their_history_kept(engine):
    old = complete_discoveries(engine, 5, days_ago=8)
    recent = complete_discoveries(engine, 2, days_ago=1)
    with engine.begin() as conn:
        insert_search(conn)
        insert_search(conn)
        running = claim_one(conn, "basic_discovery").id
        failed = claim_and_fail(conn, "basic_discovery", queue.JobError("parser_error", "not a result page"))
        insert_search(conn)  # stays queued
        before = {job_id: job(conn, job_id)._mapping for job_id in old}
        old_history = {job_id: history(conn, job_id) for job_id in old}

    with as_role(engine, "hreg_worker") as worker:  # what the sensor does, with the worker's privileges
        assert queue.archive_completed(worker, WEEK, 2) == 2  # one batch, oldest first
    assert queue.archive_all_completed(engine, WEEK, batch_size=2, max_batches=10) == 3

    with engine.connect() as conn:
        assert archived_ids(conn) == set(old)
        assert set(recent) | {running, failed} <= hot_ids(conn) and not set(old) & hot_ids(conn)
        assert len(hot_ids(conn)) == 5
        for job_id in old:
            moved = conn.execute(sa.text("SELECT * FROM processing.job_archive WHERE id = :id"), {"id": job_id}).one()
            assert {k: v for k, v in moved._mapping.items() if k != "archived_at"} == dict(before[job_id])
            assert history(conn, job_id) == old_history[job_id]  # claim and completion, as they were
            assert [h.status for h in old_history[job_id]] == ["queued", "running", "completed"]
    assert queue.archive_all_completed(engine, WEEK, batch_size=2, max_batches=10) == 0


def test_the_archive_has_the_job_tables_columns_in_their_order(engine):
    query = sa.text("""
        SELECT column_name, data_type FROM information_schema.columns
         WHERE table_schema = 'processing' AND table_name = :t ORDER BY ordinal_position""")
    with engine.connect() as conn:
        jobs = conn.execute(query, {"t": "processing_jobs"}).all()
        archive = conn.execute(query, {"t": "job_archive"}).all()
    assert archive[0].column_name == "archived_at"
    assert archive[1:] == jobs


def test_a_deleted_job_still_takes_its_history_along(engine):
    (job_id,) = complete_discoveries(engine, 1, days_ago=8)
    with engine.begin() as conn:
        assert [h.status for h in history(conn, job_id)] == ["queued", "running", "completed"]
        conn.execute(sa.text("DELETE FROM processing.processing_jobs WHERE id = :id"), {"id": job_id})
        assert history(conn, job_id) == []


def test_archiving_neither_waits_for_nor_touches_jobs_other_transactions_hold(engine):
    old = complete_discoveries(engine, 4, days_ago=8)
    with engine.begin() as conn:
        for _ in range(3):
            insert_search(conn)
    holder = engine.connect()
    claimer = engine.connect()
    try:
        # One transaction holds two old completed jobs (another archiver, mid-batch); another
        # claims the queued jobs and has not committed.
        holder.begin()
        held = set(
            holder.execute(
                sa.text(
                    "SELECT id::text FROM processing.processing_jobs WHERE id = ANY (CAST(:ids AS uuid[])) "
                    "ORDER BY id LIMIT 2 FOR UPDATE"
                ),
                {"ids": old},
            ).scalars()
        )
        claimer.begin()
        claimed = queue.claim(claimer, "basic_discovery", 10, "worker-2", 60)
        assert len(claimed) == 3
        with engine.begin() as conn:
            conn.execute(sa.text("SET LOCAL lock_timeout = '2s'"))  # waiting would fail the test
            assert queue.archive_completed(conn, WEEK, 100) == 2
        claimer.commit()
        holder.rollback()
    finally:
        holder.close()
        claimer.close()
    with engine.connect() as conn:
        assert archived_ids(conn) == set(old) - held
        assert {job(conn, c.id).status for c in claimed} == {"running"}
    assert queue.archive_all_completed(engine, WEEK, 100, 10) == 2


def test_a_later_stage_stays_due_when_the_success_after_a_failure_is_archived(engine):
    with engine.begin() as conn:
        entity_id = insert_entity(conn, "xml_ready")
        claim_and_fail(conn, "xml_parsing", queue.JobError("parser_error", "unreadable"))
    with engine.begin() as conn:  # later: a parse of a new document succeeds
        document_id = insert_raw_document(conn, entity_id)
        conn.execute(
            sa.text(
                "UPDATE content.entities SET current_si_document_id = :d, processing_status = 'xml_ready' WHERE id = :e"
            ),
            {"d": document_id, "e": entity_id},
        )
        success = claim_one(conn, "xml_parsing").id
        queue.complete(conn, "worker-1", [(success, {})])
        conn.execute(
            sa.text("UPDATE processing.processing_jobs SET completed_at = now() - interval '8 days' WHERE id = :id"),
            {"id": success},
        )
        conn.execute(sa.text("SELECT processing.request_shareholder_research(:e)"), {"e": entity_id})
        assert queue.count_due(conn, "shareholder_download") == 1
    assert queue.archive_all_completed(engine, WEEK, 100, 10) == 1
    with engine.begin() as conn:
        assert archived_ids(conn) == {success}
        assert queue.count_due(conn, "shareholder_download") == 1
        assert claim_one(conn, "shareholder_download").entity_id == entity_id


def archived_parse(engine: sa.Engine) -> str:
    """An entity whose SI document a completed xml_parsing job parsed, that job since archived."""
    with engine.begin() as conn:
        entity_id = insert_entity(conn, "xml_ready")
        parsed = claim_one(conn, "xml_parsing").id
        queue.complete(conn, "worker-1", [(parsed, {})])
        conn.execute(
            sa.text("UPDATE processing.processing_jobs SET completed_at = now() - interval '8 days' WHERE id = :id"),
            {"id": parsed},
        )
    assert queue.archive_all_completed(engine, WEEK, 100, 10) == 1
    return entity_id


def test_a_stale_reparse_does_not_queue_again_what_an_archived_job_parsed(engine):
    from orchestration.xjustiz import PARSER_VERSION

    archived_parse(engine)
    with engine.begin() as conn:
        assert enqueue_reparse(conn, ReparseScope(stale_only=True), parser_version=PARSER_VERSION) == 0


def test_a_document_an_archived_job_parsed_leaves_its_court_current_and_nothing_to_backfill(engine):
    from orchestration.records.court_state import SI_RECORDS, court_states
    from orchestration.records.reparse import SI_REPARSE
    from orchestration.xjustiz import PARSER_VERSION

    court = "D2601"  # insert_entity's
    entity_id = archived_parse(engine)
    # As the workers run it: their role reads the archive.
    with as_role(engine, "hreg_worker") as conn:
        assert court_states(conn, SI_RECORDS, [court], PARSER_VERSION)[court].unfinished == 0
        assert court_states(conn, SI_RECORDS, [court], "another version")[court].unfinished == 1
        scope = {"courts": [court], "entity_ids": None, "since": None, "parser_version": PARSER_VERSION}
        assert conn.execute(SI_REPARSE.unfinished, scope).scalars().all() == []
        scope["parser_version"] = "another version"
        assert conn.execute(SI_REPARSE.unfinished, scope).scalars().all() == [entity_id]


def test_the_archive_sensor_moves_what_the_retention_setting_names(engine, settings):
    old = complete_discoveries(engine, 3, days_ago=3)
    defs = build_definitions(settings.model_copy(update={"job_archive_after_days": 2.0}))
    with (
        dg.instance_for_test() as instance,
        dg.build_sensor_context(instance=instance, resources=defs.resources, definitions=defs) as context,
    ):
        result = defs.get_sensor_def("job_archive_sensor").evaluate_tick(context)
    assert not result.run_requests
    assert result.skip_message == "archived 3 completed jobs"
    with engine.connect() as conn:
        assert archived_ids(conn) == set(old)


def test_hreg_jobs_archive_moves_what_is_older_than_asked(engine):
    from click.testing import CliRunner

    from orchestration.cli import main

    old = complete_discoveries(engine, 2, days_ago=3)
    recent = complete_discoveries(engine, 1, days_ago=0.5)
    result = CliRunner().invoke(main, ["jobs", "archive", "--older-than-days", "1"])
    assert result.exit_code == 0, result.output
    assert "archived 2 jobs completed more than 1 days ago" in result.output
    with engine.connect() as conn:
        assert archived_ids(conn) == set(old)
        assert set(recent) <= hot_ids(conn)
