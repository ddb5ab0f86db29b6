"""The job queue, the dead letter and the register's rate limit as Prometheus metrics.

A custom collector reads the database on every scrape, so the endpoint holds no state and any
number of them may run; the figures are those `hreg status` and `hreg jobs dead-letter` show,
from the same named queries (``queue.sql``) and those of ``metrics.sql``. A scrape while the
database is unreachable answers ``hreg_database_up 0`` and nothing else.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import sqlalchemy as sa
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy.engine import Engine

from orchestration.db import queries
from orchestration.runtime import queue

QUERIES = queries.load("metrics")
PRIORITIES = ("interactive", "background")
QUEUE_STATUSES = ("queued", "running")
# Who fails a running job as lease_expired: the reaper when its lease ran out, the run status
# sensors when the run holding it ended (sensors/jobs.py).
LEASE_REAP_SOURCES = ("lease_reaper", "run_status_sensor")

log = logging.getLogger(__name__)


def dead_letter_size(conn: sa.Connection) -> list[dict[str, Any]]:
    """The dead letter's jobs per type and failure class."""
    return [dict(row._mapping) for row in conn.execute(QUERIES["dead_letter_size"])]


class QueueCollector(Collector):
    """The queue, the dead letter and the rate limit buckets, read from the database per scrape."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("hreg_database_up", "Whether this scrape could read the application database.")
        try:
            with self.engine.connect() as conn:
                families = list(self._families(conn))
        except sa.exc.DBAPIError as error:
            log.warning("metrics: the database did not answer: %s", error.orig or error)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield from families

    def _families(self, conn: sa.Connection) -> Iterator[Metric]:
        job_types = list(queue.job_types(conn))

        jobs = GaugeMetricFamily(
            "hreg_queue_jobs", "Queued and running jobs by job type, priority and status.",
            labels=["type", "priority", "status"],
        )  # fmt: skip
        active = {(row["type"], row["priority"]): row for row in queue.queue_by_priority(conn)}
        for job_type in job_types:
            for priority in PRIORITIES:
                row = active.get((job_type, priority), {})
                for status in QUEUE_STATUSES:
                    jobs.add_metric([job_type, priority, status], row.get(status, 0))
        yield jobs

        oldest = GaugeMetricFamily(
            "hreg_oldest_due_job_age_seconds",
            "How long the oldest due job (queued, backoff passed, earlier stages done) has waited since it "
            "became due, by job type and priority; 0 when none is due.",
            labels=["type", "priority"],
        )
        ages = {(row.type, row.priority): row.age_s for row in conn.execute(QUERIES["oldest_due_jobs"])}
        for job_type in job_types:
            for priority in PRIORITIES:
                oldest.add_metric([job_type, priority], max(0.0, ages.get((job_type, priority), 0.0)))
        yield oldest

        reaps = CounterMetricFamily(
            "hreg_lease_reaps",
            "Running jobs failed as lease_expired (and so retried), by source: lease_reaper when a lease ran "
            "out, run_status_sensor when the run holding them failed or was canceled.",
            labels=["source"],
        )
        counts = {row.source: row.reaps for row in conn.execute(QUERIES["lease_reaps"])}
        for source in sorted({*LEASE_REAP_SOURCES, *counts}):
            reaps.add_metric([source], counts.get(source, 0))
        yield reaps

        dead = GaugeMetricFamily(
            "hreg_dead_letter_jobs",
            "Jobs failed for good that no later job took up (`hreg jobs dead-letter`), by type and failure class.",
            labels=["type", "failure_class"],
        )
        for row in dead_letter_size(conn):
            dead.add_metric([row["type"], row["failure_class"]], row["jobs"])
        yield dead

        failed = GaugeMetricFamily(
            "hreg_failed_jobs",
            "Jobs in the job table whose last attempt failed for good, by type and failure class "
            "(`hreg status`), including those a later job took up.",
            labels=["type", "failure_class"],
        )
        for row in queue.failures_by_class(conn):
            failed.add_metric([row["type"], row["failure_class"]], row["jobs"])
        yield failed

        tokens = GaugeMetricFamily(
            "hreg_rate_limit_tokens", "Tokens a shared rate limit bucket holds now (register retrievals allowed at once).",
            labels=["bucket"],
        )  # fmt: skip
        per_hour = GaugeMetricFamily(
            "hreg_rate_limit_per_hour", "Retrievals a bucket allows in any hour.", labels=["bucket"]
        )
        taken = GaugeMetricFamily(
            "hreg_rate_limit_taken_last_hour",
            "Tokens taken (register retrievals made) in the last hour, by bucket and priority.",
            labels=["bucket", "priority"],
        )
        for row in conn.execute(QUERIES["rate_limit_buckets"]):
            tokens.add_metric([row.name], row.tokens)
            per_hour.add_metric([row.name], row.per_hour)
            taken.add_metric([row.name, "interactive"], row.taken_interactive)
            taken.add_metric([row.name, "background"], row.taken_background)
        yield tokens
        yield per_hour
        yield taken
