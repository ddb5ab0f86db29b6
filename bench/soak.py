"""A year in an afternoon: the stack through simulated days, with the storage it keeps.

The stack is `hreg dev`'s (embedded PostgreSQL, the Dagster daemon and webserver, the sample
register), its code location bench.soak_location. Each simulated day:

- one person searches (one word that finds 1 to 20 companies; the search opens its first
  result, HREG_SEARCH_OPENS=first:1), one opens a company an earlier search found, and one
  requests the shareholders of a parsed company whose current list has a text layer
  (SEARCHES, OPENS, SHAREHOLDER_REQUESTS = 1, 1, 1): about five retrievals from the register,
  two companies parsed, one list downloaded and read, four to six runs;
- the announcements poll runs (register_announcements_job, launched as its daily schedule does);
- every seventh day a parser change is deployed (a new parser version: `hreg db upgrade`'s job
  type sync, then the code location reloaded, bench.soak_location) and the backfill of every
  court launched through the webserver, as the UI's button does;
- the day ends once its work is done (every job finished, its runs and backfill too), and then
  the retentions run and the day's figures are read.

The day is kept light so that 150 of them fit in an afternoon on 2 shared cores (on a quiet
machine a plain day takes 5 to 10 s and a backfill day under a minute; twice that while other
work loads the cores): one of each person's request, not many; a
shareholder list with a text layer, as a scan's OCR takes half a minute of CPU (bench.shareholders
measures that); the job sensors tick at every look of the daemon (bench.soak_location), and the
day looks whether its work is done every WORK_POLL_S. What a day holds is the same kinds of work
as a busy one, so what grows with days grows here too; only less of it a day.

The clocks. The portal's budget runs SCALE times faster (as tests/test_cluster_pgbouncer.py runs
it): the live burst of 5 and the live 55 tokens an hour, refilled SCALE times faster, so one
portal hour is 3600/SCALE real seconds, and the sample register's log of every retrieval gives
the most retrievals in any such window. A simulated day lasts as long as its work. The cutoffs
of the retentions follow the simulated days: at the end of day d, Dagster's retention
(orchestration.assembly.dagster_retention.delete_old_runs, what dagster_retention_sensor runs) is
run with the moment simulated day d + 1 - HREG_DAGSTER_RETENTION_DAYS began as its cutoff,
Dagster's tick retention (the purge its daemon does after each tick, with the `retention:`
settings we write) with each tick status's days counted the same way, the asset daemon's purge
of its evaluations (EVALUATIONS_TTL_DAYS), and our job archive (what job_archive_sensor runs)
with the day d + 1 - HREG_JOB_ARCHIVE_AFTER_DAYS. The sensors and the daemon's own purges run
too, by the real clock, so within the soak they find nothing that old. The nightly packing of
Dagster's tables (dagster_storage_maintenance_schedule) runs at the end of every day, with
HREG_DAGSTER_REWRITE_MAX_MB: of every table at the end of days 1, 8, 15 and so on, the days after
the backfills', of the tables with space to give back on the others.
`--retention-days 7` lets retention act from day 8; the default is the product's 30 days.

Autovacuum. PostgreSQL's autovacuum looks at the tables once every autovacuum_naptime (a
minute): 1440 times in a real day, about once in a simulated one. Without more, the rows the
retentions delete would stay dead for many simulated days, and the tables would grow by space
that a real day's vacuums make reusable. So at the end of each day, after the retentions, the
soak does what autovacuum would have done by then: in both databases it vacuums every table,
system catalogs and TOAST tables included, with more dead or newly inserted rows than
autovacuum's thresholds for its size (autovacuum_vacuum_threshold +
autovacuum_vacuum_scale_factor x its rows, and the same for inserts; a table's own settings
first), and analyzes those with
more changed rows than the analyze threshold. (An ANALYZE of every table every day, as an
earlier version of the soak ran, rewrote the statistics each time and made pg_statistic one of
the tables that grew.)

Memory. Per day, at the same point (after the retentions and the figures of the databases), the
resident memory of the daemon, the webserver, and the code server each of them serves from: the
newest `dagster api grpc` process each started, once it is CODE_SERVER_SETTLE_S old (a younger one
may not have loaded the code yet). The daemon starts a new code server every minute (its
workspace refresh) and the webserver one on each reload of a parser-change day; the replaced one
lives on until its heartbeat times out, so summing the processes counted two servers during a
swap. The runs a code server starts as its children are not its memory and are not counted.
rss_growth_ratio compares like with like: for each of the four, the RSS at the end of the last
day without a backfill over that at the end of the first day (which has none), and takes the
largest; rss_growth_by_process gives each.

Per day one line: the databases' sizes, the rows of their largest tables, the four RSS figures,
the PostgreSQL connections (the most seen while the day ran) and how long the day took; before
it, a line for each job that failed that day, with the error of its last attempt.

Last line: one JSON object with days, dagster_db_bytes_first_retention_day (the Dagster
database's size at the end of the first day retention deleted runs), dagster_db_bytes_last_day,
dagster_db_growth_since_first_retention_day (the last over the first, less one),
dagster_db_growth_same_weekday (the same for the last day a whole number of weeks after the
first retention day, same_weekday: the size moves in a weekly saw of backfills and index
packings, which only days at the same point of the week compare across),
dagster_db_growth_largest (the largest day since the first retention day, largest_day),
dagster_db_growth_largest_by_weekday (the largest growth of a day over the day of retention's
first week at the same point of the backfills' week, largest_by_weekday_day),
dagster_table_growth_bytes (what each of its tables grew by between those two days, indexes and
TOAST included), app_db_bytes_last_day, rss_growth_ratio, rss_growth_by_process and rss_days_compared (see
Memory), max_connections, jobs_lost (jobs not finished once the last day's work had time to
end, and searches, opens and requests that did not end, completed or failed), failed_by_class
(failed jobs by failure class, the archive's too), max_retrievals_in_any_hour, runs_deleted,
day_seconds_median, backfills and per_day (the daily figures, with the Dagster database's size in
its parts, PostgreSQL's catalogs, Dagster's tables, their indexes and their TOAST, and each table's,
the day's runs by job, the runs older than the cutoff that retention kept, by why and by job, with
their events by kind, every run's events by kind, and the tables the night's packing rewrote).

    .venv/bin/python -m bench.soak                      # 150 days: the 30-day retention acting for 17 weeks, 30 to 60 minutes
    .venv/bin/python -m bench.soak --retention-days 7 --days 60   # 10 to 30 minutes
    .venv/bin/python -m bench.soak --days 1             # the smoke run: under a minute
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import httpx
import sqlalchemy as sa
import yaml

from bench.common import bench_stack_environment, free_port, log
from orchestration.assembly.dagster_instance import DAGSTER_PACK_SQL
from orchestration.assembly.dagster_internals import EVALUATIONS_TTL_DAYS
from orchestration.assembly.dagster_retention import delete_old_runs
from orchestration.db.engine import create_app_engine
from orchestration.db.migrate import upgrade
from orchestration.db.table_packing import pack_tables
from orchestration.jobs.specs import JOB_TYPES
from orchestration.records import companies
from orchestration.records.courts import register_courts
from orchestration.register.results import SearchMode
from orchestration.runtime import queue
from orchestration.settings import Settings
from orchestration.stacks import devstack
from orchestration.webserver.backfills import backfill_status, launch_backfill, webserver_graphql
from orchestration.xjustiz import PARSER_VERSION
from resources.dagster_retention import DagsterRetentionResource
from sample_register.corpus import Corpus, load_corpus
from sample_register.documents import current_list_form

SCALE = 60  # portal seconds per real second, as bench.budget
LIVE_PER_HOUR, LIVE_BURST = 60, 5
SEARCHES, OPENS, SHAREHOLDER_REQUESTS = 1, 1, 1
SEARCH_OPENS = 1
# Companies a day's shareholder request is drawn from, of which it takes one whose list has a text layer.
REQUEST_CANDIDATES = 50
BACKFILL_EVERY_DAYS = 7
# 30 days before the product's retention acts, then 17 weeks of it: the last day falls at the
# same point of the backfills' week as the first retention day.
DAYS = 150
DAY_TIMEOUT_S = 1200
WORK_POLL_S = 0.5  # how often the day looks whether its work is done
# A code server younger than this may still be loading the code: its memory is read once it is this old.
CODE_SERVER_SETTLE_S = 15
LOCATION = "handelsregister"
LOCATION_MODULE = "bench.soak_location"
# Tables whose rows the daily line shows, besides the largest of each database.
LARGEST_TABLES = 3

LAUNCH_RUN = """
mutation Launch($executionParams: ExecutionParams!) {
  launchRun(executionParams: $executionParams) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
  }
}
"""
RUN_STATUS = "query Run($runId: ID!) { runOrError(runId: $runId) { ... on Run { status } } }"
RELOAD = """
mutation Reload($name: String!) {
  reloadRepositoryLocation(repositoryLocationName: $name) { __typename }
}
"""
FINISHED_RUN_STATUSES = {"SUCCESS", "FAILURE", "CANCELED"}
IN_FLIGHT_RUNS = dg.RunsFilter(
    statuses=[
        dg.DagsterRunStatus.QUEUED,
        dg.DagsterRunStatus.NOT_STARTED,
        dg.DagsterRunStatus.STARTING,
        dg.DagsterRunStatus.STARTED,
        dg.DagsterRunStatus.CANCELING,
    ]
)

UNFINISHED_JOBS = sa.text("SELECT count(*) FROM processing.processing_jobs WHERE status IN ('queued', 'running')")
# A person's request that has not ended: a search not completed or failed, an open whose company
# is still on its way, a shareholder request neither completed nor failed.
UNENDED_SEARCHES = sa.text(
    "SELECT count(*) FROM public.searches WHERE id = ANY(CAST(:ids AS uuid[])) AND status NOT IN ('completed', 'failed')"
)
UNENDED_ENTITIES = sa.text("""
    SELECT count(*) FILTER (WHERE processing_status IN ('discovered', 'basic_discovery_running', 'xml_ready', 'xml_parsing')
                              AND id = ANY(CAST(:opened AS uuid[])))
         + count(*) FILTER (WHERE shareholder_research_status IN ('requested', 'downloading', 'parsing')
                              AND id = ANY(CAST(:requested AS uuid[])))
      FROM content.entities
""")
TO_OPEN = sa.text("""
    SELECT id::text FROM content.entities WHERE processing_status = 'discovered' ORDER BY random() LIMIT :n
""")
TO_REQUEST = sa.text("""
    SELECT id::text, court_code, register_type, register_number FROM content.entities
     WHERE processing_status = 'parsed' AND shareholder_research_status = 'none' ORDER BY random() LIMIT :n
""")
FAILED_BY_CLASS = sa.text("""
    SELECT coalesce(failure_class, 'unclassified'), count(*) FROM (
        SELECT failure_class FROM processing.processing_jobs WHERE status = 'failed'
        UNION ALL SELECT failure_class FROM processing.job_archive WHERE status = 'failed') f
     GROUP BY 1 ORDER BY 1
""")
LARGEST = sa.text("""
    SELECT relname AS name, n_live_tup AS rows FROM pg_stat_user_tables
     ORDER BY pg_total_relation_size(relid) DESC LIMIT :n
""")
# Each table of the Dagster database by its size with indexes and TOAST, the largest first.
TABLE_BYTES = sa.text("""
    SELECT relname AS name, pg_total_relation_size(relid) AS bytes FROM pg_stat_user_tables
     ORDER BY bytes DESC, name
""")
# What autovacuum would do now, table by table, the system catalogs' and TOAST tables' too: vacuum
# the tables with more dead or newly inserted rows than its thresholds for their size, and analyze
# those (not TOAST tables) with more changed rows than its analyze threshold. A table's own
# settings (its reloptions, a TOAST table's holding the toast.* ones) come before the server's.
AUTOVACUUM_DUE = sa.text("""
    WITH setting AS (
        SELECT c.oid, c.relkind, c.reltuples, o.name,
               coalesce((SELECT split_part(option, '=', 2) FROM unnest(c.reloptions) option
                          WHERE split_part(option, '=', 1) = o.name), current_setting(o.name))::float8 AS value
          FROM pg_class c
         CROSS JOIN unnest(ARRAY['autovacuum_vacuum_threshold', 'autovacuum_vacuum_scale_factor',
                                 'autovacuum_vacuum_insert_threshold', 'autovacuum_vacuum_insert_scale_factor',
                                 'autovacuum_analyze_threshold', 'autovacuum_analyze_scale_factor']) o(name)
    ), table_settings AS (
        SELECT oid, relkind, greatest(reltuples, 0) AS tuples, jsonb_object_agg(name, value) AS s
          FROM setting GROUP BY oid, relkind, reltuples
    )
    SELECT format('%I.%I', st.schemaname, st.relname) AS name,
           st.n_dead_tup > (s->>'autovacuum_vacuum_threshold')::float8
                         + (s->>'autovacuum_vacuum_scale_factor')::float8 * tuples
        OR st.n_ins_since_vacuum > (s->>'autovacuum_vacuum_insert_threshold')::float8
                         + (s->>'autovacuum_vacuum_insert_scale_factor')::float8 * tuples
           AS vacuum,
           relkind <> 't'
       AND st.n_mod_since_analyze > (s->>'autovacuum_analyze_threshold')::float8
                         + (s->>'autovacuum_analyze_scale_factor')::float8 * tuples
           AS analyze
      FROM pg_stat_all_tables st JOIN table_settings t ON t.oid = st.relid
""")
# The jobs that failed since a moment, with the error of their last attempt, so that a failure
# counted in failed_by_class can be looked into after the soak's databases are gone.
FAILED_SINCE = sa.text("""
    SELECT j.type, j.failure_class, j.retry_count, h.error_message
      FROM processing.processing_jobs j
      LEFT JOIN LATERAL (SELECT error_message FROM processing.job_step_history
                          WHERE job_id = j.id ORDER BY id DESC LIMIT 1) h ON true
     WHERE j.status = 'failed' AND j.updated_at >= :since
     ORDER BY j.updated_at
""")
# The Dagster database's size in its parts, every fork of every relation counted: PostgreSQL's own
# catalogs (with their indexes and TOAST), then Dagster's tables, their indexes and their TOAST.
DB_PARTS = sa.text("""
    SELECT CASE WHEN c.oid < 16384 THEN 'catalogs'
                WHEN c.relkind = 'i' THEN 'indexes'
                WHEN c.relkind = 't' THEN 'toast'
                ELSE 'tables' END AS part,
           sum(pg_relation_size(c.oid, fork.name))::bigint AS bytes
      FROM pg_class c CROSS JOIN unnest(ARRAY['main', 'fsm', 'vm', 'init']) fork(name)
     WHERE c.relkind IN ('r', 'i', 't', 'm')
     GROUP BY 1 ORDER BY 1
""")
# The events of the runs :runs (of every run, when NULL) by kind (a Dagster event's type, or a log
# message): events and bytes of JSON.
EVENTS_BY_KIND = sa.text("""
    SELECT coalesce(dagster_event_type, 'LOG') AS kind, count(*) AS events, sum(length(event))::bigint AS bytes
      FROM event_logs WHERE CAST(:runs AS text[]) IS NULL OR run_id = ANY(CAST(:runs AS text[]))
     GROUP BY 1 ORDER BY bytes DESC, kind
""")
CONNECTIONS = sa.text("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'")


def search_words(corpus: Corpus, seed: int = 2026) -> list[str]:
    """One-word searches of the sample register that each find between one and twenty companies."""
    words = sorted({w for c in corpus.companies for w in c.words if w.isalpha() and len(w) >= 4})
    random.Random(seed).shuffle(words)
    return [w for w in words[:2000] if 1 <= len(corpus.search(w, SearchMode.ALL)) <= 20]


def most_in_any_window(times: list[float], window_s: float) -> int:
    """The most retrievals within any ``window_s`` seconds, each window starting at a retrieval."""
    most, first = 0, 0
    for last, moment in enumerate(times):
        while moment - times[first] >= window_s:
            first += 1
        most = max(most, last - first + 1)
    return most


def rss_bytes(pid: int) -> int:
    """Resident memory of ``pid``; 0 once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    return next((int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmRSS:")), 0)


def stat_fields(pid: int) -> list[str]:
    """The fields of /proc/``pid``/stat after the command name (state is the first); [] once it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        fields = stat_fields(int(stat.parent.name))
        if fields and int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def age_s(pid: int) -> float:
    """Seconds since ``pid`` started (its start time in clock ticks after boot)."""
    fields = stat_fields(pid)
    if not fields:
        return 0.0
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK")


def code_server_pids(parent: int) -> list[int]:
    """The code servers ``parent`` (daemon or webserver) started: `dagster api grpc` processes."""
    pids = []
    for pid in children(parent):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"grpc" in cmdline:
            pids.append(pid)
    return pids


def serving_code_server(parent: int) -> int | None:
    """The code server ``parent`` serves the workspace from: the newest it started, once that is
    CODE_SERVER_SETTLE_S old. An older one may still be there: the daemon starts a new code server
    every minute (its workspace refresh) and the webserver one on each reload, and the one replaced
    lives on until its heartbeat times out; it is not the one serving."""
    pids = code_server_pids(parent)
    if not pids:
        return None
    newest = min(pids, key=age_s)
    time.sleep(max(0.0, CODE_SERVER_SETTLE_S - age_s(newest)))
    return newest


@dataclass
class Kept:
    """The runs older than retention's cutoff that it kept: how many, by why (as its pass said) and
    by job, and their events by kind ([events, bytes of JSON])."""

    runs: int = 0
    by_reason: Counter[str] = field(default_factory=Counter)
    by_job: Counter[str] = field(default_factory=Counter)
    events: dict[str, list[int]] = field(default_factory=dict)


@dataclass
class Day:
    day: int
    seconds: float
    dagster_db_bytes: int
    app_db_bytes: int
    largest: dict[str, int]
    dagster_table_bytes: dict[str, int]
    dagster_db_parts: dict[str, int]
    rss_mb: dict[str, float]
    connections: int
    runs_deleted: int
    # The day's runs by job, and the runs older than retention's cutoff that it kept.
    runs_by_job: dict[str, int]
    kept: Kept
    events: dict[str, list[int]]  # every run's, by kind: [events, bytes of JSON]
    jobs_archived: int
    backfill: bool
    tables_rewritten: list[str]

    def line(self) -> str:
        tables = ", ".join(f"{name} {rows}" for name, rows in self.largest.items())
        rss = ", ".join(f"{name} {mb:.0f}" for name, mb in self.rss_mb.items())
        return (
            f"day {self.day}: {self.seconds:.0f}s{' (backfill)' if self.backfill else ''}; dagster db "
            f"{self.dagster_db_bytes / 2**20:.1f} MB, app db {self.app_db_bytes / 2**20:.1f} MB; rows: {tables}; "
            f"RSS MB: {rss}; connections {self.connections}; runs {sum(self.runs_by_job.values())}, "
            f"deleted {self.runs_deleted}, kept past the cutoff {self.kept.runs}; "
            f"jobs archived {self.jobs_archived}"
        )


@dataclass
class Soak:
    stack: devstack.Stack
    settings: Settings
    parser_file: Path
    engine: sa.Engine = field(init=False)
    dagster_engine: sa.Engine = field(init=False)
    instance: dg.DagsterInstance = field(init=False)
    corpus: Corpus = field(default_factory=load_corpus)
    words: list[str] = field(init=False)
    day_started_at: list[datetime] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)
    opened: list[str] = field(default_factory=list)
    requested: list[str] = field(default_factory=list)
    retention_cursor: str | None = None
    max_connections: int = 0  # the most seen in the day running
    backfills: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.engine = create_app_engine(self.stack.app_url)
        self.dagster_engine = sa.create_engine(self.stack.dagster_url, poolclass=sa.pool.NullPool)
        self.instance = dg.DagsterInstance.from_config(str(self.stack.dagster_home))
        self.words = search_words(self.corpus)

    def graphql(self, query: str, variables: dict | None = None) -> dict:
        return webserver_graphql(self.stack.webserver_url, query, variables)

    # -- a day's work

    def people(self, day: int) -> None:
        with self.engine.begin() as conn:
            for k in range(SEARCHES):
                word = self.words[(day * SEARCHES + k) % len(self.words)]
                self.searches.append(
                    str(
                        conn.execute(
                            sa.text("INSERT INTO public.searches (user_id, query) VALUES (:u, :q) RETURNING id"),
                            {"u": str(uuid.uuid4()), "q": word},
                        ).scalar_one()
                    )
                )
            for entity_id in conn.execute(TO_OPEN, {"n": OPENS}).scalars():
                conn.execute(sa.text("SELECT processing.open_entity(CAST(:e AS uuid))"), {"e": entity_id})
                self.opened.append(entity_id)
            for entity_id in self.text_layer_lists(conn.execute(TO_REQUEST, {"n": REQUEST_CANDIDATES}))[
                :SHAREHOLDER_REQUESTS
            ]:
                companies.request_shareholder_research(conn, entity_id, str(uuid.uuid4()), "interactive")
                self.requested.append(entity_id)

    def text_layer_lists(self, candidates: sa.CursorResult) -> list[str]:
        """The candidates whose current shareholder list the sample register serves with a text layer.
        A scan's OCR takes half a minute of this machine's CPU, which bench.shareholders measures;
        here it would only make the days long."""
        return [
            row.id
            for row in candidates
            if (company := self.corpus.get(row.court_code, row.register_type, row.register_number))
            and current_list_form(company) == "text_pdf"
        ]

    def announcements_poll(self) -> str:
        launched = self.graphql(
            LAUNCH_RUN,
            {
                "executionParams": {
                    "selector": {
                        "repositoryLocationName": LOCATION,
                        "repositoryName": "__repository__",
                        "jobName": "register_announcements_job",
                    },
                    "runConfigData": {},
                }
            },
        )["launchRun"]
        if launched["__typename"] != "LaunchRunSuccess":
            raise RuntimeError(f"the announcements poll was not launched: {launched}")
        return launched["run"]["runId"]

    def deploy_parser_change(self, week: int) -> str:
        """A new parser version, deployed as a release does it (the job types synced, the location
        reloaded), then the backfill of every court launched; returns the backfill's id."""
        version = f"{PARSER_VERSION}-soak-{week}"
        self.parser_file.write_text(version)
        upgrade(self.engine, self.settings, JOB_TYPES.deploying(JOB_TYPES.xml_parsing, version))
        reloaded = self.graphql(RELOAD, {"name": LOCATION})["reloadRepositoryLocation"]
        if reloaded["__typename"] != "WorkspaceLocationEntry":
            raise RuntimeError(f"the code location did not reload: {reloaded}")
        return launch_backfill(
            self.stack.webserver_url,
            ["company_records"],
            list(register_courts()),
            title=f"soak: re-parse with parser {version}",
        )

    def work_done(self, run_id: str, backfill_id: str | None) -> bool:
        with self.engine.connect() as conn:
            unfinished = conn.execute(UNFINISHED_JOBS).scalar_one()
            unended = conn.execute(UNENDED_SEARCHES, {"ids": self.searches}).scalar_one()
            unended += conn.execute(UNENDED_ENTITIES, {"opened": self.opened, "requested": self.requested}).scalar_one()
            self.max_connections = max(self.max_connections, conn.execute(CONNECTIONS).scalar_one())
        if unfinished or unended:
            return False
        if self.graphql(RUN_STATUS, {"runId": run_id})["runOrError"].get("status") not in FINISHED_RUN_STATUSES:
            return False
        if backfill_id and not backfill_status(self.stack.webserver_url, backfill_id).finished:
            return False
        return not self.instance.get_runs_count(IN_FLIGHT_RUNS)

    def wait_for_the_day(self, run_id: str, backfill_id: str | None) -> bool:
        deadline = time.monotonic() + DAY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.work_done(run_id, backfill_id):
                return True
            time.sleep(WORK_POLL_S)
        log(f"the day's work did not end within {DAY_TIMEOUT_S}s; it goes on into the next day")
        return False

    # -- the retentions, by the simulated clock

    def cutoff(self, day: int, keep_days: float) -> datetime | None:
        """When the simulated day that is ``keep_days`` before the end of ``day`` began."""
        first_kept = day + 1 - int(keep_days)
        return self.day_started_at[first_kept] if first_kept > 0 else None

    def retention(self, day: int) -> tuple[int, Kept, int]:
        """Runs deleted, the runs older than the cutoff kept, jobs archived."""
        deleted = archived = 0
        kept = Kept()
        retention = DagsterRetentionResource.from_settings(self.settings)
        created_before = self.cutoff(day, retention.retention_days)
        if created_before is not None:
            while True:
                done = delete_old_runs(self.instance, created_before, resume_after=self.retention_cursor)
                deleted += len(done.deleted)
                kept.by_reason.update({reason: len(runs) for reason, runs in done.kept.items()})
                self.retention_cursor = done.resume_after
                if done.reached_end:
                    break
            kept = self.kept_runs(created_before, kept.by_reason)
        self.purge_ticks(day)
        self.purge_asset_evaluations(day)
        archive_before = self.cutoff(day, self.settings.job_archive_after_days)
        if archive_before is not None:
            archived = queue.archive_all_completed(
                self.engine,
                datetime.now(UTC) - archive_before,
                self.settings.job_archive_batch_size,
                max_batches=1000,
            )
        return deleted, kept, archived

    def kept_runs(self, created_before: datetime, by_reason: Counter[str]) -> Kept:
        runs = [
            record.dagster_run for record in self.instance.get_run_records(dg.RunsFilter(created_before=created_before))
        ]
        events = self.events_by_kind([run.run_id for run in runs])
        return Kept(len(runs), by_reason, Counter(run.job_name for run in runs), events)

    def events_by_kind(self, run_ids: list[str] | None = None) -> dict[str, list[int]]:
        """The events of ``run_ids`` (of every run: None) by kind: [events, bytes of JSON]."""
        with self.dagster_engine.connect() as conn:
            return {row.kind: [row.events, row.bytes] for row in conn.execute(EVENTS_BY_KIND, {"runs": run_ids})}

    def runs_by_job(self, since: datetime) -> dict[str, int]:
        runs = self.instance.get_run_records(dg.RunsFilter(created_after=since))
        return dict(sorted(Counter(record.dagster_run.job_name for record in runs).items()))

    def purge_ticks(self, day: int) -> None:
        """Dagster's retention of ticks (what its daemon does after each tick, by the real clock),
        with each status's cutoff on the simulated calendar instead."""
        for state in self.instance.all_instigator_state():
            for status, keep_days in self.instance.get_tick_retention_settings(state.instigator_type).items():
                before = self.cutoff(day, keep_days)
                if before is not None:
                    self.instance.purge_ticks(
                        state.instigator_origin_id, state.selector_id, before.timestamp(), [status]
                    )

    def purge_asset_evaluations(self, day: int) -> None:
        """The asset daemon's purge of its evaluations of automation conditions after each tick
        (older than EVALUATIONS_TTL_DAYS by the real clock), on the simulated calendar instead."""
        before = self.cutoff(day, EVALUATIONS_TTL_DAYS)
        if before is not None:
            self.instance.schedule_storage.purge_asset_evaluations(before.timestamp())

    # -- figures

    def figures(self) -> tuple[int, int, dict[str, int], dict[str, int], dict[str, int], int]:
        with self.engine.connect() as conn:
            app_bytes = conn.execute(sa.text("SELECT pg_database_size(current_database())")).scalar_one()
            largest = {f"app.{row.name}": row.rows for row in conn.execute(LARGEST, {"n": LARGEST_TABLES})}
            connections = conn.execute(CONNECTIONS).scalar_one()
        with self.dagster_engine.connect() as conn:
            dagster_bytes = conn.execute(sa.text("SELECT pg_database_size(current_database())")).scalar_one()
            largest |= {f"dagster.{row.name}": row.rows for row in conn.execute(LARGEST, {"n": LARGEST_TABLES})}
            table_bytes = {row.name: row.bytes for row in conn.execute(TABLE_BYTES)}
            parts = {row.part: row.bytes for row in conn.execute(DB_PARTS)}
        return dagster_bytes, app_bytes, largest, table_bytes, parts, connections

    def rss_mb(self) -> dict[str, float]:
        """Resident memory of the daemon, the webserver and the code server each serves from: that
        server's process alone, not the runs it starts as its children (multiprocessing), which
        end with their runs, and not the server it replaced, which lingers until its heartbeat
        times out."""
        daemon = self.stack.processes["dagster-daemon"].pid
        webserver = self.stack.processes["dagster-webserver"].pid
        measured = {"daemon": rss_bytes(daemon), "webserver": rss_bytes(webserver)}
        for name, parent in (("daemon code server", daemon), ("webserver code server", webserver)):
            server = serving_code_server(parent)
            measured[name] = rss_bytes(server) if server else 0
        return {name: rss / 2**20 for name, rss in measured.items()}

    def day(self, day: int) -> Day:
        started = time.monotonic()
        self.max_connections = 0
        self.day_started_at.append(datetime.now(UTC))
        self.people(day)
        run_id = self.announcements_poll()
        backfill_id = None
        if day % BACKFILL_EVERY_DAYS == BACKFILL_EVERY_DAYS - 1:
            backfill_id = self.deploy_parser_change(day // BACKFILL_EVERY_DAYS + 1)
            self.backfills.append(backfill_id)
        self.wait_for_the_day(run_id, backfill_id)
        self.log_failures_since(self.day_started_at[-1])
        runs_by_job = self.runs_by_job(self.day_started_at[-1])
        deleted, kept, archived = self.retention(day)
        for engine in (self.engine, self.dagster_engine):
            autovacuum_of_a_day(engine)
        # The nightly schedule's packing (sensors.storage_maintenance), on the simulated calendar:
        # of every table on the day after a backfill's, the day of the week the backfills keep clear.
        packed = pack_tables(
            self.dagster_engine,
            DAGSTER_PACK_SQL,
            rewrite_max_bytes=DagsterRetentionResource.from_settings(self.settings).rewrite_max_bytes,
            every_table=day % BACKFILL_EVERY_DAYS == 0,
        )
        log(packed.describe())
        dagster_bytes, app_bytes, largest, table_bytes, parts, connections = self.figures()
        self.max_connections = max(self.max_connections, connections)
        return Day(
            day=day + 1,
            seconds=time.monotonic() - started,
            dagster_db_bytes=dagster_bytes,
            app_db_bytes=app_bytes,
            largest=largest,
            dagster_table_bytes=table_bytes,
            dagster_db_parts=parts,
            rss_mb=self.rss_mb(),
            connections=self.max_connections,
            runs_deleted=deleted,
            runs_by_job=runs_by_job,
            kept=kept,
            events=self.events_by_kind(),
            jobs_archived=archived,
            backfill=backfill_id is not None,
            tables_rewritten=[t.table for t in packed.tables if t.how == "rewritten"],
        )

    def lost_and_failed(self) -> tuple[int, dict[str, int]]:
        with self.engine.connect() as conn:
            lost = conn.execute(UNFINISHED_JOBS).scalar_one()
            lost += conn.execute(UNENDED_SEARCHES, {"ids": self.searches}).scalar_one()
            lost += conn.execute(UNENDED_ENTITIES, {"opened": self.opened, "requested": self.requested}).scalar_one()
            failed = {failure_class: jobs for failure_class, jobs in conn.execute(FAILED_BY_CLASS)}
        return lost, failed

    def log_failures_since(self, since: datetime) -> None:
        with self.engine.connect() as conn:
            for job in conn.execute(FAILED_SINCE, {"since": since}):
                log(f"failed: {job.type} ({job.failure_class}, after {job.retry_count} retries): {job.error_message}")

    def retrieval_times(self) -> list[float]:
        answer = httpx.get(self.stack.settings.register_base_url + "/_sample/retrievals", timeout=60)
        answer.raise_for_status()
        return sorted(moment for moment, _kind in answer.json())


def autovacuum_of_a_day(engine: sa.Engine) -> None:
    """What autovacuum does over a real day, done at the end of a simulated one: it looks every
    autovacuum_naptime (a minute), about once in a simulated day and 1440 times in a real one, and
    vacuums and analyzes each table past its thresholds, so that dead rows' space is reused."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for table in conn.execute(AUTOVACUUM_DUE).all():
            if table.vacuum:
                conn.execute(sa.text(f"VACUUM {'(ANALYZE) ' if table.analyze else ''}{table.name}"))
            elif table.analyze:
                conn.execute(sa.text(f"ANALYZE {table.name}"))


def dagster_db_growth(days: list[Day], first: Day | None) -> dict[str, int | float | None]:
    """The Dagster database's size on ``first``, the first day retention deleted runs, and on the
    last day, and how far it grew from the first to the last, to the last day at the same point
    of the backfills' week (a weekly saw is compared with itself), and to its largest since."""
    last = days[-1]
    if first is None:
        return {
            "dagster_db_bytes_first_retention_day": None,
            "first_retention_day": None,
            "dagster_db_bytes_last_day": last.dagster_db_bytes,
            "dagster_db_growth_since_first_retention_day": None,
        }
    since = [d for d in days if d.day >= first.day]
    same_weekday = [d for d in since if (d.day - first.day) % BACKFILL_EVERY_DAYS == 0][-1]
    largest = max(since, key=lambda d: d.dagster_db_bytes)
    by_weekday, by_weekday_day = largest_growth_by_weekday({d.day: d.dagster_db_bytes for d in days}, first.day)

    def growth(day: Day) -> float:
        return round(day.dagster_db_bytes / first.dagster_db_bytes - 1, 3)

    return {
        "dagster_db_bytes_first_retention_day": first.dagster_db_bytes,
        "first_retention_day": first.day,
        "dagster_db_bytes_last_day": last.dagster_db_bytes,
        "dagster_db_growth_since_first_retention_day": growth(last),
        "dagster_db_growth_same_weekday": growth(same_weekday),
        "same_weekday": same_weekday.day,
        "dagster_db_growth_largest": growth(largest),
        "largest_day": largest.day,
        "dagster_db_growth_largest_by_weekday": by_weekday,
        "largest_by_weekday_day": by_weekday_day,
    }


def largest_growth_by_weekday(sizes: dict[int, int], first_day: int) -> tuple[float | None, int | None]:
    """The largest growth of a day's size (``sizes`` by day) over the size on the day of retention's
    first week (``first_day`` to six days on) at the same point of the backfills' week, and that day:
    a backfill's day is compared with the first backfill's day retention saw, a quiet day with a
    quiet one."""
    growths = {
        day: size / sizes[first_day + (day - first_day) % BACKFILL_EVERY_DAYS] - 1
        for day, size in sizes.items()
        if day >= first_day + BACKFILL_EVERY_DAYS
    }
    if not growths:
        return None, None
    day = max(growths, key=lambda d: growths[d])
    return round(growths[day], 3), day


def table_growth(first: Day | None, last: Day) -> dict[str, int]:
    """How much each table of the Dagster database grew from ``first`` to ``last`` (bytes with
    indexes and TOAST), the ones that grew most first, for the tables that changed."""
    if first is None:
        return {}
    grown = {
        name: size - first.dagster_table_bytes.get(name, 0)
        for name, size in last.dagster_table_bytes.items()
        if size != first.dagster_table_bytes.get(name, 0)
    }
    return dict(sorted(grown.items(), key=lambda item: -item[1]))


def rss_growth_by_process(days: list[Day]) -> tuple[Day, Day, dict[str, float]]:
    """Each process's RSS at the end of the last day without a backfill over its RSS at the end of
    the first day (which has none): the same point of the same kind of day, so that a backfill's
    runs and the code server a parser deploy reloads are not what is compared."""
    plain = [d for d in days if not d.backfill]
    first, last = plain[0], plain[-1]
    return first, last, {name: last.rss_mb[name] / first.rss_mb[name] for name in first.rss_mb if first.rss_mb[name]}


def write_workspace(data_dir: Path) -> Path:
    workspace = data_dir / "workspace.yaml"
    location = {
        "module_name": LOCATION_MODULE,
        "location_name": LOCATION,
        "working_directory": str(devstack.PROJECT_ROOT),
    }
    workspace.write_text(yaml.safe_dump({"load_from": [{"python_module": location}]}))
    return workspace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=DAYS, help=f"simulated days (default {DAYS})")
    parser.add_argument("--scale", type=float, default=SCALE, help="portal seconds per real second (default 60)")
    parser.add_argument(
        "--retention-days", type=float, default=30, help="HREG_DAGSTER_RETENTION_DAYS, in simulated days (default 30)"
    )
    args = parser.parse_args()

    per_hour = LIVE_BURST + round((LIVE_PER_HOUR - LIVE_BURST) * args.scale)
    _url, data_dir, settings = bench_stack_environment(
        "hreg_bench_soak",
        {
            "HREG_WEBSERVER_PORT": str(free_port()),
            "HREG_REGISTER": "sample",
            "HREG_SEARCH_OPENS": f"first:{SEARCH_OPENS}",
            "HREG_RATE_LIMIT_PER_HOUR": str(per_hour),
            "HREG_RATE_LIMIT_BURST": str(LIVE_BURST),
            "HREG_DAGSTER_RETENTION_DAYS": str(args.retention_days),
        },
    )
    # The file a week's parser change writes, which the code location reads (bench.soak_location).
    os.environ["BENCH_SOAK_PARSER_FILE"] = str(data_dir / "parser-version")
    stack = devstack.prepare(settings)
    log_dir = data_dir / "logs"
    log(f"logs in {log_dir}")
    days: list[Day] = []
    try:
        devstack.start_sample_register(stack, log_dir)
        devstack.start_dagster(stack, log_dir=log_dir, workspace=write_workspace(data_dir))
        soak = Soak(stack, settings, data_dir / "parser-version")
        for day in range(args.days):
            days.append(soak.day(day))
            log(days[-1].line())
        # The last day's failures may be retried a while later: they end or are counted lost.
        soak.wait_for_the_day(soak.announcements_poll(), None)
        jobs_lost, failed_by_class = soak.lost_and_failed()
        retrievals = soak.retrieval_times()
        soak.instance.dispose()
    finally:
        devstack.stop(stack)

    first_retention = next((d for d in days if d.runs_deleted), None)
    last = days[-1]
    rss_first, rss_last, rss_growth = rss_growth_by_process(days)
    print(
        json.dumps(
            {
                "days": len(days),
                **dagster_db_growth(days, first_retention),
                "dagster_table_growth_bytes": table_growth(first_retention, last),
                "app_db_bytes_last_day": last.app_db_bytes,
                "rss_growth_ratio": round(max(rss_growth.values()), 3),
                "rss_growth_by_process": {name: round(ratio, 3) for name, ratio in rss_growth.items()},
                "rss_days_compared": [rss_first.day, rss_last.day],
                "max_connections": max(d.connections for d in days),
                "jobs_lost": jobs_lost,
                "failed_by_class": failed_by_class,
                "max_retrievals_in_any_hour": most_in_any_window(retrievals, 3600 / args.scale),
                "retrievals": len(retrievals),
                "runs_deleted": sum(d.runs_deleted for d in days),
                "backfills": len(soak.backfills),
                "day_seconds_median": round(statistics.median(d.seconds for d in days), 1),
                "scale": args.scale,
                "per_day": [
                    {
                        "day": d.day,
                        "seconds": round(d.seconds, 1),
                        "dagster_db_bytes": d.dagster_db_bytes,
                        "dagster_db_parts": d.dagster_db_parts,
                        "dagster_table_bytes": d.dagster_table_bytes,
                        "app_db_bytes": d.app_db_bytes,
                        "rss_mb": {name: round(mb, 1) for name, mb in d.rss_mb.items()},
                        "connections": d.connections,
                        "runs_deleted": d.runs_deleted,
                        "runs_by_job": d.runs_by_job,
                        "runs_kept_past_cutoff": d.kept.runs,
                        "kept_runs_by_reason": dict(d.kept.by_reason),
                        "kept_runs_by_job": dict(d.kept.by_job),
                        "kept_run_events": d.kept.events,
                        "events": d.events,
                        "tables_rewritten": d.tables_rewritten,
                    }
                    for d in days
                ],
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
