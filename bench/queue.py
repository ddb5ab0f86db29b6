"""Queue throughput: claim plus complete through orchestration.runtime.queue, with every trigger on, against
a raw ``UPDATE … SKIP LOCKED`` claim on a bare table of the same size without triggers.

The project's jobs are xml_parsing jobs of real entities (stored SI documents, status xml_ready),
so each claim runs the stage gate and each claim and completion runs the statement-level history
and progress triggers, which move the entities to xml_parsing and then parsed. Each measurement
starts from freshly loaded, vacuumed tables; worker processes start together behind a barrier
and the clock runs from the first claim to the last completion.

A third figure, the contract floor, is the bare table plus the writes the contract asks of every
step (one step-history row, the entity's status) done inside the claim and completion statements
themselves: no triggers, constraints, stage gate or extra indexes. It shows how much of the gap to
the raw claim is the work itself and how much is the way the project does it.

Last line: one JSON object with project_jobs_per_s, raw_jobs_per_s and ratio, at batch 1000 with
4 workers, and the floor's floor_jobs_per_s and floor_ratio.

BENCH_BATCH_SIZES and BENCH_WORKER_COUNTS (comma-separated) choose the measurements, BENCH_JOBS
their size; a smaller run must still measure batch 1000 with 4 workers, the last line's.

    .venv/bin/python -m bench.queue     # an embedded server in a temp dir unless HREG_DATABASE_URL is set
    BENCH_JOBS=1200 BENCH_BATCH_SIZES=1000 BENCH_WORKER_COUNTS=4 .venv/bin/python -m bench.queue   # a check that it runs
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
import uuid
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.managers import SyncManager

import sqlalchemy as sa

from bench.common import bench_database, load_stand_in_entities, log
from orchestration.db.engine import create_app_engine
from orchestration.runtime import queue
from orchestration.runtime.processes import reset_interrupt_signals

# The batch sizes measured (BENCH_BATCH_SIZES, comma-separated; the last line's figures are of 1000).
BATCH_SIZES = tuple(int(size) for size in os.environ.get("BENCH_BATCH_SIZES", "1,100,1000").split(","))
WORKER_COUNTS = tuple(int(count) for count in os.environ.get("BENCH_WORKER_COUNTS", "1,4").split(","))
# Enough jobs that each of 4 workers claims several batches, few enough for a run of a few
# minutes (one job per transaction is bound by the commit's fsync, not by the queue): 24,000 at
# batch 1000 (BENCH_JOBS), a third of that at batch 100, a sixtieth at batch 1.
JOBS = int(os.environ.get("BENCH_JOBS", "24000"))
JOBS_PER_BATCH_SIZE = {1: JOBS // 60, 100: JOBS // 3, 1000: JOBS}
LEASE_SECONDS = 300

RESET_PROJECT = sa.text("""
    TRUNCATE processing.job_step_history, processing.processing_jobs, content.entities,
             content.raw_documents, public.searches CASCADE
""")

# The raw baseline: the same claim and completion statements as orchestration.runtime.queue, on a table
# with the queue's columns and only the indexes a bare queue needs (due jobs, leases), without
# triggers and without the stage gate.
CREATE_RAW = sa.text("""
    CREATE SCHEMA IF NOT EXISTS bench;
    DROP TABLE IF EXISTS bench.raw_jobs;
    CREATE TABLE bench.raw_jobs (
        id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        type             text NOT NULL,
        status           text NOT NULL DEFAULT 'queued',
        entity_id        uuid NOT NULL DEFAULT gen_random_uuid(),
        data             jsonb NOT NULL DEFAULT '{}'::jsonb,
        result           jsonb,
        retry_count      integer NOT NULL DEFAULT 0,
        worker_id        text,
        started_at       timestamptz,
        completed_at     timestamptz,
        lease_until      timestamptz,
        next_attempt_at  timestamptz NOT NULL DEFAULT now(),
        created_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX raw_jobs_due_idx ON bench.raw_jobs (type, next_attempt_at, id) WHERE status = 'queued';
    CREATE INDEX raw_jobs_lease_idx ON bench.raw_jobs (lease_until) WHERE status = 'running';
""")
LOAD_RAW = sa.text("INSERT INTO bench.raw_jobs (type) SELECT 'xml_parsing' FROM generate_series(1, :jobs)")
RAW_CLAIM = sa.text("""
    WITH due AS (
        SELECT id FROM bench.raw_jobs
         WHERE type = 'xml_parsing' AND status = 'queued' AND next_attempt_at <= now()
         ORDER BY next_attempt_at, id
         LIMIT :limit
           FOR UPDATE SKIP LOCKED
    )
    UPDATE bench.raw_jobs j
       SET status = 'running', worker_id = :worker_id, started_at = now(), completed_at = NULL,
           lease_until = now() + make_interval(secs => :lease_seconds), updated_at = now()
     WHERE j.id = ANY (ARRAY(SELECT id FROM due))
    RETURNING j.id::text
""")
RAW_COMPLETE = sa.text("""
    UPDATE bench.raw_jobs j
       SET status = 'completed', result = r.result, completed_at = now(), lease_until = NULL, updated_at = now()
      FROM unnest(CAST(:ids AS uuid[]), CAST(:results AS jsonb[])) AS r(id, result)
     WHERE j.id = r.id AND j.status = 'running' AND j.worker_id = :worker_id
""")


# The contract floor: the raw table, an entity per job and a history table, each bare.
CREATE_FLOOR = sa.text("""
    DROP TABLE IF EXISTS bench.floor_history;
    DROP TABLE IF EXISTS bench.floor_entities;
    CREATE TABLE bench.floor_entities (
        id                 uuid PRIMARY KEY,
        processing_status  text NOT NULL,
        updated_at         timestamptz NOT NULL DEFAULT now()
    ) WITH (fillfactor = 80);
    CREATE TABLE bench.floor_history (
        id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        job_id          uuid NOT NULL,
        status          text NOT NULL,
        worker_id       text,
        attempt_number  integer NOT NULL,
        created_at      timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX floor_history_job_idx ON bench.floor_history (job_id);
    INSERT INTO bench.floor_entities (id, processing_status) SELECT entity_id, 'xml_ready' FROM bench.raw_jobs;
""")


def _with_step_writes(changed_jobs: str, status: str, entity_status: str) -> sa.TextClause:
    """``changed_jobs`` (an UPDATE of bench.raw_jobs returning the job's id, entity, worker and
    retry count), with a history row per job and the entity's new status in the same statement."""
    return sa.text(f"""
        WITH changed AS ({changed_jobs}),
        history AS (
            INSERT INTO bench.floor_history (job_id, status, worker_id, attempt_number)
            SELECT id, '{status}', worker_id, retry_count + 1 FROM changed),
        entities AS (
            UPDATE bench.floor_entities e SET processing_status = '{entity_status}', updated_at = now()
              FROM changed c WHERE e.id = c.entity_id)
        SELECT id::text FROM changed
    """)


_STEP_COLUMNS = "RETURNING j.id, j.entity_id, j.worker_id, j.retry_count"
FLOOR_CLAIM = _with_step_writes(RAW_CLAIM.text.replace("RETURNING j.id::text", _STEP_COLUMNS), "running", "xml_parsing")
FLOOR_COMPLETE = _with_step_writes(RAW_COMPLETE.text + _STEP_COLUMNS, "completed", "parsed")


def claim_project(conn: sa.Connection, batch_size: int, worker_id: str) -> list[str]:
    return [job.id for job in queue.claim(conn, "xml_parsing", batch_size, worker_id, LEASE_SECONDS)]


def complete_project(conn: sa.Connection, job_ids: list[str], worker_id: str) -> None:
    queue.complete(conn, worker_id, [(job_id, {"records": 1}) for job_id in job_ids])


class BareStatements:
    """Claim and completion by plain statements on the bench tables (raw and floor)."""

    def __init__(self, claim: sa.TextClause, complete: sa.TextClause) -> None:
        self.claim_statement, self.complete_statement = claim, complete

    def claim(self, conn: sa.Connection, batch_size: int, worker_id: str) -> list[str]:
        parameters = {"limit": batch_size, "worker_id": worker_id, "lease_seconds": LEASE_SECONDS}
        return list(conn.execute(self.claim_statement, parameters).scalars())

    def complete(self, conn: sa.Connection, job_ids: list[str], worker_id: str) -> None:
        results = [json.dumps({"records": 1})] * len(job_ids)
        conn.execute(self.complete_statement, {"ids": job_ids, "results": results, "worker_id": worker_id})


RAW = BareStatements(RAW_CLAIM, RAW_COMPLETE)
FLOOR = BareStatements(FLOOR_CLAIM, FLOOR_COMPLETE)

CLAIM_AND_COMPLETE = {
    "project": (claim_project, complete_project),
    "floor": (FLOOR.claim, FLOOR.complete),
    "raw": (RAW.claim, RAW.complete),
}


def work_until_empty(url: str, kind: str, batch_size: int, worker_id: str, start) -> tuple[int, float, float]:
    """One worker process: claim a batch, then complete it, in a transaction each (as a worker does
    around its work), until nothing is left. Returns the jobs it did and the wall-clock times of
    its first claim and last completion."""
    engine = create_app_engine(url, pool_size=1)
    claim, complete = CLAIM_AND_COMPLETE[kind]
    done = 0
    with engine.connect() as conn:
        start.wait()
        began = time.time()
        while True:
            with conn.begin():
                job_ids = claim(conn, batch_size, worker_id)
            if not job_ids:
                break
            with conn.begin():
                complete(conn, job_ids, worker_id)
            done += len(job_ids)
    ended = time.time()
    engine.dispose()
    return done, began, ended


def prepare(engine: sa.Engine, kind: str, jobs: int) -> None:
    with engine.begin() as conn:
        if kind == "project":
            conn.execute(RESET_PROJECT)
            # Entities in xml_ready: the entity trigger queues one xml_parsing job each, as a download does.
            load_stand_in_entities(conn, jobs, "xml_ready")
        else:
            conn.execute(CREATE_RAW)
            conn.execute(LOAD_RAW, {"jobs": jobs})
            if kind == "floor":
                conn.execute(CREATE_FLOOR)
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("VACUUM ANALYZE"))


class Workers:
    """The worker processes and the barrier they start behind, spawned once for every measurement:
    each spawned process imports this module anew, which takes longer than a small measurement.
    The clock runs from the first claim, so which process works is no part of a figure."""

    def __init__(self, processes: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.manager = SyncManager(ctx=context)
        self.pool = ProcessPoolExecutor(processes, mp_context=context, initializer=reset_interrupt_signals)

    def __enter__(self) -> Workers:
        self.manager.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.pool.shutdown(cancel_futures=True)
        self.manager.shutdown()

    def run(self, url: str, kind: str, batch_size: int, workers: int) -> list[tuple[int, float, float]]:
        """``work_until_empty`` in ``workers`` processes at once (each waits for all at the barrier,
        so no process takes two), within 600 s; a process that never reaches the barrier breaks
        it for the others within 120 s."""
        start = self.manager.Barrier(workers, timeout=120)
        # Worker ids as Dagster runs claim: their run ids.
        futures = [
            self.pool.submit(work_until_empty, url, kind, batch_size, str(uuid.uuid4()), start) for _ in range(workers)
        ]
        deadline = time.monotonic() + 600
        return [future.result(timeout=max(0.0, deadline - time.monotonic())) for future in futures]


def measure(engine: sa.Engine, url: str, workers_pool: Workers, kind: str, batch_size: int, workers: int) -> float:
    """Jobs per second claimed and completed by ``workers`` processes in batches of ``batch_size``."""
    jobs = JOBS_PER_BATCH_SIZE[batch_size]
    prepare(engine, kind, jobs)
    results = workers_pool.run(url, kind, batch_size, workers)
    done = sum(count for count, _, _ in results)
    if done != jobs:
        raise RuntimeError(f"{kind}: {done} of {jobs} jobs were claimed and completed")
    seconds = max(ended for _, _, ended in results) - min(began for _, began, _ in results)
    return jobs / seconds


def main() -> None:
    url = bench_database("hreg_bench_queue")
    url_text = url.render_as_string(hide_password=False)
    engine = create_app_engine(url)
    rows = []
    with Workers(max(WORKER_COUNTS)) as workers_pool:
        for batch_size in BATCH_SIZES:
            for workers in WORKER_COUNTS:
                rates = {
                    kind: measure(engine, url_text, workers_pool, kind, batch_size, workers)
                    for kind in CLAIM_AND_COMPLETE
                }
                log(
                    f"batch {batch_size:>4}, {workers} workers: "
                    + ", ".join(f"{kind} {rate:>9,.0f} jobs/s" for kind, rate in rates.items())
                )
                rows.append((batch_size, workers, JOBS_PER_BATCH_SIZE[batch_size], rates))
    engine.dispose()

    print(
        f"{'batch':>5}  {'workers':>7}  {'jobs':>6}  {'project jobs/s':>14}  {'floor jobs/s':>12}  {'raw jobs/s':>10}"
        f"  {'ratio':>5}  {'floor ratio':>11}"
    )
    for batch_size, workers, jobs, rates in rows:
        project, floor, raw = rates["project"], rates["floor"], rates["raw"]
        print(
            f"{batch_size:>5}  {workers:>7}  {jobs:>6}  {project:>14,.0f}  {floor:>12,.0f}  {raw:>10,.0f}"
            f"  {project / raw:>5.2f}  {floor / raw:>11.2f}"
        )
    rates = next(rates for b, w, _, rates in rows if (b, w) == (1000, 4))
    print(
        json.dumps(
            {
                "project_jobs_per_s": round(rates["project"]),
                "raw_jobs_per_s": round(rates["raw"]),
                "ratio": round(rates["project"] / rates["raw"], 3),
                "floor_jobs_per_s": round(rates["floor"]),
                "floor_ratio": round(rates["floor"] / rates["raw"], 3),
            }
        )
    )


if __name__ == "__main__":
    main()
