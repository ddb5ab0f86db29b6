"""The multi-host layout for real, as `scripts/cluster.sh` starts it on this machine: PostgreSQL
over TCP with a password, Redis, moto's S3 server, a code server of its own, the webserver and
daemon, and two Celery workers with their own data dirs. One cluster serves the whole module
(it costs minutes to start); the tests run in file order and the last one stops it."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import boto3
import pytest
import sqlalchemy as sa

from orchestration.cluster import PostgresServer, postgres_base
from orchestration.db.engine import create_app_engine
from orchestration.devstack import group_members
from process_helpers import wait_until
from sample_register.corpus import load_corpus

# The first test's bound includes the cluster's start (minutes on a busy 2-core machine); every
# wait inside has a bound of its own.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]

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

    def _celery_workers(self, where: str = "") -> list[str]:
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
        return set(self._celery_workers())

    def worker_of_a_running_step(self) -> str | None:
        return next(iter(self._celery_workers("AND r.status = 'STARTED'")), None)

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


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("cluster")
    env = {name: value for name, value in os.environ.items() if name not in OUTSIDE}
    # Every document goes to the object store, so that no file on a worker's disk can go unnoticed.
    env.update({"HREG_DATA_DIR": str(data_dir), "HREG_DOCUMENT_INLINE_LIMIT_BYTES": "0"})
    # A dead worker's step goes to the other worker two minutes on, not Celery's default hour.
    env["HREG_CELERY_VISIBILITY_TIMEOUT_S"] = "120"
    with open(data_dir / "cluster.out", "ab") as out:
        process = subprocess.Popen(
            [str(REPO_ROOT / "scripts" / "cluster.sh"), "--workers", str(len(WORKERS))],
            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
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


@pytest.fixture(scope="module")
def corpus():
    return load_corpus()


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


def test_a_search_to_its_shareholders_runs_on_the_workers_with_documents_in_the_object_store(cluster, corpus):
    (company,) = unique_companies(corpus, 1, lambda c: c.legal_form == "GmbH" and c.files_shareholder_lists)
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
    for worker in WORKERS:
        home = cluster.data_dir / "hosts" / worker
        assert not (home / "documents").exists()
    assert cluster.celery_workers_of_steps() <= set(WORKERS)
    assert cluster.celery_workers_of_steps()


def test_a_worker_killed_mid_run_leaves_its_jobs_to_the_other_each_done_once(cluster, corpus):
    companies = unique_companies(corpus, 12, lambda c: c.legal_form == "GmbH")[1:]
    for company in companies:
        cluster.hreg("search", "--mode", "exact", company.name)

    def a_worker_holding_jobs() -> str | None:
        with cluster.engine.connect() as conn:
            running = conn.execute(
                sa.text("SELECT count(*) FROM processing.processing_jobs WHERE status = 'running'")
            ).scalar_one()
        return running and cluster.worker_of_a_running_step()

    victim = wait_until(a_worker_holding_jobs, 600, "a worker to claim jobs")
    victims_runs = cluster.started_runs_on(victim)
    os.killpg(cluster.pids()[victim], signal.SIGKILL)

    wait_until(lambda: jobs_done(cluster), 1200, "every job to finish after the worker died")
    # The step the dead worker never acknowledged goes to the other worker after the visibility
    # timeout: its run ends instead of waiting for the step's result for good.
    assert victims_runs
    wait_until(
        lambda: "STARTED" not in cluster.run_statuses(victims_runs).values(), 900, "the dead worker's runs to end"
    )
    assert set(cluster.run_statuses(victims_runs).values()) <= {"SUCCESS", "FAILURE"}
    with cluster.engine.connect() as conn:
        completions = conn.execute(
            sa.text("""
                SELECT j.id, j.status, count(h.id) FILTER (WHERE h.status = 'completed') AS completions
                  FROM processing.processing_jobs j
                  LEFT JOIN processing.job_step_history h ON h.job_id = j.id
                 GROUP BY j.id, j.status
            """)
        ).all()
    assert completions and all(row.status == "completed" and row.completions == 1 for row in completions), completions
    assert cluster.celery_workers_of_steps() == set(WORKERS)


def test_postgresql_restarted_mid_run_loses_no_job_and_leaves_no_run_running(cluster, corpus):
    companies = unique_companies(corpus, 16, lambda c: c.legal_form == "GmbH")[12:]
    for company in companies:
        cluster.hreg("search", "--mode", "exact", company.name)
    wait_until(lambda: cluster.worker_of_a_running_step(), 600, "a run to execute a step")
    url = sa.make_url(cluster.env["HREG_DATABASE_URL"])
    PostgresServer(postgres_base(cluster.data_dir), url.port, url.password).restart()

    wait_until(lambda: jobs_done(cluster), 1200, "the queue to recover after the restart")
    for company in companies:
        assert entity_status(cluster, company.name).processing_status == "parsed"
    in_progress = {"QUEUED", "NOT_STARTED", "STARTING", "STARTED", "CANCELING"}
    wait_until(
        lambda: not in_progress & set(cluster.run_statuses().values()), 900, "every run to end after the restart"
    )
    with cluster.engine.connect() as conn:
        jobs = conn.execute(
            sa.text("""
                SELECT j.id, j.status, j.failure_class,
                       count(h.id) FILTER (WHERE h.status = 'completed') AS completions
                  FROM processing.processing_jobs j
                  LEFT JOIN processing.job_step_history h ON h.job_id = j.id
                 GROUP BY j.id, j.status, j.failure_class
            """)
        ).all()
    # Every job is done exactly once, or failed with a class that says why.
    assert jobs and all(
        (j.status == "completed" and j.completions == 1) or (j.status == "failed" and j.failure_class) for j in jobs
    ), jobs


def test_a_restarted_code_server_is_reached_again_by_the_webserver_and_the_daemon(cluster, corpus):
    old = cluster.pids()["code-server"]
    os.killpg(old, signal.SIGKILL)
    wait_until(lambda: cluster.pids()["code-server"] != old, 120, "cluster.sh to start the code server again")
    (company,) = unique_companies(corpus, 17, lambda c: c.legal_form == "GmbH")[16:]
    cluster.hreg("search", "--mode", "exact", company.name)
    wait_until(
        lambda: (row := entity_status(cluster, company.name)) and row.processing_status == "parsed",
        900,
        "the daemon to run a search through the new code server",
    )


def test_stopping_the_cluster_leaves_no_process_behind(cluster):
    groups = list(cluster.pids().values())
    os.killpg(cluster.process.pid, signal.SIGINT)
    assert cluster.process.wait(300) == 0
    assert [pid for group in groups for pid in group_members(group)] == []
    # PostgreSQL runs detached (pg_ctl), outside the groups: its data dir names it.
    for marker in (str(cluster.data_dir), str(postgres_base(cluster.data_dir))):
        assert subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout == ""
