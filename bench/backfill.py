"""Parser-change backfill at register scale, through Dagster as a person runs it.

Set-up (not measured): ENTITIES entities whose SI documents are cloned from the samples with
varied register numbers, filed at all 173 register courts with sizes that fall off as a power
law (bench.common.register_court_shares: the largest court 5.6 %, the smallest 0.25 %), loaded
in chunks and parsed once by an older parser version. The sample above the inline limit (the
600 KB history of one large company) is left out: a few thousand copies of it would take most of
the parse time and hide the per-document cost of the backfill.

Measured, each a Dagster backfill of company_records over all 173 court partitions, launched
through the webserver's GraphQL API as the UI's "Launch backfill" button does, worked by the
runs the daemon launches (the backfill policy makes one run per run worker; the run queue runs
RUN_WORKERS backfill runs at once and keeps one slot more for people's runs), and timed from the
launch until the backfill has completed:

(a) a version bump whose output is unchanged: every document is re-parsed, nothing written;
(b) a parser change that renames every 10th company: only those get a new revision;
(c) another version bump with unchanged output, while people search (below).

Between the two the webserver and daemon are restarted with the changed parser (what a deploy
does). In the same run, the plain parser loop (parse_si over the same documents in one process,
timing the parse calls only) gives the throughput the backfill is compared with.

When the launch comes: Dagster's backfill daemon looks at backfills every 30 s (a fixed interval
in Dagster 1.13), so a backfill waits for the daemon's next look before its first run, and for
the look after its last run to be marked complete. A person's click falls anywhere in that
cycle; a launch right after a restart would always fall just after a look, the longest wait.
The benchmark launches at LAUNCH_PHASE of the cycle (by the backfill daemon's heartbeat, which
it writes as each look begins): 0.5 by default, the mean wait of a click at a random moment;
BENCH_LAUNCH_PHASE=0 measures the longest wait.

A smoke run, which judges no figure, can shorten what it waits for: BENCH_LAUNCH_PHASE=now
launches as soon as the webserver has loaded the code location, and (a) and (b) start the daemon
only after the launch, so that its first look takes the backfill up (fixed_cost_s and the
backfill's seconds then include the daemon's start); BENCH_COURTS=N files the corpus at, and
backfills, only the first N courts in code order, so that the runs take seconds and the last one
ends before the daemon's next look.

People during a backfill: with the sample register running, searches are made one after another
(each opens its first SEARCH_OPENS results), timed from the search row until the search is
completed and the companies it opened are parsed: IDLE_SEARCHES before backfill (c)
(interactive_no_backfill_p50_s), and as many as fit while it runs (interactive_during_backfill_p50_s,
_p95_s, interactive_during_backfill_searches). Every search is of a word no other search used,
whose first results no other search opened (bench.latency.fresh_queries): each waits for the same
work, a search, downloads and parses, never for companies parsed already. On a 2-core machine the
people's runs and the sample register take CPU from the backfill's runs while they search, so (c)
gives its own runs_ratio_with_people, and runs_ratio is of (a) and (b).

Last line: one JSON object with entities, wall_s ((a) and (b)), runs_launched (Dagster runs
of (a) and (b)), entities_per_s, parser_only_per_s, ratio, revisions_written_noop,
revisions_written_changed, expected_changed, peak_rss_mb (the largest of this process, the
webserver, the daemon and every run worker), run_workers, dagster_backfill_id (of the second),
partitions, backfill_status, launch_phase, and runs_ratio: the ratio over the time from the first
run's start to the last run's end, which leaves out the waits for the daemon's looks;
runs_ratio_with_people, the same of (c); fixed_cost_s (the largest of the three backfills' launch
to first run start plus last run end to completion) beside daemon_interval_s; and the
interactive_* figures above.

    .venv/bin/python -m bench.backfill                       # 100,000 entities, 2 run workers
    BENCH_ENTITIES=10000 BENCH_RUN_WORKERS=1 .venv/bin/python -m bench.backfill
    BENCH_ENTITIES=300 BENCH_COURTS=8 BENCH_IDLE_SEARCHES=1 BENCH_LAUNCH_PHASE=now .venv/bin/python -m bench.backfill
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import sqlalchemy as sa
import yaml

from bench.common import (
    bench_stack_environment,
    free_port,
    iter_cloned_documents,
    load_entities,
    log,
    peak_rss_mb,
)
from bench.latency import fresh_queries, p50_p95, search_to_parsed_s
from orchestration.assembly.dagster_internals import DEFAULT_DAEMON_INTERVAL_SECONDS
from orchestration.db.engine import create_app_engine
from orchestration.db.migrate import upgrade
from orchestration.jobs.specs import JOB_TYPES
from orchestration.records.courts import register_courts
from orchestration.records.documents import INLINE_LIMIT_BYTES, DocumentStore
from orchestration.runtime import queue
from orchestration.runtime.periodic import Periodic
from orchestration.runtime.worker import run_batches
from orchestration.settings import Settings
from orchestration.stacks import devstack
from orchestration.stages.parsing import XmlParsingStage
from orchestration.webserver.backfills import BACKFILL_STATUS, backfill_status, launch_backfill, webserver_graphql
from orchestration.xjustiz import PARSER_VERSION, parse_si

ENTITIES = int(os.environ.get("BENCH_ENTITIES", "100000"))
# The run queue keeps this many slots beyond the backfill's for people's runs, as in production.
PEOPLE_RUN_SLOTS = Settings.model_fields["people_run_slots"].default
# Backfill runs at once: two, one per core of the 2-core machines it is measured on. The product's
# default run queue allows them three (4 slots, 1 for people); on two cores that is slower (the
# first backfill's runs took 210 s with three, 166 s with two).
RUN_WORKERS = int(os.environ.get("BENCH_RUN_WORKERS", "2"))
# The phase of the backfill daemon's cycle to launch at (0 to 1), or None: at once (BENCH_LAUNCH_PHASE=now).
LAUNCH_PHASE = (
    None if os.environ.get("BENCH_LAUNCH_PHASE") == "now" else float(os.environ.get("BENCH_LAUNCH_PHASE", "0.5"))
)
# The court partitions backfilled, and the corpus is filed at: all, or the first BENCH_COURTS.
COURTS = list(register_courts())[: int(os.environ.get("BENCH_COURTS", len(register_courts())))]
SET_UP_WORKERS = 2
CHANGED_EVERY = 10
OLD_VERSION = f"{PARSER_VERSION}-bench-old"
CHANGED_VERSION = f"{PARSER_VERSION}-bench-changed"
PEOPLE_VERSION = f"{PARSER_VERSION}-bench-people"
# The deploys of the renaming parser (BENCH_PARSER) and their versions (bench.backfill_location).
RENAMING_VERSIONS = {"renaming": CHANGED_VERSION, "people": PEOPLE_VERSION}
LOCATION_MODULE = "bench.backfill_location"
IDLE_SEARCHES = int(os.environ.get("BENCH_IDLE_SEARCHES", "5"))
SEARCH_OPENS = 3
# More than fit into a backfill: a search takes seconds.
SEARCHES = 300


def renaming_parse_si(data: bytes, *, version: str = CHANGED_VERSION, **options):
    """The changed parser: it names every 10th company (by register number) differently."""
    record = parse_si(data, **options)
    if int(record.register.number) % CHANGED_EVERY == 0:
        record = record.model_copy(update={"name": f"{record.name} (neu)"})
    return record.model_copy(update={"parser_version": version})


def set_up_run(url: str, documents_dir: str, worker_id: str) -> int:
    """The first parse, in its own process: batches of due xml_parsing jobs until none is due."""
    engine = create_app_engine(url)
    try:
        store = DocumentStore(Path(documents_dir))
        return run_batches(
            engine, XmlParsingStage(JOB_TYPES.xml_parsing, store), worker_id, max_batches=10_000
        ).completed
    finally:
        engine.dispose()


class TreeMemory(Periodic):
    """Peak resident memory of this process and all its descendants (webserver, daemon, run
    workers), sampled from /proc while they live: run workers are the daemon's children, whose
    peaks would not reach this process's rusage. Each process's own high-water mark is read, so a
    sample now and then finds its peak; walking /proc more often takes CPU from the runs measured."""

    def __init__(self, interval_s: float = 2.0) -> None:
        super().__init__(interval_s)
        self.peaks: dict[int, tuple[str, int]] = {}

    def tick(self) -> None:
        for pid in self._descendants(os.getpid()):
            try:
                status = Path(f"/proc/{pid}/status").read_text()
                name = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:80]
            except OSError:  # the process ended meanwhile
                continue
            peak_kb = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")), 0)
            if peak_kb > self.peaks.get(pid, ("", 0))[1]:
                self.peaks[pid] = (name, peak_kb)

    @staticmethod
    def _descendants(root: int) -> list[int]:
        children: dict[int, list[int]] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    # The parent pid is the field after the parenthesised command name.
                    ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                children.setdefault(ppid, []).append(int(entry.name))
        found, pending = [], [root]
        while pending:
            pid = pending.pop()
            found.append(pid)
            pending.extend(children.get(pid, []))
        return found

    def peak_mb(self) -> tuple[float, str]:
        if not self.peaks:
            return 0.0, ""
        name, peak_kb = max(self.peaks.values(), key=lambda item: item[1])
        return round(peak_kb / 1024, 1), name


class Bench:
    def __init__(self, url: sa.URL, data_dir: Path) -> None:
        self.url = url
        self.url_text = url.render_as_string(hide_password=False)
        self.data_dir = data_dir
        self.engine = create_app_engine(url)
        self.queries = iter(fresh_queries(SEARCHES, SEARCH_OPENS))
        self.searches = 0
        self.workspace = data_dir / "workspace.yaml"
        self.workspace.write_text(
            yaml.safe_dump(
                {
                    "load_from": [
                        {
                            "python_module": {
                                "module_name": LOCATION_MODULE,
                                "location_name": "handelsregister",
                                "working_directory": str(devstack.PROJECT_ROOT),
                            }
                        }
                    ]
                }
            )
        )

    def revisions(self) -> int:
        with self.engine.connect() as conn:
            return conn.execute(sa.text("SELECT count(*) FROM content.entity_revisions")).scalar_one()

    def set_up(self, settings: Settings) -> None:
        started = time.perf_counter()
        with self.engine.begin() as conn:  # the documents are parsed by an older parser version
            conn.execute(
                sa.text("UPDATE processing.job_types SET current_version = :v WHERE type = 'xml_parsing'"),
                {"v": OLD_VERSION},
            )
        store = DocumentStore(settings.documents_dir)
        loaded = load_entities(
            self.engine,
            store,
            iter_cloned_documents(ENTITIES, max_bytes=INLINE_LIMIT_BYTES, spread_over_courts=True, among_courts=COURTS),
        )
        log(f"loaded {len(loaded)} entities with SI documents in {time.perf_counter() - started:.0f}s")
        started = time.perf_counter()
        with ProcessPoolExecutor(SET_UP_WORKERS, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [
                pool.submit(set_up_run, self.url_text, str(settings.documents_dir), f"set-up-{k}")
                for k in range(SET_UP_WORKERS)
            ]
            completed = sum(future.result() for future in futures)
        if completed != ENTITIES:
            raise RuntimeError(f"the first parse completed {completed} of {ENTITIES} jobs")
        # A database that has had time for autovacuum: the measured runs start from clean tables.
        with self.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(sa.text("VACUUM ANALYZE"))
        with self.engine.connect() as conn:
            by_court = conn.execute(
                sa.text("SELECT left(court_code, 5), count(*) FROM content.entities GROUP BY 1 ORDER BY 2 DESC")
            ).all()
        log(
            f"parsed them once in {time.perf_counter() - started:.0f}s; entities per court: "
            + ", ".join(f"{court} {n}" for court, n in by_court)
        )

    def parser_only_per_s(self) -> float:
        """The plain parser loop: parse_si over every stored document, timing only the parse calls."""
        documents, seconds = 0, 0.0
        with self.engine.connect() as conn:
            rows = conn.execution_options(yield_per=500).execute(
                sa.text("""
                SELECT d.content FROM content.entities e JOIN content.raw_documents d ON d.id = e.current_si_document_id
            """)
            )
            for row in rows:
                content = bytes(row.content)
                started = time.perf_counter()
                parse_si(content)
                seconds += time.perf_counter() - started
                documents += 1
        if documents != ENTITIES:
            raise RuntimeError(f"the parser loop read {documents} documents, expected {ENTITIES}")
        return documents / seconds

    def search(self) -> float:
        self.searches += 1
        query = next(self.queries)
        seconds = search_to_parsed_s(self.engine, query, SEARCH_OPENS)
        log(f"search {self.searches} ({query!r}): parsed after {seconds:.1f}s")
        return seconds

    def backfill(self, parser: str, parser_version: str, settings: Settings, *, people: bool = False) -> dict:
        """Deploy ``parser``, launch the backfill of every court as the UI does, wait for its end;
        with ``people``, time searches before it and while it runs."""
        os.environ["BENCH_PARSER"] = parser
        stack = devstack.prepare(settings)
        # The deployed parser's version into processing.job_types, as the deployed code's `hreg db
        # upgrade` writes it: the sensors work only when the database names the code's versions.
        upgrade(self.engine, settings, JOB_TYPES.deploying(JOB_TYPES.xml_parsing, parser_version))
        log_dir = self.data_dir / f"logs-{parser}"
        revisions_before = self.revisions()
        idle, during = [], []
        try:
            devstack.start_sample_register(stack, log_dir)
            # People search with the daemon running; launched at once, the backfill alone is
            # taken up by the first look of a daemon started after the launch.
            daemon_first = people or LAUNCH_PHASE is not None
            devstack.start_dagster(stack, daemon=daemon_first, log_dir=log_dir, workspace=self.workspace)
            url = stack.webserver_url
            wait_for_location(url)
            if people:
                idle = [self.search() for _ in range(IDLE_SEARCHES)]
            if LAUNCH_PHASE is not None:
                wait_for_launch_moment(url, LAUNCH_PHASE)
            started = time.perf_counter()
            backfill_id = launch_backfill(
                url, ["company_records"], COURTS, title=f"bench: re-parse with parser {parser_version}"
            )
            if not daemon_first:
                devstack.start_dagster(stack, webserver=False, log_dir=log_dir, workspace=self.workspace)
            while not (status := backfill_status(url, backfill_id)).finished:
                if people:
                    during.append(self.search())
                else:
                    time.sleep(0.5)
            seconds = time.perf_counter() - started
            log_run_spans(url, backfill_id)
        finally:
            devstack.stop(stack)
        written = self.revisions() - revisions_before
        with self.engine.connect() as conn:
            done = conn.execute(
                sa.text("""
                SELECT count(*) FILTER (WHERE status = 'completed'), count(*) FILTER (WHERE status <> 'completed')
                  FROM processing.processing_jobs WHERE type = 'xml_parsing' AND parser_version = :v
                   AND trigger = 'parser_change'"""),
                {"v": parser_version},
            ).one()
            due = queue.count_due(conn, "xml_parsing")
        log(
            f"parser {parser_version}: backfill {backfill_id} {status.status} in {seconds:.1f}s "
            f"(Dagster: {status.ended_at - status.started_at:.1f}s from launch to completion: first run "
            f"{status.first_run_started_at - status.started_at:.1f}s after the launch, runs for "
            f"{status.last_run_ended_at - status.first_run_started_at:.1f}s, marked complete "
            f"{status.ended_at - status.last_run_ended_at:.1f}s after the last run), {status.runs} runs, "
            f"{status.partitions} partitions; {done[0]} re-parses completed, {done[1]} not; {written} revisions "
            f"written; {due} xml_parsing jobs left due"
        )
        # The corpus is re-parsed whole.
        if done[0] < ENTITIES or done[1] or status.status != "COMPLETED_SUCCESS":
            raise RuntimeError(
                f"expected at least {ENTITIES} completed re-parses and a successful backfill, "
                f"got {done[0]} completed, {done[1]} not, backfill {status.status}"
            )
        return {
            "reparsed": done[0],
            "seconds": seconds,
            "runs_seconds": status.last_run_ended_at - status.first_run_started_at,
            "fixed_seconds": (status.first_run_started_at - status.started_at)
            + (status.ended_at - status.last_run_ended_at),
            "idle": idle,
            "during": during,
            "written": written,
            "runs": status.runs,
            "id": backfill_id,
            "partitions": status.partitions,
            "status": status.status,
        }


def log_run_spans(webserver_url: str, backfill_id: str) -> None:
    """When each run of the backfill ran, from its first run's start: how evenly the runs shared the work."""
    backfill = webserver_graphql(webserver_url, BACKFILL_STATUS, {"backfillId": backfill_id})[
        "partitionBackfillOrError"
    ]
    spans = sorted(
        (run["startTime"], run["endTime"]) for run in backfill["runs"] if run["startTime"] and run["endTime"]
    )
    if spans:
        first = spans[0][0]
        log("runs: " + ", ".join(f"{start - first:.0f}-{end - first:.0f}s" for start, end in spans))


def wait_for_location(webserver_url: str) -> None:
    """Until the webserver has loaded the code location (it answers before)."""
    query = "query { workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } } }"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        entries = webserver_graphql(webserver_url, query)
        if any(e["loadStatus"] == "LOADED" for e in entries["workspaceOrError"]["locationEntries"]):
            return
        time.sleep(1)
    raise TimeoutError("the code location did not load within 180 s")


DAEMON_STATUSES = "query { instance { daemonHealth { allDaemonStatuses { daemonType lastHeartbeatTime } } } }"


def wait_for_launch_moment(webserver_url: str, phase: float) -> None:
    """Until ``phase`` (0 to 1) of the backfill daemon's 30-s cycle: its heartbeat is written as a
    look at the backfills begins, and the looks follow each other at the fixed interval."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        statuses = webserver_graphql(webserver_url, DAEMON_STATUSES)
        heartbeat = next(
            (
                s["lastHeartbeatTime"]
                for s in statuses["instance"]["daemonHealth"]["allDaemonStatuses"]
                if s["daemonType"] == "BACKFILL"
            ),
            None,
        )
        if heartbeat:
            break
        time.sleep(0.5)
    else:
        raise TimeoutError("the backfill daemon wrote no heartbeat within 180 s")
    looks_since = math.floor((time.time() - heartbeat) / DEFAULT_DAEMON_INTERVAL_SECONDS)
    launch_at = heartbeat + (looks_since + phase) * DEFAULT_DAEMON_INTERVAL_SECONDS
    if launch_at < time.time() + 1:
        launch_at += DEFAULT_DAEMON_INTERVAL_SECONDS
    time.sleep(launch_at - time.time())


def main() -> None:
    url, data_dir, settings = bench_stack_environment(
        "hreg_bench_backfill",
        {
            "HREG_WEBSERVER_PORT": str(free_port()),
            "HREG_MAX_CONCURRENT_RUNS": str(RUN_WORKERS + PEOPLE_RUN_SLOTS),
            "HREG_PEOPLE_RUN_SLOTS": str(PEOPLE_RUN_SLOTS),
            "HREG_REGISTER": "sample",
            "HREG_SEARCH_OPENS": f"first:{SEARCH_OPENS}",
        },
    )
    bench = Bench(url, data_dir)
    bench.set_up(settings)
    parser_only_per_s = bench.parser_only_per_s()
    log(f"parser alone: {parser_only_per_s:.0f} documents/s in one process")

    with TreeMemory() as memory:
        noop = bench.backfill("current", PARSER_VERSION, settings)
        changed = bench.backfill("renaming", CHANGED_VERSION, settings)
        people = bench.backfill("people", PEOPLE_VERSION, settings, people=True)
    wall_s = noop["seconds"] + changed["seconds"]
    reparsed = noop["reparsed"] + changed["reparsed"]
    entities_per_s = reparsed / wall_s
    tree_peak_mb, tree_peak_process = memory.peak_mb()
    log(
        f"the backfills with {RUN_WORKERS} run workers at once: {entities_per_s:.0f}/s, "
        f"{entities_per_s / (RUN_WORKERS * parser_only_per_s):.3f} of the parser per run worker; "
        f"largest process {tree_peak_mb} MB ({tree_peak_process})"
    )
    bench.engine.dispose()
    idle_p50, _ = p50_p95(people["idle"])
    during_p50, during_p95 = p50_p95(people["during"]) if people["during"] else (None, None)
    print(
        json.dumps(
            {
                "entities": ENTITIES,
                "wall_s": round(wall_s, 1),
                "runs_launched": noop["runs"] + changed["runs"],
                "entities_per_s": round(entities_per_s, 1),
                "parser_only_per_s": round(parser_only_per_s, 1),
                "ratio": round(entities_per_s / parser_only_per_s, 3),
                "runs_ratio": round(reparsed / (noop["runs_seconds"] + changed["runs_seconds"]) / parser_only_per_s, 3),
                "runs_ratio_with_people": round(people["reparsed"] / people["runs_seconds"] / parser_only_per_s, 3),
                "revisions_written_noop": noop["written"],
                "revisions_written_changed": changed["written"],
                "expected_changed": len(range(0, ENTITIES, CHANGED_EVERY)),
                "peak_rss_mb": max(tree_peak_mb, peak_rss_mb()),
                "run_workers": RUN_WORKERS,
                "dagster_backfill_id": changed["id"],
                "partitions": changed["partitions"],
                "backfill_status": changed["status"],
                "launch_phase": "now" if LAUNCH_PHASE is None else LAUNCH_PHASE,
                "fixed_cost_s": round(max(run["fixed_seconds"] for run in (noop, changed, people)), 1),
                "daemon_interval_s": DEFAULT_DAEMON_INTERVAL_SECONDS,
                "interactive_no_backfill_p50_s": round(idle_p50, 2),
                "interactive_during_backfill_p50_s": during_p50 and round(during_p50, 2),
                "interactive_during_backfill_p95_s": during_p95 and round(during_p95, 2),
                "interactive_during_backfill_searches": len(people["during"]),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
