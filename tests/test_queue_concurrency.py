"""Four worker processes claim from 10,000 jobs at once: every job is claimed exactly once."""

from __future__ import annotations

import multiprocessing

import sqlalchemy as sa

from orchestration.db.engine import create_app_engine
from orchestration.runtime import queue
from orchestration.runtime.processes import run_in_processes

JOBS = 10_000
# Different batch sizes per worker, so that claims of every size overlap.
BATCH_SIZES = (7, 50, 120, 300)


def claim_until_empty(url: str, worker_id: str, batch_size: int, start) -> list[str]:
    """One worker process: its own engine, claiming and completing until nothing is left."""
    engine = create_app_engine(url)
    claimed: list[str] = []
    start.wait()
    try:
        while True:
            with engine.begin() as conn:
                ids = [job.id for job in queue.claim(conn, "basic_discovery", batch_size, worker_id, 60)]
            if not ids:
                return claimed
            claimed += ids
            with engine.begin() as conn:
                queue.complete(conn, worker_id, [(job_id, {"result_count": 0}) for job_id in ids])
    finally:
        engine.dispose()


def test_four_processes_claim_each_of_10000_jobs_exactly_once(engine, db_url):
    with engine.begin() as conn:
        conn.execute(
            sa.text("""
            INSERT INTO public.searches (user_id, query)
            SELECT gen_random_uuid(), 'Firma ' || n FROM generate_series(1, :n) AS n
        """),
            {"n": JOBS},
        )
        all_jobs = set(conn.execute(sa.text("SELECT id::text FROM processing.processing_jobs")).scalars())
    assert len(all_jobs) == JOBS

    url = db_url.render_as_string(hide_password=False)
    with multiprocessing.get_context("spawn").Manager() as manager:
        start = manager.Barrier(len(BATCH_SIZES))
        per_worker = run_in_processes(
            claim_until_empty,
            [(url, f"worker-{n}", size, start) for n, size in enumerate(BATCH_SIZES)],
            timeout_s=300,
        )

    claimed = [job_id for ids in per_worker for job_id in ids]
    assert len(claimed) == JOBS and set(claimed) == all_jobs
    with engine.begin() as conn:
        assert conn.execute(
            sa.text("SELECT status, count(*) FROM processing.processing_jobs GROUP BY status")
        ).all() == [("completed", JOBS)]
        # Each job has one claim in its history, by the worker that reported it.
        claims_per_job = conn.execute(
            sa.text("""
            SELECT count(*) FILTER (WHERE h.status = 'running'),
                   count(DISTINCT h.worker_id) FILTER (WHERE h.status IN ('running', 'completed'))
              FROM processing.job_step_history h GROUP BY h.job_id
        """)
        ).all()
        assert set(claims_per_job) == {(1, 1)} and len(claims_per_job) == JOBS
        assert (
            conn.execute(sa.text("SELECT count(*) FROM public.searches WHERE status = 'completed'")).scalar_one()
            == JOBS
        )
