"""The Dagster code location: assets, jobs, sensors and resources of handelsregister-orchestration.

Built from one settings object, read from the environment (HREG_*) once, here; the resources
carry it as their configuration. Loading the location needs no database: retry settings are
read from processing.job_types when a step starts (assets.retries), and a sensor tick without
the database is skipped with a message saying so (sensors.database).
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import dagster as dg

from assets.company_records import build_company_records_asset, company_records_from_the_queue
from assets.court_partitions import CourtBackfills, court_backfill_policy
from assets.discovery import build_discovery_asset
from assets.document_assets import document_asset, documents_from_the_queue
from assets.queue_runs import QueueWork, sensor_job
from assets.shareholders import (
    build_shareholders_asset,
    ownership_graph,
    ownership_graph_sensor,
    shareholders_from_the_queue,
)
from orchestration.assembly.celery_config import celery_executor_config
from orchestration.assembly.dagster_instance import backfill_run_slots
from orchestration.jobs.specs import JOB_TYPES, JobTypes
from orchestration.settings import Settings
from resources.dagster_retention import DagsterRetentionResource
from resources.database import DatabaseResource
from resources.discovery import SearchPolicyResource
from resources.documents import DocumentStoreResource, ownership_graph_io_manager
from resources.job_queue import JobQueueResource
from resources.register import RegisterResource
from resources.shareholders import ShareholderExtractorResource
from resources.stages import StagesResource
from resources.webhooks import AlertWebhookResource, WebhookResource
from sensors.alerts import dead_letter_alert_sensor, run_failure_alert_sensor
from sensors.announcements import register_announcements, register_announcements_job, register_announcements_schedule
from sensors.automation import automation_sensors
from sensors.jobs import (
    build_job_sensor,
    canceled_run_jobs_sensor,
    failed_run_jobs_sensor,
    job_archive_sensor,
    lease_reaper_sensor,
)
from sensors.retention import dagster_retention_sensor
from sensors.storage_maintenance import dagster_storage_maintenance_job, dagster_storage_maintenance_schedule

# Beta parameters we use on purpose: a court backfill's runs (`backfill_policy`), and `owners`, which
# Dagster passes to every sensor it builds. Filtered by their exact message here, in the module every
# process that loads the code location imports, so that no terminal repeats them once per process.
for _beta_parameter in (
    "Parameter `backfill_policy` of function `asset` is currently in beta",
    "Parameter `owners` of initializer `SensorDefinition.__init__` is currently in beta",
):
    warnings.filterwarnings("ignore", message=re.escape(_beta_parameter), category=dg.BetaWarning)


def run_executor(settings: Settings) -> dg.ExecutorDefinition:
    """Celery workers when a broker is configured (the multi-host layout, docs/deployment.md);
    otherwise one process per run, no step subprocess: a run costs half the CPU."""
    if not settings.celery_broker_url:
        return dg.in_process_executor
    from dagster_celery import celery_executor  # Celery's import is for the cluster only

    return celery_executor.configured(celery_executor_config(settings), name="celery")


def build_resources(settings: Settings) -> dict[str, Any]:
    """The resources of the code location, configured by ``settings``."""
    database = DatabaseResource.from_settings(settings)
    webhooks = WebhookResource.from_settings(settings)
    documents = DocumentStoreResource.from_settings(settings)
    register = RegisterResource.from_settings(settings, database)
    search_policy = SearchPolicyResource.from_settings(settings)
    shareholder_extractor = ShareholderExtractorResource.from_settings(settings)
    return {
        "database": database,
        "documents": documents,
        "register": register,
        "search_policy": search_policy,
        "job_queue": JobQueueResource.from_settings(settings),
        "shareholder_extractor": shareholder_extractor,
        "stages": StagesResource(
            documents=documents,
            register_resource=register,
            search_policy=search_policy,
            shareholder_extractor=shareholder_extractor,
        ),
        "webhooks": webhooks,
        "alert_webhook": AlertWebhookResource.from_settings(settings, webhooks),
        "ownership_graph_io_manager": ownership_graph_io_manager(settings),
        "dagster_retention": DagsterRetentionResource.from_settings(settings),
    }


def build_definitions(settings: Settings | None = None, job_types: JobTypes = JOB_TYPES) -> dg.Definitions:
    """The code location configured by ``settings`` (default: the environment's, read now), with
    the stages and parsers of ``job_types`` (default: this code's)."""
    settings = settings or Settings()
    backfills = CourtBackfills(court_backfill_policy(backfill_run_slots(settings)), settings.backfill_give_way_seconds)
    discovery = build_discovery_asset(job_types.basic_discovery, job_types.xml_parsing)
    assets: list[dg.AssetsDefinition | dg.AssetSpec] = [
        discovery,
        build_company_records_asset(backfills, job_types.xml_parsing),
        *(document_asset(spec) for spec in job_types if spec.document_asset),
        build_shareholders_asset(backfills, job_types.shareholder_parsing),
        ownership_graph,
        register_announcements,
    ]
    # What a run of each job type's sensor does: materialize the asset its jobs feed, or, for a
    # court-partitioned asset with court-partitioned inputs, a queue run spanning courts, as an op;
    # a type whose spec declares the asset of the documents it downloads, the queue run reporting them.
    sensor_runs: dict[str, dg.AssetsDefinition | QueueWork] = {
        job_types.basic_discovery.name: discovery,
        job_types.xml_parsing.name: company_records_from_the_queue,
        job_types.shareholder_parsing.name: shareholders_from_the_queue,
        **{spec.name: documents_from_the_queue(spec) for spec in job_types if spec.document_asset},
    }
    executor = run_executor(settings)
    jobs = [(spec, sensor_job(spec, sensor_runs[spec.name], executor)) for spec in job_types]
    versions = job_types.versions()
    return dg.Definitions(
        assets=assets,
        # Also the executor of the implicit asset job that the UI's materializations and backfills use.
        executor=executor,
        jobs=[*(job for _, job in jobs), register_announcements_job, dagster_storage_maintenance_job],
        schedules=[register_announcements_schedule, dagster_storage_maintenance_schedule],
        sensors=[
            *(build_job_sensor(spec, job, versions) for spec, job in jobs),
            lease_reaper_sensor,
            failed_run_jobs_sensor,
            canceled_run_jobs_sensor,
            job_archive_sensor,
            dagster_retention_sensor,
            ownership_graph_sensor,
            *automation_sensors,
            run_failure_alert_sensor,
            dead_letter_alert_sensor,
        ],
        resources=build_resources(settings),
    )


@dg.definitions
def defs() -> dg.Definitions:
    # Loaded lazily by Dagster, and without the database.
    return build_definitions()
