"""Lease reaping: a running job whose lease expired fails as lease_expired and is retried, and a job
that finishes while the reaper runs is never overwritten."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import sqlalchemy as sa

from orchestration.runtime import queue
from queue_helpers import claim_one, expire_lease, history, insert_search, job, make_due, search

# A statement that would wait for a row lock fails instead of hanging the test.
NO_WAITING = sa.text("SET LOCAL lock_timeout = '2s'")


def claim_with_expired_lease(engine: sa.Engine, worker_id: str = "worker-1") -> str:
    with engine.begin() as conn:
        job_id = claim_one(conn, "basic_discovery", worker_id).id
        expire_lease(conn, job_id)
    return job_id


def test_an_expired_lease_fails_the_job_as_lease_expired_and_it_is_retried(engine):
    with engine.begin() as conn:
        insert_search(conn)
    job_id = claim_with_expired_lease(engine, worker_id="crashed-worker")

    with engine.begin() as conn:
        assert queue.reap_expired(conn) == [job_id]
    with engine.begin() as conn:
        reaped = job(conn, job_id)
        assert (reaped.status, reaped.retry_count, reaped.worker_id) == ("queued", 1, None)
        failed, requeued = history(conn, job_id)[-2:]
        assert (failed.status, failed.attempt_number, failed.worker_id) == ("failed", 1, "crashed-worker")
        assert (failed.error_type, failed.error_source) == ("lease_expired", "lease_reaper")
        assert "crashed-worker" in failed.error_message
        assert (requeued.status, requeued.attempt_number) == ("queued", 2)


def test_live_leases_and_finished_or_queued_jobs_are_not_reaped(engine):
    with engine.begin() as conn:
        for _ in range(3):
            insert_search(conn)
        running = claim_one(conn, "basic_discovery")
        completed = claim_one(conn, "basic_discovery")
        queue.complete(conn, "worker-1", [(completed.id, {"result_count": 1})])
        expire_lease(conn, completed.id)
    with engine.begin() as conn:
        assert queue.reap_expired(conn) == []
        assert job(conn, running.id).status == "running"
        assert job(conn, completed.id).status == "completed"
        assert queue.count_due(conn, "basic_discovery") == 1


def test_a_heartbeat_keeps_the_job_from_the_reaper_but_only_for_its_own_worker(engine):
    with engine.begin() as conn:
        insert_search(conn)
    job_id = claim_with_expired_lease(engine)
    with engine.begin() as conn:
        assert queue.extend_leases(conn, [job_id], "worker-2", 60) == 0
        assert queue.extend_leases(conn, [job_id], "worker-1", 60) == 1
    with engine.begin() as conn:
        assert queue.reap_expired(conn) == []
        assert job(conn, job_id).status == "running"


def test_reaping_the_last_attempt_fails_the_search(engine):
    with engine.begin() as conn:
        search_id = insert_search(conn)
        max_retries = queue.job_types(conn)["basic_discovery"].max_retries
    for _ in range(max_retries + 1):
        job_id = claim_with_expired_lease(engine)
        with engine.begin() as conn:
            assert queue.reap_expired(conn) == [job_id]
            make_due(conn, job_id)
    with engine.begin() as conn:
        assert (job(conn, job_id).status, job(conn, job_id).failure_class) == ("failed", "lease_expired")
        assert search(conn, search_id).status == "failed"
        assert [row.attempt_number for row in history(conn, job_id) if row.status == "failed"] == list(
            range(1, max_retries + 2)
        )


def test_a_job_that_completes_while_the_reaper_runs_stays_completed(engine):
    with engine.begin() as conn:
        search_id = insert_search(conn)
    job_id = claim_with_expired_lease(engine)

    with engine.connect() as worker, engine.connect() as reaper:
        with worker.begin():
            # The worker's completion holds the row lock, uncommitted, while the reaper runs.
            assert queue.complete(worker, "worker-1", [(job_id, {"result_count": 4})]) == {job_id}
            with reaper.begin():
                reaper.execute(NO_WAITING)
                assert queue.reap_expired(reaper) == []
        with reaper.begin():
            assert queue.reap_expired(reaper) == []

    with engine.begin() as conn:
        assert (job(conn, job_id).status, job(conn, job_id).retry_count) == ("completed", 0)
        assert [row.status for row in history(conn, job_id)] == ["queued", "running", "completed"]
        assert search(conn, search_id).status == "completed"


def complete_in_own_transaction(engine: sa.Engine, job_id: str) -> set[str]:
    with engine.begin() as conn:
        return queue.complete(conn, "worker-1", [(job_id, {"result_count": 4})])


def wait_until_a_statement_waits_for_a_lock(engine: sa.Engine, timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    # A fresh transaction per look: pg_stat_activity is a snapshot for the length of a transaction.
    while time.monotonic() < deadline:
        with engine.begin() as conn:
            if conn.execute(
                sa.text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
                )
            ).scalar_one():
                return
        time.sleep(0.01)
    raise AssertionError("the worker's completion never waited for the reaper's lock")


def test_a_worker_cannot_complete_a_job_the_reaper_took_first(engine):
    with engine.begin() as conn:
        insert_search(conn)
    job_id = claim_with_expired_lease(engine)

    with engine.connect() as reaper, ThreadPoolExecutor(1) as pool:
        with reaper.begin():
            assert queue.reap_expired(reaper) == [job_id]
            completing = pool.submit(complete_in_own_transaction, engine, job_id)
            wait_until_a_statement_waits_for_a_lock(engine)
        # The completion re-reads the row the reaper committed: no longer running, so not completed.
        assert completing.result(timeout=10) == set()

    with engine.begin() as conn:
        assert (job(conn, job_id).status, job(conn, job_id).retry_count) == ("queued", 1)
        assert "completed" not in [row.status for row in history(conn, job_id)]
