"""Dagster's instance configuration: its storage in its own database on our PostgreSQL server."""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml
from dagster import DagsterInstance
from sqlalchemy.engine import URL
from sqlalchemy.pool import NullPool

from orchestration.assembly.dagster_internals import BACKFILL_ID_TAG
from orchestration.db.engine import create_app_engine, ensure_database
from orchestration.db.sql_definitions import SQL_DIR, run_sql
from orchestration.records.object_store import S3ObjectStore, open_object_store
from orchestration.settings import Settings

# How long a run may take to start: its process loads the code location first, which on a busy
# 2-core machine has taken over a minute. Run monitoring fails a run that takes longer, and the
# daemon's launch call to the code server (60 s by default) waits as long, so that a slow start
# is not a failed launch (DAGSTER_GRPC_TIMEOUT_SECONDS, which every child of the stack gets).
RUN_START_TIMEOUT_SECONDS = 180


# The autovacuum settings of the tables of Dagster's database that retention deletes from, and
# their packing (orchestration.db.table_packing).
DAGSTER_AUTOVACUUM_SQL = SQL_DIR / "dagster" / "autovacuum.sql"
DAGSTER_PACK_SQL = SQL_DIR / "dagster" / "pack.sql"

# Dagster's three storages, by the key of the instance config that names each.
STORAGE_CLASSES = {"run": "RunStorage", "event_log": "EventLogStorage", "schedule": "ScheduleStorage"}


def backfill_run_slots(settings: Settings) -> int:
    """Run slots backfill runs may take at once: all but the people's, and one at least."""
    return max(1, settings.max_concurrent_runs - settings.people_run_slots)


def compute_logs_config(settings: Settings) -> dict:
    """Where steps' stdout and stderr go: with documents on S3, beside them in the bucket, since a
    Celery worker's steps would write them to its own disk, where the webserver on another host never
    finds them; else Dagster's default, the local disk (one host)."""
    store = open_object_store(settings.document_store_location)
    if not isinstance(store, S3ObjectStore):
        return {}
    return {
        "compute_logs": {
            "module": "dagster_aws.s3.compute_log_manager",
            "class": "S3ComputeLogManager",
            # The endpoint and credentials come from boto3's environment, as the documents' do.
            "config": {"bucket": store.bucket, "prefix": f"{store.prefix}dagster-compute-logs"},
        }
    }


def instance_config(dagster_url: URL, settings: Settings) -> dict:
    return {
        # Dagster's own PostgreSQL storages, whose schema checks are kept once true (dagster_internals).
        **{
            f"{kind}_storage": {
                "module": "orchestration.assembly.dagster_internals",
                "class": storage_class,
                "config": {
                    "postgres_url": dagster_url.render_as_string(hide_password=False),
                    # The tables exist (ensure_storage): otherwise every process that opens the
                    # instance looks them up first, and the code server opens it for every sensor tick.
                    "should_autocreate_tables": False,
                },
            }
            for kind, storage_class in STORAGE_CLASSES.items()
        },
        # Dagster's run queue (its QueuedRunCoordinator): how it looks for queued runs.
        "run_queue": {
            # The default of 5 s adds seconds to every run start.
            "dequeue_interval_seconds": 1,
            # A launch returns once the run's process has loaded the code (seconds, a minute on a
            # busy machine): in threads, the runs one look dequeues start side by side, and a
            # person's run does not wait for backfill runs' launches ahead of it in that look.
            "dequeue_use_threads": True,
            "dequeue_num_workers": settings.max_concurrent_runs,
        },
        # How many runs it starts at once.
        "concurrency": {
            "runs": {
                "max_concurrent_runs": settings.max_concurrent_runs,
                # Every run of a backfill carries dagster/backfill: together they leave
                # people_run_slots free (one run slot at least stays theirs to use).
                "tag_concurrency_limits": [{"key": BACKFILL_ID_TAG, "limit": backfill_run_slots(settings)}],
            },
        },
        # Marks runs whose process died, or that ran longer than HREG_RUN_MAX_RUNTIME_SECONDS (a run's
        # dagster/max_runtime tag overrides it), as failed; failed_run_jobs_sensor gives their jobs back.
        "run_monitoring": {
            "enabled": True,
            "start_timeout_seconds": RUN_START_TIMEOUT_SECONDS,
            "max_runtime_seconds": settings.run_max_runtime_seconds,
            "poll_interval_seconds": 15,
            "max_resume_run_attempts": 0,
        },
        "sensors": {"use_threads": True, "num_workers": 4},
        "schedules": {"use_threads": True, "num_workers": 2},
        "telemetry": {"enabled": False},
        # No "Join the Dagster community" newsletter modal on the first page of every new deployment.
        "nux": {"enabled": False},
        **compute_logs_config(settings),
        "retention": tick_retention(settings),
    }


def tick_retention(settings: Settings) -> dict:
    """Dagster's retention of sensor, schedule and automation ticks (the only storage it prunes
    itself; runs are pruned by the retention sensor). A sensor that skips writes a tick every
    few seconds, so skipped ticks go after a day; ticks that requested runs or failed are kept as
    long as runs."""
    days = max(1, math.ceil(settings.dagster_retention_days))
    return {
        kind: {"purge_after_days": {"skipped": 1, "started": days, "success": days, "failure": days}}
        for kind in ("schedule", "sensor", "auto_materialize")
    }


def ensure_storage(dagster_url: URL) -> None:
    """Dagster's database at ``dagster_url`` with its tables, created when missing, and the
    autovacuum settings of the tables retention deletes from."""
    ensure_database(dagster_url)
    from dagster_postgres import DagsterPostgresStorage  # Dagster's storage, for the stack's start only

    # Constructed with table creation on, the storage creates what is missing, as every process
    # would if the instance config let it; it holds no connection afterwards (no pool).
    DagsterPostgresStorage(dagster_url.render_as_string(hide_password=False), should_autocreate_tables=True)
    engine = create_app_engine(dagster_url, poolclass=NullPool)
    with engine.begin() as connection:
        run_sql(connection, DAGSTER_AUTOVACUUM_SQL.read_text())
    engine.dispose()


@dataclass(frozen=True)
class StorageRevision:
    """The schema revision of one of Dagster's storages before and after an upgrade, and the
    newest this Dagster knows."""

    storage: str
    before: str | None
    after: str | None
    latest: str | None

    def describe(self) -> str:
        if self.before == self.after:
            return f"{self.storage} storage at revision {self.after} (current)"
        return f"{self.storage} storage migrated from revision {self.before} to {self.after}"


def upgrade_storage(dagster_url: URL, settings: Settings, echo: Callable[[str], None]) -> list[StorageRevision]:
    """Dagster's database at ``dagster_url`` with its tables, migrated to this Dagster's schema as
    `dagster instance migrate` does (a minor Dagster upgrade may need it; creating missing tables
    is not the same). Dagster's own steps go to ``echo``; returns each storage's revisions."""
    ensure_storage(dagster_url)
    # An instance of its own: the host's DAGSTER_HOME and its dagster.yaml stay as they are.
    with tempfile.TemporaryDirectory(prefix="hreg-dagster-upgrade-") as home:
        write_instance_config(Path(home), dagster_url, settings)
        with DagsterInstance.from_config(home) as instance:
            before = storage_revisions(instance)
            instance.upgrade(echo)
            after = storage_revisions(instance)
    return [StorageRevision(name, before[name][0], *after[name]) for name in after]


def storage_revisions(instance: DagsterInstance) -> dict[str, tuple[str | None, str | None]]:
    """Each of the instance's storages, by name, with its schema revision and the newest this
    Dagster knows (Alembic's heads, comma-separated should a storage's migrations ever branch)."""
    storages = {
        "run": instance.run_storage,
        "event log": instance.event_log_storage,
        "schedule": instance.schedule_storage,
    }
    revisions = {}
    for name, storage in storages.items():
        # The instance config names dagster-postgres's storages, which all have a schedule storage
        # and an Alembic version.
        assert storage is not None
        version = storage.alembic_version()
        assert version is not None
        revision, newest = version
        revisions[name] = (revision, ", ".join(newest) if isinstance(newest, tuple) else newest)
    return revisions


def write_instance_config(dagster_home: Path, dagster_url: URL, settings: Settings) -> Path:
    """Write ``dagster.yaml`` into ``dagster_home``; returns its path."""
    dagster_home.mkdir(parents=True, exist_ok=True)
    path = dagster_home / "dagster.yaml"
    path.write_text(yaml.safe_dump(instance_config(dagster_url, settings), sort_keys=False))
    return path
