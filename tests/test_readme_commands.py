"""The README's commands as a newcomer runs them: `./scripts/dev.sh` on a fresh data dir, a search
from another shell with `.venv/bin/hreg`, Ctrl-C; and `hreg db upgrade` on a server that has no
database of ours yet."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from orchestration.db.migrate import head_revision
from process_helpers import REPO_ROOT, free_port, hreg, newcomer_env, processes_with, wait_until

pytestmark = pytest.mark.slow


@pytest.fixture
def data_dir():
    # A short path: the embedded server's Unix socket lives in it, under a 107-byte limit.
    path = Path(tempfile.mkdtemp(prefix="hreg-dev-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


# The one test that starts everything from nothing (a new embedded server, every migration, the
# whole stack, a search through its runs): on a busy machine that takes longer than most.
@pytest.mark.timeout(900)
def test_dev_sh_serves_a_search_from_the_cli_and_ctrl_c_leaves_no_process(data_dir):
    env = newcomer_env(
        HREG_DATA_DIR=str(data_dir),
        HREG_SAMPLE_REGISTER_PORT=str(free_port()),
        HREG_WEBSERVER_PORT=str(free_port()),
        HREG_METRICS_PORT=str(free_port()),
    )
    output = data_dir.parent / f"{data_dir.name}.out"
    with output.open("wb") as out:
        # A session of its own, like a terminal's foreground job: Ctrl-C goes to its whole group.
        dev = subprocess.Popen(
            ["./scripts/dev.sh"], cwd=REPO_ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        wait_until(lambda: b"ready:" in output.read_bytes() or dev.poll() is not None, 360, "dev.sh to be ready")
        assert dev.poll() is None, output.read_text()[-3000:]
        terminal = output.read_text()
        ui = f"http://127.0.0.1:{env['HREG_WEBSERVER_PORT']}"
        assert f"Dagster UI: {ui}" in terminal
        # A first look without noise: no newsletter modal on the UI's first page.
        nux = httpx.post(f"{ui}/graphql", json={"query": "{ shouldShowNux }"}, timeout=60).json()
        assert nux == {"data": {"shouldShowNux": False}}
        assert f"metrics: http://127.0.0.1:{env['HREG_METRICS_PORT']}/metrics" in terminal

        # In another shell, the search the ready line suggests, as the README goes on.
        [suggested] = re.findall(r'ready: try `\.venv/bin/hreg search "([^"]+)"`', terminal)
        created = hreg(env, "search", suggested).stdout
        search_id = created.split()[created.split().index("search") + 1]

        def first_results_parsed():
            shown = json.loads(hreg(env, "search", "show", search_id, "--json").stdout)
            results = shown["results"]
            # The sample register's rule: a search opens its first ten results.
            statuses = [r["processing_status"] for r in results[:10]]
            if shown["search"]["status"] == "completed" and statuses and set(statuses) == {"parsed"}:
                return results[:10]
            print(f"search {shown['search']['status']}, its first results {statuses}")
            return None

        parsed = wait_until(first_results_parsed, 300, "the search's first results to be parsed")
        company = hreg(env, "entity", "show", str(parsed[0]["id"])).stdout
        assert parsed[0]["name"] in company

        # What Ctrl-C must stop: the embedded server and the code servers are among it.
        running = processes_with(str(data_dir))
        assert any(" -D " in cmd and "postgres" in cmd for cmd in running.values()), running
        wait_until(
            lambda: any("api grpc" in cmd for cmd in processes_with(str(data_dir)).values()), 60, "a code server"
        )

        os.killpg(dev.pid, signal.SIGINT)  # Ctrl-C
        assert dev.wait(timeout=120) == 0, output.read_text()[-3000:]
        # The terminal showed warnings worth a look, not the beta parameters we use on purpose.
        assert "BetaWarning" not in output.read_text()
        # Nothing of the stack is left: not the embedded PostgreSQL, the sample register, the
        # daemon, the webserver, nor a code server either of them started.
        deadline = time.monotonic() + 30
        while processes_with(str(data_dir)) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert processes_with(str(data_dir)) == {}
    finally:
        for pid in processes_with(str(data_dir)):
            os.kill(pid, signal.SIGKILL)
        if dev.poll() is None:
            dev.kill()
        for log in (output, *sorted((data_dir / "logs").glob("*.log"))):
            print(f"--- {log.name} (tail)\n{log.read_text(errors='replace')[-3000:]}")
        output.unlink()


def test_db_upgrade_creates_and_migrates_a_database_the_server_does_not_have(server_url, tmp_path):
    name = f"hreg_upgrade_{uuid.uuid4().hex[:8]}"
    url = server_url.set(database=name)
    env = newcomer_env(HREG_DATABASE_URL=url.render_as_string(hide_password=False), HREG_DATA_DIR=str(tmp_path))
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            assert not conn.execute(sa.text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}).first()

        first = hreg(env, "db", "upgrade").stdout
        assert f"schema at revision {head_revision()} on " in first
        # The CLI works on it: the queue is there, empty.
        assert "Traceback" not in hreg(env, "status").stdout
        engine = sa.create_engine(url)
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM processing.processing_jobs")).scalar_one() == 0
            assert conn.execute(sa.text("SELECT count(*) FROM processing.job_types")).scalar_one() > 0
        engine.dispose()
        # Again: nothing left to do, the same revision.
        assert hreg(env, "db", "upgrade").stdout == first
    finally:
        with admin.connect() as conn:
            for database in (name, f"{name}_dagster"):
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
        admin.dispose()
