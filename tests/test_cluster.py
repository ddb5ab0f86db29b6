"""The multi-host layout for real, as `scripts/cluster.sh --isolated-hosts` starts it on this
machine: PostgreSQL over TCP with a password, Redis, moto's S3 server, a code server of its own,
the webserver and daemon, and two Celery workers, each a host of its own (network and mount
namespaces: a private /tmp and data dir, the services only at their address on the test network).
One cluster serves the whole module (it costs minutes to start); the tests run in file order and
the last one stops it."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from cluster_helpers import (
    WORKERS,
    entity_status,
    jobs_done,
    running_cluster,
    search_to_shareholders,
    unique_companies,
)
from orchestration.stacks.cluster import PostgresServer, postgres_base
from orchestration.stacks.devstack import group_members
from process_helpers import wait_until
from sample_register.corpus import load_corpus

# The first test's bound includes the cluster's start (minutes on a busy 2-core machine); every
# wait inside has a bound of its own.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if os.geteuid() != 0:
        pytest.fail("the cluster tests run each worker host in namespaces of its own, which takes root")
    # A dead worker's step goes to the other worker two minutes on, not Celery's default hour.
    env = {"HREG_CELERY_VISIBILITY_TIMEOUT_S": "120"}
    with running_cluster(tmp_path_factory.mktemp("cluster"), "--isolated-hosts", env=env) as c:
        yield c


def on_host(cluster, worker: str, *argv: str) -> subprocess.CompletedProcess:
    """``argv`` run inside ``worker``'s host: its network and mount namespaces."""
    pid = str(cluster.pids()[worker])
    return subprocess.run(["nsenter", "-t", pid, "-n", "-m", *argv], capture_output=True, text=True, timeout=60)


def names_on_host(cluster, worker: str, directory: Path) -> set[str]:
    listing = on_host(cluster, worker, "ls", "-A", str(directory))
    assert listing.returncode == 0, listing.stderr
    return set(listing.stdout.split())


@pytest.fixture(scope="module")
def corpus():
    return load_corpus()


def test_a_search_to_its_shareholders_runs_on_the_workers_with_documents_in_the_object_store(cluster, corpus):
    (company,) = unique_companies(corpus, 1, lambda c: c.legal_form == "GmbH" and c.files_shareholder_lists)
    search_to_shareholders(cluster, company)


def test_a_worker_host_shares_no_disk_and_reaches_the_services_only_on_the_test_network(cluster, tmp_path):
    services = sa.make_url(cluster.env["HREG_DATABASE_URL"]).host
    assert services != "127.0.0.1"
    marker = Path(tempfile.mkstemp(prefix="hreg-control-host-")[1])
    control_home = cluster.data_dir / "hosts" / "control"
    try:
        for worker in WORKERS:
            # Of the cluster's data dir (logs, cluster.env, every host's directory) and of /tmp, the
            # host sees only the way to its own directory.
            # (The steps' logs go to the object store, where the control host's webserver reads them.)
            assert names_on_host(cluster, worker, cluster.data_dir) == {"hosts"}
            assert names_on_host(cluster, worker, cluster.data_dir / "hosts") == {worker}
            assert "celery.yaml" in names_on_host(cluster, worker, cluster.data_dir / "hosts" / worker)
            for path in (control_home, marker, tmp_path):
                assert path.exists()
                assert on_host(cluster, worker, "test", "-e", str(path)).returncode == 1, path
            # Every connection of the host goes to the services' address on the test network.
            sockets = on_host(cluster, worker, "ss", "-Htn", "state", "established").stdout.split("\n")
            peers = {line.split()[-1].rsplit(":", 1)[0] for line in sockets if line.strip()}
            assert peers == {services}, sockets
    finally:
        marker.unlink()


def test_a_worker_killed_mid_run_leaves_its_jobs_to_the_other_each_done_once(cluster, corpus):
    companies = unique_companies(corpus, 12, lambda c: c.legal_form == "GmbH")[1:]
    # Each download answers after seconds, as the portal's do at busy times: a worker is certain to
    # hold a job when the test looks, however fast the machine works the rest of the pipeline.
    slow_downloads = {"kind": "slow", "delay_s": 6, "on": "download", "times": len(companies)}
    httpx.post(cluster.env["HREG_REGISTER_URL"] + "/_sample/faults", json=slow_downloads).raise_for_status()
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
