"""The multi-host layout run for real by `scripts/cluster.sh` in a test: start and stop, the
environment it writes for a CLI, and what the tests read of the cluster's databases and store."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import boto3
import sqlalchemy as sa

from orchestration.db.engine import create_app_engine
from orchestration.stacks.cluster import postgres_base
from process_helpers import wait_until

REPO_ROOT = Path(__file__).resolve().parents[1]
HREG = Path(sys.executable).parent / "hreg"
WORKERS = ("worker-1", "worker-2")
# Variables of the test session that would point the cluster's processes elsewhere.
OUTSIDE = ("HREG_DATABASE_URL", "HREG_REGISTER_URL", "HREG_DOCUMENT_STORE", "DAGSTER_HOME", "AWS_ENDPOINT_URL")


@dataclass
class RunningCluster:
    data_dir: Path
    process: subprocess.Popen
    env: dict[str, str]
    engine: sa.Engine
    dagster_engine: sa.Engine

    def pids(self) -> dict[str, int]:
        return json.loads((self.data_dir / "cluster-processes.json").read_text())

    def hreg(self, *args: str) -> str:
        done = subprocess.run(
            [str(HREG), *args], env={**os.environ, **self.env}, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def step_workers(self, where: str = "") -> list[str]:
        """The Celery workers Dagster's engine events name as executing a step, newest first."""
        with self.dagster_engine.connect() as conn:
            events = conn.execute(
                sa.text(f"""
                    SELECT e.event FROM event_logs e JOIN runs r ON r.run_id = e.run_id
                     WHERE e.event LIKE '%in celery worker%' {where} ORDER BY e.id DESC
                """)
            ).scalars()
            names = []
            for event in events:
                entries = json.loads(event)["dagster_event"]["event_specific_data"]["metadata_entries"]
                names += [e["entry_data"]["text"].split("@")[0] for e in entries if e["label"] == "Celery worker"]
        return names

    def celery_workers_of_steps(self) -> set[str]:
        return set(self.step_workers())

    def worker_of_a_running_step(self) -> str | None:
        return next(iter(self.step_workers("AND r.status = 'STARTED'")), None)

    def started_runs_on(self, worker: str) -> set[str]:
        """The runs still STARTED whose steps ``worker`` took."""
        with self.dagster_engine.connect() as conn:
            rows = conn.execute(
                sa.text("""
                    SELECT DISTINCT r.run_id FROM event_logs e JOIN runs r ON r.run_id = e.run_id
                     WHERE r.status = 'STARTED' AND e.event LIKE '%in celery worker%' AND e.event LIKE :worker
                """),
                {"worker": f"%{worker}@%"},
            ).scalars()
            return set(rows)

    def run_statuses(self, run_ids: set[str] | None = None) -> dict[str, str]:
        with self.dagster_engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT run_id, status FROM runs")).all()
        return {run_id: status for run_id, status in rows if run_ids is None or run_id in run_ids}


def read_env_file(path: Path) -> dict[str, str]:
    env = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            name, value = line.split("=", 1)
            env[name] = shlex.split(value)[0]
    return env


@contextlib.contextmanager
def running_cluster(data_dir: Path, *options: str, env: dict[str, str] | None = None) -> Iterator[RunningCluster]:
    """`scripts/cluster.sh --workers 2 OPTIONS` with the test session's environment less OUTSIDE,
    plus ``env``; stopped (with Ctrl-C) when the block ends, if a test has not stopped it."""
    full_env = {name: value for name, value in os.environ.items() if name not in OUTSIDE}
    # Every document goes to the object store, so that no file on a worker's disk can go unnoticed.
    full_env.update({"HREG_DATA_DIR": str(data_dir), "HREG_DOCUMENT_INLINE_LIMIT_BYTES": "0", **(env or {})})
    with open(data_dir / "cluster.out", "ab") as out:
        process = subprocess.Popen(
            [str(REPO_ROOT / "scripts" / "cluster.sh"), "--workers", str(len(WORKERS)), *options],
            env=full_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    env_file = data_dir / "cluster.env"
    try:
        wait_until(lambda: env_file.exists() or process.poll() is not None, 1200, "scripts/cluster.sh to start")
        assert process.poll() is None, (data_dir / "cluster.out").read_text()[-5000:]
        cluster_env = read_env_file(env_file)
        engine = create_app_engine(cluster_env["HREG_DATABASE_URL"])
        dagster_engine = sa.create_engine(
            sa.make_url(cluster_env["HREG_DATABASE_URL"]).set(database="hreg_dagster"), poolclass=sa.pool.NullPool
        )
        # Short leases, so that a dead worker's jobs come back within the test.
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE processing.job_types SET lease_seconds = 30"))
        yield RunningCluster(data_dir, process, cluster_env, engine, dagster_engine)
        engine.dispose()
        dagster_engine.dispose()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
            process.wait(300)
        for log_file in sorted((data_dir / "logs").glob("*.log")):
            print(f"--- {log_file.name} (tail)\n{log_file.read_text(errors='replace')[-2000:]}")
        shutil.rmtree(postgres_base(data_dir), ignore_errors=True)


def unique_companies(corpus, count: int, predicate):
    names = [c.name for c in corpus.companies]
    return [c for c in corpus.companies if predicate(c) and names.count(c.name) == 1][:count]


def jobs_done(cluster: RunningCluster) -> bool:
    with cluster.engine.connect() as conn:
        return not conn.execute(
            sa.text("SELECT count(*) FROM processing.processing_jobs WHERE status IN ('queued', 'running')")
        ).scalar_one()


def entity_status(cluster: RunningCluster, name: str):
    with cluster.engine.connect() as conn:
        return conn.execute(
            sa.text("SELECT id, processing_status, shareholder_research_status FROM content.entities WHERE name = :n"),
            {"n": name},
        ).one_or_none()


def search_to_shareholders(cluster: RunningCluster, company) -> None:
    """Search ``company`` and request its shareholders; return once its list is parsed, having
    checked that every document is in the bucket, none on a worker's disk, and that the steps ran
    on the cluster's workers."""
    cluster.hreg("search", "--mode", "exact", company.name)
    parsed = wait_until(
        lambda: (row := entity_status(cluster, company.name)) and row.processing_status == "parsed" and row,
        900,
        "the company to be discovered and its SI parsed",
    )
    cluster.hreg("shareholders", "request", str(parsed.id))
    wait_until(
        lambda: entity_status(cluster, company.name).shareholder_research_status == "completed",
        900,
        "the shareholder list to be downloaded and parsed",
    )
    with cluster.engine.connect() as conn:
        lists = conn.execute(
            sa.text("SELECT count(*) FROM content.shareholder_lists WHERE entity_id = :e"), {"e": parsed.id}
        ).scalar_one()
        keys = conn.execute(sa.text("SELECT storage_path FROM content.raw_documents")).scalars().all()
    assert lists >= 1
    # Every document (SI and the list) is in the bucket by its key, none on a worker's disk.
    s3 = boto3.client(
        "s3",
        endpoint_url=cluster.env["AWS_ENDPOINT_URL"],
        region_name=cluster.env["AWS_DEFAULT_REGION"],
        aws_access_key_id=cluster.env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=cluster.env["AWS_SECRET_ACCESS_KEY"],
    )
    stored = {item["Key"] for item in s3.list_objects_v2(Bucket="hreg", Prefix="documents/")["Contents"]}
    assert keys and {f"documents/{key}" for key in keys} <= stored
    # What the workers' steps printed is in the bucket too, where the control host's webserver reads it.
    assert s3.list_objects_v2(Bucket="hreg", Prefix="documents/dagster-compute-logs/")["KeyCount"] > 0
    for worker in WORKERS:
        home = cluster.data_dir / "hosts" / worker
        assert not (home / "documents").exists()
    assert cluster.celery_workers_of_steps() <= set(WORKERS)
    assert cluster.celery_workers_of_steps()
