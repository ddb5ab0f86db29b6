"""The Dagster code location: assets, jobs, sensors and resources of handelsregister-orchestration.

Built from one settings object, read from the environment (HREG_*) once, here; the resources
carry it as their configuration. Loading the location needs no database: retry settings are
read from processing.job_types when a step starts (assets.retries), and a sensor tick without
the database is skipped with a message saying so (sensors.database).
"""

from __future__ import annotations

from typing import Any

import dagster as dg

from assets.batch import queue_job
from assets.company_records import build_company_records_asset, company_records_from_the_queue
from assets.discovery import basic_discovery
from assets.partitions import CourtBackfills, court_backfill_policy
from assets.shareholders import (
    build_shareholders_asset,
    ownership_graph,
    ownership_graph_sensor,
    shareholder_list_documents,
    shareholder_list_documents_from_the_queue,
    shareholders_from_the_queue,
)
from orchestration.assembly.celery_config import celery_executor_config
from orchestration.assembly.dagster_instance import backfill_run_slots
from orchestration.settings import Settings
from resources.dagster_retention import DagsterRetentionResource
from resources.database import DatabaseResource
from resources.discovery import SearchPolicyResource
from resources.documents import DocumentStoreResource, ownership_graph_io_manager
from resources.job_queue import JobQueueResource
from resources.register import RegisterResource
from resources.shareholders import ShareholderExtractorResource
from resources.webhooks import WebhookResource
from sensors.announcements import register_announcements_job, register_announcements_schedule
from sensors.automation import automation_sensors
from sensors.jobs import (
    build_job_sensor,
    canceled_run_jobs_sensor,
    failed_run_jobs_sensor,
    job_archive_sensor,
    lease_reaper_sensor,
)
from sensors.retention import dagster_retention_sensor

# How often each job type's sensor polls: discovery is what a user waits for.
SENSOR_INTERVAL_SECONDS = {
    "basic_discovery": 5,
    "xml_parsing": 5,
    "shareholder_download": 10,
    "shareholder_parsing": 10,
}


def run_executor(settings: Settings) -> dg.ExecutorDefinition:
    """Celery workers when a broker is configured (the multi-host layout, docs/deployment.md);
    otherwise one process per run, no step subprocess: a run costs half the CPU."""
    if not settings.celery_broker_url:
        return dg.in_process_executor
    from dagster_celery import celery_executor  # Celery's import is for the cluster only

    return celery_executor.configured(celery_executor_config(settings), name="celery")


def asset_job(job_type: str, asset: dg.AssetsDefinition, executor: dg.ExecutorDefinition):
    return dg.define_asset_job(
        name=f"{job_type}_job",
        selection=dg.AssetSelection.assets(asset),
        executor_def=executor,
        tags={"hreg/job_type": job_type},
        description=f"Works one batch of due {job_type} jobs.",
    )


def build_resources(settings: Settings) -> dict[str, Any]:
    """The resources of the code location, configured by ``settings``."""
    database = DatabaseResource.from_settings(settings)
    return {
        "database": database,
        "documents": DocumentStoreResource.from_settings(settings),
        "register": RegisterResource.from_settings(settings, database),
        "search_policy": SearchPolicyResource.from_settings(settings),
        "job_queue": JobQueueResource.from_settings(settings),
        "shareholder_extractor": ShareholderExtractorResource.from_settings(settings),
        "webhooks": WebhookResource.from_settings(settings),
        "ownership_graph_io_manager": ownership_graph_io_manager(settings),
        "dagster_retention": DagsterRetentionResource.from_settings(settings),
    }


def build_definitions(settings: Settings | None = None) -> dg.Definitions:
    """The code location configured by ``settings`` (default: the environment's, read now)."""
    settings = settings or Settings()
    backfills = CourtBackfills(court_backfill_policy(backfill_run_slots(settings)), settings.backfill_give_way_seconds)
    assets = [
        basic_discovery,
        build_company_records_asset(backfills),
        shareholder_list_documents,
        build_shareholders_asset(backfills),
        ownership_graph,
    ]
    executor = run_executor(settings)
    jobs = {
        "basic_discovery": asset_job("basic_discovery", basic_discovery, executor),
        # Court-partitioned assets with court-partitioned inputs: a queue run, spanning courts, is an op.
        "xml_parsing": queue_job("xml_parsing", company_records_from_the_queue, executor),
        "shareholder_download": queue_job("shareholder_download", shareholder_list_documents_from_the_queue, executor),
        "shareholder_parsing": queue_job("shareholder_parsing", shareholders_from_the_queue, executor),
    }
    sensors = [build_job_sensor(job_type, job, SENSOR_INTERVAL_SECONDS[job_type]) for job_type, job in jobs.items()]
    return dg.Definitions(
        assets=assets,
        # Also the executor of the implicit asset job that the UI's materializations and backfills use.
        executor=executor,
        jobs=[*jobs.values(), register_announcements_job],
        schedules=[register_announcements_schedule],
        sensors=[
            *sensors,
            lease_reaper_sensor,
            failed_run_jobs_sensor,
            canceled_run_jobs_sensor,
            job_archive_sensor,
            dagster_retention_sensor,
            ownership_graph_sensor,
            *automation_sensors,
        ],
        resources=build_resources(settings),
    )


@dg.definitions
def defs() -> dg.Definitions:
    # Loaded lazily by Dagster, and without the database.
    return build_definitions()
