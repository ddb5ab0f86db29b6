"""The multi-host layout's throughput against the single machine's, and the object store's read cost.

1. N xml_parsing jobs through the cluster layout (`orchestration.stacks.cluster`: PostgreSQL over TCP,
   Redis, moto's S3, a code server, the daemon, Celery workers) with one worker, then with two.
2. N more through the embedded single-machine layout (`hreg dev`'s daemon, in-process runs), in
   the same run.
3. Reads of one real scanned shareholder list from the S3 store and from a local directory.

Every layout works xml_parsing jobs in batches of BENCH_BATCH (default 100), one batch a run
(HREG_MAX_BATCHES_PER_RUN=1): with the shipped 5000, or with a run that goes on claiming batches
while jobs are due, the first step takes the whole workload and the second worker none.

Last line: one JSON object with cluster_1_worker_jobs_per_s, cluster_2_workers_jobs_per_s,
single_machine_jobs_per_s, ratio (cluster with one worker / single machine), workers_seen,
store_read_ms_p50 and local_read_ms_p50.

Each layout's daemon is given BENCH_WARM_UP_S (default 10) to make its first ticks before the
clock starts, so that its start-up is not counted. A smoke run, which judges no figure, can leave
it at 0, and with BENCH_CLUSTER_STARTS=1 start the cluster layout once instead of once per worker
count: two workers first, then one after the second is stopped (warm from the first measurement).

    .venv/bin/python -m bench.cluster             # N=2000
    BENCH_JOBS=200 BENCH_BATCH=20 BENCH_READS=20 .venv/bin/python -m bench.cluster   # a quick check
    BENCH_JOBS=40 BENCH_BATCH=20 BENCH_READS=5 BENCH_WARM_UP_S=0 BENCH_CLUSTER_STARTS=1 .venv/bin/python -m bench.cluster
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa

from bench.common import bench_stack_environment, cloned_documents, load_entities, log
from orchestration.db.engine import create_app_engine
from orchestration.records.documents import DocumentStore
from orchestration.records.object_store import open_object_store
from orchestration.stacks import cluster, devstack
from orchestration.stacks.devstack import stop_processes

JOBS = int(os.environ.get("BENCH_JOBS", "2000"))
READS = int(os.environ.get("BENCH_READS", "200"))
BATCH = int(os.environ.get("BENCH_BATCH", "100"))
WARM_UP_S = float(os.environ.get("BENCH_WARM_UP_S", "10"))
ONE_START = os.environ.get("BENCH_CLUSTER_STARTS") == "1"
SAMPLE_LIST = Path(__file__).resolve().parents[2] / "shared" / "samples" / "gesellschafterliste" / "HRB_70597.pdf"


def jobs_per_s(engine: sa.Engine, store: DocumentStore, documents) -> float:
    """Load ``documents`` as xml_parsing jobs and time the running layout until all are done."""
    entity_ids = load_entities(engine, store, documents)
    started = time.monotonic()
    while True:
        with engine.connect() as conn:
            done = conn.execute(
                sa.text("""SELECT count(*) FROM processing.processing_jobs
                            WHERE type = 'xml_parsing' AND status IN ('completed', 'failed')
                              AND entity_id = ANY(CAST(:ids AS uuid[]))"""),
                {"ids": entity_ids},
            ).scalar_one()
        if done >= len(entity_ids):
            return len(entity_ids) / (time.monotonic() - started)
        if time.monotonic() - started > 1800:
            raise TimeoutError(f"only {done} of {len(entity_ids)} jobs done after 1800 s")
        time.sleep(0.5)


def workers_seen(url: str) -> list[str]:
    engine = sa.create_engine(sa.make_url(url).set(database="hreg_dagster"))
    try:
        with engine.connect() as conn:
            events = conn.execute(sa.text("SELECT event FROM event_logs WHERE event LIKE '%in celery worker%'"))
            names = set()
            for (event,) in events:
                entries = json.loads(event)["dagster_event"]["event_specific_data"]["metadata_entries"]
                names |= {e["entry_data"]["text"].split("@")[0] for e in entries if e["label"] == "Celery worker"}
    finally:
        engine.dispose()
    return sorted(names)


def through_cluster(worker_counts: tuple[int, ...], documents) -> tuple[list[float], list[str], float]:
    """jobs/s through one start of the cluster layout with each of ``worker_counts`` Celery workers
    (from the most down: the workers beyond a count are stopped before it is measured; the
    ``documents`` shared out equally), the workers that ran the first count's steps, and the S3
    read p50 (ms)."""
    per_count = len(documents) // len(worker_counts)
    data_dir = Path(tempfile.mkdtemp(prefix=f"hreg-bench-cluster-{worker_counts[0]}-"))
    log(f"starting the cluster layout with {worker_counts[0]} worker(s)…")
    running = cluster.start(data_dir, worker_counts[0], "sample")
    try:
        url = running.env["HREG_DATABASE_URL"]
        engine = create_app_engine(url)
        saved = dict(os.environ)
        os.environ.update(running.env)  # boto3's AWS_* for the store of this process
        try:
            store = DocumentStore(running.env["HREG_DOCUMENT_STORE"])
            time.sleep(WARM_UP_S)  # the daemon's first ticks are start-up, not throughput
            rates, seen = [], []
            for index, workers in enumerate(worker_counts):
                stop_processes({name: running.processes[name] for name in cluster.worker_names(running)[workers:]})
                log(f"cluster, {workers} worker(s): {per_count} jobs…")
                rates.append(jobs_per_s(engine, store, documents[index * per_count : (index + 1) * per_count]))
                names = workers_seen(url)
                seen = seen or names
                log(f"cluster, {workers} worker(s): {rates[-1]:.1f} jobs/s, steps so far on {names}")
            read_ms = read_p50_ms(running.env["HREG_DOCUMENT_STORE"])
        finally:
            os.environ.clear()
            os.environ.update(saved)
            engine.dispose()
        return rates, seen, read_ms
    finally:
        cluster.stop(running)
        shutil.rmtree(cluster.postgres_base(data_dir), ignore_errors=True)


def through_single_machine(documents) -> float:
    url, data_dir, settings = bench_stack_environment("hreg_bench_cluster_single")
    engine = create_app_engine(url)
    stack = devstack.prepare(settings)
    try:
        devstack.start_sample_register(stack, data_dir / "logs")
        devstack.start_dagster(stack, webserver=False, log_dir=data_dir / "logs")
        time.sleep(WARM_UP_S)
        log(f"single machine: {len(documents)} jobs…")
        rate = jobs_per_s(engine, DocumentStore(settings.documents_dir), documents)
    finally:
        devstack.stop(stack)
        engine.dispose()
    log(f"single machine: {rate:.1f} jobs/s")
    return rate


def read_p50_ms(location: str) -> float:
    objects = open_object_store(location)
    content = SAMPLE_LIST.read_bytes()
    objects.put("bench/list.pdf", content)
    timings = []
    for _ in range(READS):
        started = time.perf_counter()
        assert objects.get("bench/list.pdf") == content
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


def main() -> None:
    # `hreg db upgrade` (the cluster's) and `hreg dev`'s preparation write the batch size to
    # processing.job_types; every process of each layout reads both.
    os.environ.update({"HREG_BATCH_SIZES": json.dumps({"xml_parsing": BATCH}), "HREG_MAX_BATCHES_PER_RUN": "1"})
    log(f"generating {3 * JOBS} SI documents…")
    documents = cloned_documents(3 * JOBS)
    if ONE_START:
        (two_workers, one_worker), seen, store_read_ms = through_cluster((2, 1), documents[: 2 * JOBS])
    else:
        (one_worker,), _, store_read_ms = through_cluster((1,), documents[:JOBS])
        (two_workers,), seen, _ = through_cluster((2,), documents[JOBS : 2 * JOBS])
    single = through_single_machine(documents[2 * JOBS :])
    local_read_ms = read_p50_ms(Path(tempfile.mkdtemp(prefix="hreg-bench-local-")).as_uri())
    print(
        json.dumps(
            {
                "jobs": JOBS,
                "batch_size": BATCH,
                "cluster_1_worker_jobs_per_s": round(one_worker, 1),
                "cluster_2_workers_jobs_per_s": round(two_workers, 1),
                "single_machine_jobs_per_s": round(single, 1),
                "ratio": round(one_worker / single, 3),
                "workers_seen": seen,
                "store_read_ms_p50": round(store_read_ms, 2),
                "local_read_ms_p50": round(local_read_ms, 3),
            }
        )
    )


if __name__ == "__main__":
    main()
