"""The portal's budget under load: do people still get their results quickly?

The live limit (60 retrievals an hour: a burst of 5, then 55 tokens over the hour) is simulated
60 times faster (BENCH_SCALE): one portal hour is one real minute, and the workload is scaled by
the same factor. Over one portal hour, 5 people's searches and 20 entity opens arrive while 200
background refreshes (a monitoring rule re-checking watched companies) are queued at the start.
Four discovery workers and one parse worker run the project's stages against the sample
register (real HTTP), the shared bucket in PostgreSQL and the database's triggers, as the
Dagster runs do; the sample register counts every retrieval it serves.

The same workload runs twice: people first (the default), and as a baseline with every job of
one priority (first come, first served), as before priorities existed.

Last line: one JSON object with retrievals_per_search, retrievals_per_open, interactive_p50_min,
interactive_p95_min (portal minutes, from a person's action to the parsed record, or for a search
to its recorded results; an action unfinished half an hour after the hour counts with its wait so
far, and interactive_unfinished says how many did), background_done (refreshes done within the
hour), max_retrievals_in_any_hour (sliding window), and the baseline's figures with the prefix fifo_.

    .venv/bin/python -m bench.budget
    BENCH_SCALE=600 .venv/bin/python -m bench.budget    # a portal hour in 6 s: a check that it runs
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import statistics
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import sqlalchemy as sa

from bench.common import bench_database, log
from orchestration.db.engine import create_app_engine
from orchestration.jobs.specs import JOB_TYPES
from orchestration.records.documents import DocumentStore
from orchestration.register.portal import PortalClient
from orchestration.register.ratelimit import SharedRateLimiter
from orchestration.runtime.worker import run_batch
from orchestration.settings import Settings
from orchestration.stages.discovery import DiscoveryStage
from orchestration.stages.parsing import XmlParsingStage
from sample_register.entities import insert_known_entities
from sample_register.retrievals import RetrievalLog
from sample_register.server import SampleRegisterThread, start_sample_register_in_thread

SCALE = int(os.environ.get("BENCH_SCALE", "60"))  # portal seconds per real second
PORTAL_HOUR_S = 3600 / SCALE
LIVE_PER_HOUR, LIVE_BURST = 60, 5
SEARCHES, OPENS, BACKGROUND = 5, 20, 200
DISCOVERY_WORKERS = 4


def portal_minutes(real_seconds: float) -> float:
    return real_seconds * SCALE / 60


# ----------------------------------------------------------------------------- the register


def start_register() -> tuple[SampleRegisterThread, RetrievalLog]:
    register = start_sample_register_in_thread()
    return register, register.retrieval_log


# ----------------------------------------------------------------------------- workers


def work(engine: sa.Engine, stage, worker_id: str, stop: threading.Event) -> None:
    while not stop.is_set():
        if run_batch(engine, stage, worker_id).claimed == 0:
            time.sleep(0.02)


# ----------------------------------------------------------------------------- the workload

SEARCH_DONE = sa.text("""
    SELECT extract(epoch FROM updated_at - created_at) FROM public.searches WHERE id = :id AND status = 'completed'
""")
# From the open (the first active discovery job of the entity) to the completed parse after it.
OPEN_DONE = sa.text("""
    SELECT extract(epoch FROM p.completed_at - :opened_at)
      FROM processing.processing_jobs p
     WHERE p.entity_id = :id AND p.type = 'xml_parsing' AND p.status = 'completed' AND p.created_at >= :opened_at
     ORDER BY p.completed_at LIMIT 1
""")
BACKGROUND_DONE = sa.text("""
    SELECT count(*) FROM processing.processing_jobs
     WHERE type = 'basic_discovery' AND entity_id = ANY(CAST(:ids AS uuid[])) AND status = 'completed'
       AND completed_at <= :until
""")


@dataclass
class Action:
    kind: str  # search, open, or opened_by_search
    subject: str  # search id or entity id
    at: float  # seconds into the hour
    started_at: object = None  # database time of the action
    latency_s: float | None = None


@dataclass
class Workload:
    background: list[str]
    opens: list[str]
    searches: list[tuple[str, str]]  # (query, mode)
    actions: list[Action] = field(default_factory=list)


def prepare(engine: sa.Engine, corpus) -> Workload:
    """Entities already known (discovered by earlier searches): 200 watched, 20 that people open."""
    companies = [c for c in corpus.companies if c.seed is not None and not c.deleted]
    names = Counter(c.name for c in companies)
    unique = [c for c in companies if names[c.name] == 1]
    with engine.begin() as conn:
        ids = insert_known_entities(conn, unique[: BACKGROUND + OPENS])
    # People search by keywords (a page of results) and, once, by an exact name with one result.
    keywords = [c.name.split()[0] for c in unique[BACKGROUND + OPENS :][: SEARCHES - 1]]
    exact = unique[BACKGROUND + OPENS + SEARCHES].name
    searches = [(word, "all") for word in keywords] + [(exact, "exact")]
    return Workload(background=ids[:BACKGROUND], opens=ids[BACKGROUND:], searches=searches)


def schedule(workload: Workload) -> list[Action]:
    """The people's actions spread over the hour: a search every 12 minutes, an open every 3."""
    actions = [Action("search", "", PORTAL_HOUR_S * (i + 0.5) / SEARCHES) for i in range(SEARCHES)]
    actions += [Action("open", entity, PORTAL_HOUR_S * (i + 0.25) / OPENS) for i, entity in enumerate(workload.opens)]
    return sorted(actions, key=lambda a: a.at)


def run_hour(url, register: RetrievalLog, base_url: str, *, people_first: bool) -> dict:
    engine = create_app_engine(url, pool_size=12)
    settings = Settings()
    workload = prepare(engine, register.state.register.corpus)
    data_dir = Path(tempfile.mkdtemp(prefix="hreg-bench-budget-"))
    store = DocumentStore(data_dir / "documents")
    bucket = f"bench budget {uuid.uuid4()}"
    per_hour = LIVE_BURST + (LIVE_PER_HOUR - LIVE_BURST) * SCALE  # the live refill, 60 times faster

    def client(priority: str) -> PortalClient:
        limiter = SharedRateLimiter(
            engine,
            bucket,
            per_hour,
            burst=LIVE_BURST,
            reserve=settings.rate_limit_reserve if people_first else 0,
            patience_refills=settings.rate_limit_background_patience,
            priority=priority if people_first else "interactive",
        )
        return PortalClient(base_url, diagnostics_dir=data_dir / "diagnostics", rate_limiter=limiter)

    discovery = DiscoveryStage(
        JOB_TYPES.basic_discovery, client, store, search_opens=("exact", 1), fresh_for=timedelta(hours=24)
    )
    parsing = XmlParsingStage(JOB_TYPES.xml_parsing, store)
    with engine.begin() as conn:
        for entity_id in workload.background:
            conn.execute(sa.text("SELECT automation.request_rediscovery(:e)"), {"e": entity_id})
        if not people_first:  # the baseline: one priority for all, first come first served
            conn.execute(sa.text("UPDATE processing.processing_jobs SET priority = 'interactive'"))

    stop = threading.Event()
    threads = [
        threading.Thread(target=work, args=(engine, discovery, f"discovery-{i}", stop), daemon=True)
        for i in range(DISCOVERY_WORKERS)
    ] + [threading.Thread(target=work, args=(engine, parsing, "parsing", stop), daemon=True)]
    retrievals_before = len(register.retrievals)
    started = time.monotonic()
    for thread in threads:
        thread.start()
    actions = schedule(workload)
    searches = iter(workload.searches)
    for action in actions:
        time.sleep(max(0.0, started + action.at - time.monotonic()))
        with engine.begin() as conn:
            action.started_at = conn.execute(sa.text("SELECT now()")).scalar_one()
            if action.kind == "search":
                query, mode = next(searches)
                action.subject = str(
                    conn.execute(
                        sa.text("INSERT INTO public.searches (user_id, query, mode) VALUES (:u, :q, :m) RETURNING id"),
                        {"u": str(uuid.uuid4()), "q": query, "m": mode},
                    ).scalar_one()
                )
                if mode == "exact":
                    workload.actions.append(Action("opened_by_search", action.subject, action.at, action.started_at))
            else:  # seed 000: the application moves the entity from discovered to basic_discovery_running
                conn.execute(
                    sa.text("UPDATE content.entities SET processing_status = 'basic_discovery_running' WHERE id = :e"),
                    {"e": action.subject},
                )
        workload.actions.append(action)
    time.sleep(max(0.0, started + PORTAL_HOUR_S - time.monotonic()))
    with engine.connect() as conn:
        hour_end = conn.execute(sa.text("SELECT now()")).scalar_one()
        background_done = conn.execute(BACKGROUND_DONE, {"ids": workload.background, "until": hour_end}).scalar_one()
    deadline = time.monotonic() + PORTAL_HOUR_S / 2
    while time.monotonic() < deadline and not measure(engine, workload):
        time.sleep(0.2)
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
    shutil.rmtree(data_dir, ignore_errors=True)

    # An action still unfinished counts with its wait so far: its figures are then lower bounds.
    with engine.connect() as conn:
        measured_at = conn.execute(sa.text("SELECT now()")).scalar_one()
    unfinished = sum(1 for a in workload.actions if a.latency_s is None)
    latencies = [
        portal_minutes(a.latency_s if a.latency_s is not None else (measured_at - a.started_at).total_seconds())
        for a in workload.actions
    ]
    events = [(t, kind) for t, kind in register.retrievals[retrievals_before:]]
    kinds = Counter(kind for _, kind in events)
    with engine.connect() as conn:
        entity_jobs = conn.execute(
            sa.text(
                "SELECT count(*) FROM processing.processing_jobs WHERE type = 'basic_discovery'"
                " AND entity_id IS NOT NULL AND status = 'completed' AND (result ->> 'si_downloaded')::int = 1"
            )
        ).scalar_one()
    engine.dispose()
    times = sorted(t for t, _ in events)
    window = PORTAL_HOUR_S
    return {
        "retrievals_per_search": round(kinds["result_page"] / SEARCHES, 2),
        "retrievals_per_open": round((kinds["entity_lookup"] + kinds["document"]) / max(1, entity_jobs), 2),
        "interactive_p50_min": round(statistics.median(latencies), 2),
        "interactive_p95_min": round(_percentile(latencies, 95), 2),
        "interactive_max_min": round(max(latencies), 2),
        "interactive_unfinished": unfinished,
        "background_done": background_done,
        "max_retrievals_in_any_hour": max(
            (sum(1 for u in times[i:] if u - t < window) for i, t in enumerate(times)), default=0
        ),
        "retrievals": sum(kinds.values()),
    }


def measure(engine: sa.Engine, workload: Workload) -> bool:
    """Fill in the latencies of finished actions; True when every action has finished."""
    with engine.connect() as conn:
        for action in workload.actions:
            if action.latency_s is not None:
                continue
            if action.kind == "search":
                action.latency_s = conn.execute(SEARCH_DONE, {"id": action.subject}).scalar()
            else:
                entity = action.subject
                if action.kind == "opened_by_search":
                    entity = conn.execute(
                        sa.text(
                            "SELECT entity_id FROM public.search_results WHERE search_id = :s ORDER BY position LIMIT 1"
                        ),
                        {"s": action.subject},
                    ).scalar()
                if entity:
                    action.latency_s = conn.execute(OPEN_DONE, {"id": entity, "opened_at": action.started_at}).scalar()
            if action.latency_s is not None:
                action.latency_s = float(action.latency_s)
    return all(a.latency_s is not None for a in workload.actions)


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    logging.getLogger("orchestration.register.ratelimit").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    register_thread, register = start_register()
    try:
        figures = {}
        for people_first in (True, False):
            url = bench_database("hreg_bench_budget")
            label = "people first" if people_first else "first come, first served"
            log(f"one portal hour ({PORTAL_HOUR_S:.0f} s), {label}")
            result = run_hour(url, register, register_thread.url, people_first=people_first)
            log(f"{label}: {json.dumps(result)}")
            figures.update(result if people_first else {f"fifo_{k}": v for k, v in result.items()})
    finally:
        register_thread.stop()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
