"""The /metrics endpoint's registry: the database's figures (``health.metrics``) and failed runs
by job, from Dagster's run storage through its public API.

Here rather than in ``health`` because it opens Dagster's instance: the endpoint's process
(`hreg metrics`) reads the run storage the daemon writes, as the webserver does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import dagster as dg
from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy.engine import Engine

from orchestration.health.metrics import QueueCollector


class FailedRunsCollector(Collector):
    """Failed runs per job in Dagster's run storage, read per scrape."""

    def __init__(self, instance: dg.DagsterInstance) -> None:
        self.instance = instance

    def collect(self) -> Iterator[Metric]:
        failed = GaugeMetricFamily(
            "hreg_dagster_failed_runs",
            "Failed runs in Dagster's run storage, by job; alert on its increase (deleting old runs lowers it).",
            labels=["job"],
        )
        records = self.instance.get_run_records(dg.RunsFilter(statuses=[dg.DagsterRunStatus.FAILURE]))
        for job, runs in sorted(Counter(record.dagster_run.job_name for record in records).items()):
            failed.add_metric([job], runs)
        yield failed


def metrics_registry(engine: Engine) -> CollectorRegistry:
    """Every collector of the endpoint; Dagster's instance is the one DAGSTER_HOME names (`hreg dev`
    and the cluster layout set it for every process they start)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(QueueCollector(engine))
    registry.register(FailedRunsCollector(dg.DagsterInstance.get()))
    return registry
