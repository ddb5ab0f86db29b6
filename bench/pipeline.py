"""Pipeline throughput and latency: Dagster (sensors, daemon, runs) against a plain loop.

1. Throughput: N xml_parsing jobs go through a plain single-process loop (claim a batch, parse,
   report); then N more go through the sensors and the daemon. Same stage code, same database.
2. Latency: searches are inserted one at a time, each when no discovery run is in flight; each
   one's time until a run claims its discovery job (sensor tick, run queue, run process start),
   as p50 and p95.
3. Opens: companies the searches listed but did not open are opened one at a time on the
   sample register (processing.open_entity, as a person's click); each one's time from its
   discovery job until the company is parsed, as p50 and p95.

Last line: one JSON object with dagster_jobs_per_s, plain_loop_jobs_per_s, ratio,
search_to_run_start_p50_s, search_to_run_start_p95_s, open_to_parsed_p50_s and
open_to_parsed_p95_s.

Before the throughput through Dagster, the daemon is given BENCH_WARM_UP_S (default 10) to come
up and tick once, so that its start-up is not counted. A smoke run, which judges no figure, can
leave it at 0, and with HREG_SEARCH_OPENS=none let the searches open none of their results
themselves: the opens wait until no discovery run is in flight, those of a search's own opens
included.

    .venv/bin/python -m bench.pipeline            # N=10000, 10 searches, 10 opens
    BENCH_JOBS=2000 BENCH_SEARCHES=5 BENCH_OPENS=5 .venv/bin/python -m bench.pipeline
    BENCH_JOBS=40 BENCH_SEARCHES=1 BENCH_OPENS=1 BENCH_WARM_UP_S=0 HREG_SEARCH_OPENS=none .venv/bin/python -m bench.pipeline
"""

from __future__ import annotations

import json
import os
import time
import uuid

import dagster as dg
import sqlalchemy as sa

from bench.common import bench_stack_environment, cloned_documents, load_entities, log
from bench.latency import open_to_parsed_s, p50_p95
from orchestration.db.engine import create_app_engine
from orchestration.jobs.specs import JOB_TYPES
from orchestration.records.documents import DocumentStore
from orchestration.runtime.worker import run_batch
from orchestration.stacks import devstack
from orchestration.stages.parsing import XmlParsingStage
from sensors.jobs import IN_FLIGHT

JOBS = int(os.environ.get("BENCH_JOBS", "10000"))
SEARCHES = int(os.environ.get("BENCH_SEARCHES", "10"))
OPENS = int(os.environ.get("BENCH_OPENS", "10"))
WARM_UP_S = float(os.environ.get("BENCH_WARM_UP_S", "10"))


def completed_jobs(engine: sa.Engine, entity_ids: list[str]) -> int:
    with engine.connect() as conn:
        return conn.execute(
            sa.text("""SELECT count(*) FROM processing.processing_jobs
                        WHERE type = 'xml_parsing' AND status IN ('completed', 'failed')
                          AND entity_id = ANY(CAST(:ids AS uuid[]))"""),
            {"ids": entity_ids},
        ).scalar_one()


def plain_loop(engine: sa.Engine, store: DocumentStore, batch_size: int) -> int:
    done = 0
    while (
        report := run_batch(
            engine, XmlParsingStage(JOB_TYPES.xml_parsing, store), f"plain-loop-{os.getpid()}", limit=batch_size
        )
    ).claimed:
        done += report.claimed
    return done


def wait_for_idle_discovery(instance: dg.DagsterInstance) -> None:
    """Until no discovery run is in flight: a working run would take the next search at once."""
    while instance.get_runs_count(dg.RunsFilter(job_name="basic_discovery_job", statuses=IN_FLIGHT)):
        time.sleep(0.5)


def search_latency(engine: sa.Engine, instance: dg.DagsterInstance) -> float:
    """Seconds from a search's insert until a run claims its discovery job, with no run warm."""
    wait_for_idle_discovery(instance)
    with engine.begin() as conn:
        search_id = conn.execute(
            sa.text("INSERT INTO public.searches (user_id, query) VALUES (:u, 'GmbH') RETURNING id"),
            {"u": str(uuid.uuid4())},
        ).scalar_one()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            latency = conn.execute(
                sa.text("""SELECT extract(epoch FROM h.created_at - s.created_at)
                             FROM public.searches s
                             JOIN processing.processing_jobs j ON j.search_id = s.id
                             JOIN processing.job_step_history h ON h.job_id = j.id AND h.status = 'running'
                            WHERE s.id = :s ORDER BY h.id LIMIT 1"""),
                {"s": search_id},
            ).scalar()
        if latency is not None:
            return float(latency)
        time.sleep(0.2)
    raise TimeoutError(f"no run took search {search_id} within 120 s")


def main() -> None:
    url, data_dir, settings = bench_stack_environment("hreg_bench_pipeline")
    engine = create_app_engine(url)
    store = DocumentStore(settings.documents_dir)
    with engine.connect() as conn:
        batch_size = conn.execute(
            sa.text("SELECT batch_size FROM processing.job_types WHERE type = 'xml_parsing'")
        ).scalar_one()

    log(f"generating {2 * JOBS} SI documents…")
    documents = cloned_documents(2 * JOBS)

    load_entities(engine, store, documents[:JOBS])
    log(f"plain loop over {JOBS} jobs (batch {batch_size})…")
    started = time.monotonic()
    plain_done = plain_loop(engine, store, batch_size)
    plain_per_s = plain_done / (time.monotonic() - started)
    log(f"plain loop: {plain_per_s:.0f} jobs/s")

    stack = devstack.prepare(settings)
    log_dir = data_dir / "logs"
    try:
        devstack.start_sample_register(stack, log_dir)
        devstack.start_dagster(stack, webserver=False, log_dir=log_dir)
        instance = dg.DagsterInstance.from_config(str(stack.dagster_home))
        # Let the daemon come up and tick once, so that its start-up is not counted as throughput.
        time.sleep(WARM_UP_S)

        entity_ids = load_entities(engine, store, documents[JOBS:])
        log(f"dagster over {JOBS} jobs…")
        started = time.monotonic()
        while (done := completed_jobs(engine, entity_ids)) < JOBS:
            if time.monotonic() - started > 900:
                raise TimeoutError(f"only {done} of {JOBS} jobs done after 900 s")
            time.sleep(0.5)
        dagster_per_s = JOBS / (time.monotonic() - started)
        runs = instance.get_runs_count(dg.RunsFilter(job_name="xml_parsing_job"))
        log(f"dagster: {dagster_per_s:.0f} jobs/s in {runs} runs")

        latencies = []
        for i in range(SEARCHES):
            latencies.append(search_latency(engine, instance))
            log(f"search {i + 1}: run started after {latencies[-1]:.2f} s")

        wait_for_idle_discovery(instance)  # the last search's results recorded: companies to open
        with engine.connect() as conn:
            listed = (
                conn.execute(
                    sa.text("SELECT id::text FROM content.entities WHERE processing_status = 'discovered' LIMIT :n"),
                    {"n": OPENS},
                )
                .scalars()
                .all()
            )
        opens = []
        for entity_id in listed:
            wait_for_idle_discovery(instance)
            opens.append(open_to_parsed_s(engine, entity_id))
            log(f"open {len(opens)}: parsed after {opens[-1]:.2f} s")
    finally:
        devstack.stop(stack)
        engine.dispose()

    search_p50, search_p95 = p50_p95(latencies)
    open_p50, open_p95 = p50_p95(opens)
    print(
        json.dumps(
            {
                "jobs": JOBS,
                "xml_parsing_runs": runs,
                "dagster_jobs_per_s": round(dagster_per_s, 1),
                "plain_loop_jobs_per_s": round(plain_per_s, 1),
                "ratio": round(dagster_per_s / plain_per_s, 3),
                "search_to_run_start_p50_s": round(search_p50, 2),
                "search_to_run_start_p95_s": round(search_p95, 2),
                "open_to_parsed_p50_s": round(open_p50, 2),
                "open_to_parsed_p95_s": round(open_p95, 2),
                "opens": len(opens),
            }
        )
    )


if __name__ == "__main__":
    main()
