"""The Dagster code location: assets, jobs, sensors and resources of handelsregister-orchestration.

Retry policies mirror processing.job_types, so the job types are read from the database when
the code location loads.
"""

from __future__ import annotations

import dagster as dg

from assets.company_records import build_company_records_asset
from assets.discovery import build_discovery_assets
from assets.shareholders import build_shareholder_list_documents_asset, build_shareholders_asset, ownership_graph
from orchestration import queue
from orchestration.db.engine import get_engine
from orchestration.db.migrate import schema_behind
from orchestration.settings import Settings, get_settings
from resources.database import database_from_environment
from resources.documents import DocumentStoreResource, ownership_graph_io_manager
from resources.register import RegisterResource
from resources.shareholders import ShareholderExtractorResource
from sensors.announcements import register_announcements_job, register_announcements_schedule
from sensors.automation import automation_sensors
from sensors.jobs import build_job_sensor, job_archive_sensor, lease_reaper_sensor

# How often each job type's sensor polls: discovery is what a user waits for.
SENSOR_INTERVAL_SECONDS = {
    "basic_discovery": 5,
    "xml_parsing": 5,
    "shareholder_download": 10,
    "shareholder_parsing": 10,
}


class SchemaBehind(RuntimeError):
    """The database is older than the code location."""


def load_job_types() -> dict[str, queue.JobType]:
    engine = get_engine()
    try:
        behind = schema_behind(engine)
        with engine.connect() as conn:
            job_types = queue.job_types(conn)
    except Exception as exc:
        raise RuntimeError(
            f"cannot read processing.job_types ({type(exc).__name__}: {exc}); "
            "run `hreg db upgrade` (or `hreg dev`) first"
        ) from exc
    # Checked at load: a location deployed against an older schema would otherwise fail inside a run.
    if behind:
        raise SchemaBehind(f"{behind}: run `hreg db upgrade` against this database before loading the code location")
    return job_types


def run_executor(settings: Settings) -> dg.ExecutorDefinition:
    """Celery workers when a broker is configured (the multi-host layout, docs/deployment.md);
    otherwise one process per run, no step subprocess: a run costs half the CPU."""
    if not settings.celery_broker_url:
        return dg.in_process_executor
    from dagster_celery import celery_executor  # Celery's import is for the cluster only

    return celery_executor.configured(
        {"broker": settings.celery_broker_url, "backend": settings.celery_broker_url}, name="celery"
    )


def asset_job(job_type: str, asset: dg.AssetsDefinition, executor: dg.ExecutorDefinition):
    return dg.define_asset_job(
        name=f"{job_type}_job",
        selection=dg.AssetSelection.assets(asset),
        executor_def=executor,
        tags={"hreg/job_type": job_type},
        description=f"Works one batch of due {job_type} jobs.",
    )


def build_definitions() -> dg.Definitions:
    job_types = load_job_types()
    assets_by_type = {
        "basic_discovery": build_discovery_assets(job_types["basic_discovery"]),
        "xml_parsing": build_company_records_asset(job_types["xml_parsing"]),
        "shareholder_download": build_shareholder_list_documents_asset(job_types["shareholder_download"]),
        "shareholder_parsing": build_shareholders_asset(job_types["shareholder_parsing"]),
    }
    settings = get_settings()
    executor = run_executor(settings)
    jobs = {job_type: asset_job(job_type, asset, executor) for job_type, asset in assets_by_type.items()}
    sensors = [build_job_sensor(job_type, job, SENSOR_INTERVAL_SECONDS[job_type]) for job_type, job in jobs.items()]
    database = database_from_environment()
    return dg.Definitions(
        assets=[*assets_by_type.values(), ownership_graph],
        # Also the executor of the implicit asset job that the UI's materializations and backfills use.
        executor=executor,
        jobs=[*jobs.values(), register_announcements_job],
        schedules=[register_announcements_schedule],
        sensors=[*sensors, lease_reaper_sensor, job_archive_sensor, *automation_sensors],
        resources={
            "database": database,
            "documents": DocumentStoreResource(),
            "register": RegisterResource(database=database),
            "shareholder_extractor": ShareholderExtractorResource(),
            "ownership_graph_io_manager": ownership_graph_io_manager(settings),
        },
    )


@dg.definitions
def defs() -> dg.Definitions:
    # Loaded lazily by Dagster: importing this module needs no database.
    return build_definitions()
