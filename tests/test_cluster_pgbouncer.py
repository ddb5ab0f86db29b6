"""The multi-host layout with its workers behind PgBouncer in transaction mode
(`scripts/cluster.sh --pgbouncer`), and the register's retrieval budget shared by both workers.

The budget runs at a faster clock, the way bench/budget.py runs it: the live burst of 5 and the
live refill of 55 an hour, SCALE times faster, so that one portal hour is 3600/SCALE real
seconds. The sample register counts every retrieval it serves (``GET /_sample/retrievals``)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import httpx
import psycopg2
import pytest
import sqlalchemy as sa

from cluster_helpers import WORKERS, jobs_done, running_cluster, search_to_shareholders, unique_companies
from orchestration.stacks.devstack import group_members
from process_helpers import wait_until
from sample_register.corpus import load_corpus

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]

SCALE = 30  # portal seconds per real second: a retrieval served up to 2 s after its token still counts right
PORTAL_HOUR_S = 3600 / SCALE
LIVE_PER_HOUR, LIVE_BURST = 60, 5
# Words of company names that each find at least ten companies of the sample register, and
# mostly different ones: each search opens its first ten results, two retrievals each.
SEARCH_WORDS = ("Maschinenbau", "Reisen", "Dentaltechnik", "Gastronomie")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    per_hour = LIVE_BURST + (LIVE_PER_HOUR - LIVE_BURST) * SCALE
    env = {"HREG_RATE_LIMIT_PER_HOUR": str(per_hour), "HREG_RATE_LIMIT_BURST": str(LIVE_BURST)}
    with running_cluster(tmp_path_factory.mktemp("cluster-pgbouncer"), "--pgbouncer", env=env) as c:
        yield c


def worker_database_urls(cluster) -> set[sa.URL]:
    """HREG_DATABASE_URL as each worker process has it."""
    urls = set()
    for name in WORKERS:
        environ = Path(f"/proc/{cluster.pids()[name]}/environ").read_bytes().split(b"\0")
        values = dict(item.decode().split("=", 1) for item in environ if b"=" in item)
        urls.add(sa.make_url(values["HREG_DATABASE_URL"]))
    return urls


def pgbouncer_transactions(url: sa.URL, database: str) -> int:
    """Transactions PgBouncer's admin console counts for ``database`` since it started."""
    conn = psycopg2.connect(host=url.host, port=url.port, user=url.username, password=url.password, dbname="pgbouncer")
    conn.autocommit = True  # the admin console knows no transactions
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW STATS")
            columns = [column.name for column in cur.description]
            rows = [dict(zip(columns, row, strict=True)) for row in cur.fetchall()]
    finally:
        conn.close()
    return sum(row["total_xact_count"] for row in rows if row["database"] == database)


def retrieval_times(cluster) -> list[float]:
    answer = httpx.get(cluster.env["HREG_REGISTER_URL"] + "/_sample/retrievals", timeout=30)
    answer.raise_for_status()
    return sorted(time for time, _kind in answer.json())


def most_in_any_window(times: list[float], window_s: float) -> int:
    """The most retrievals within any ``window_s`` seconds, each window starting at a retrieval."""
    most, first = 0, 0
    for last, time in enumerate(times):
        while time - times[first] >= window_s:
            first += 1
        most = max(most, last - first + 1)
    return most


def test_the_pipeline_runs_on_workers_that_reach_postgresql_through_pgbouncer(cluster):
    (url,) = worker_database_urls(cluster)
    direct = sa.make_url(cluster.env["HREG_DATABASE_URL"])
    assert url.port != direct.port and url.database == direct.database
    before = pgbouncer_transactions(url, direct.database)

    (company,) = unique_companies(load_corpus(), 1, lambda c: c.legal_form == "GmbH" and c.files_shareholder_lists)
    search_to_shareholders(cluster, company)

    # Only the workers are given PgBouncer's address: the transactions it passed on are theirs.
    assert pgbouncer_transactions(url, direct.database) > before


def test_both_workers_together_retrieve_no_more_than_the_budget_in_any_hour(cluster):
    served_before = len(retrieval_times(cluster))
    steps_before = len(cluster.step_workers())
    for word in SEARCH_WORDS:
        cluster.hreg("search", word)
    wait_until(lambda: jobs_done(cluster), 1200, "the searches and their opened results to be done")

    times = retrieval_times(cluster)[served_before:]
    # Enough demand for two workers with a budget each to spend more than one budget in an hour.
    assert len(times) > 1.2 * LIVE_PER_HOUR, len(times)
    steps = cluster.step_workers()  # newest first
    assert set(steps[: len(steps) - steps_before]) == set(WORKERS)
    most = most_in_any_window(times, PORTAL_HOUR_S)
    print(f"{len(times)} retrievals, at most {most} in any portal hour")
    assert most <= LIVE_PER_HOUR, times


def test_stopping_the_cluster_stops_pgbouncer_too(cluster):
    pgbouncer = cluster.pids()["pgbouncer"]
    assert group_members(pgbouncer)
    os.killpg(cluster.process.pid, signal.SIGINT)
    assert cluster.process.wait(300) == 0
    assert group_members(pgbouncer) == []
