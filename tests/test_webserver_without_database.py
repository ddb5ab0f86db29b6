"""The real webserver and daemon while the application's PostgreSQL is stopped: the code location
loads, the sensors' ticks say the database is unreachable, and they work again once it is back.

The application database runs on an embedded server of its own, so that stopping it leaves
Dagster's storage (on the suite's server) running, as in a deployment where they are apart.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from orchestration.assembly.dagster_instance import ensure_storage, write_instance_config
from orchestration.db import embedded
from orchestration.db.engine import create_app_engine, ensure_database
from orchestration.db.migrate import upgrade
from orchestration.settings import Settings
from orchestration.stacks import devstack
from orchestration.webserver.backfills import webserver_graphql
from process_helpers import free_port, wait_until

pytestmark = pytest.mark.slow

LOCATION = "handelsregister"
SENSOR_TICK = """
query Tick($selector: SensorSelector!) {
  sensorOrError(sensorSelector: $selector) {
    __typename
    ... on Sensor { sensorState { ticks(limit: 1) { status skipReason error { message } } } }
    ... on PythonError { message }
  }
}
"""
RELOAD = """
mutation Reload($name: String!) {
  reloadRepositoryLocation(repositoryLocationName: $name) {
    __typename
    ... on WorkspaceLocationEntry { loadStatus locationOrLoadError { __typename ... on PythonError { message } } }
    ... on PythonError { message }
  }
}
"""


def in_another_process(call: str, pgdata: Path) -> None:
    """``embedded.<call>(pgdata)`` in a process of its own: pgserver keeps one handle per data dir
    in a process, and a handle whose server was stopped does not start it again."""
    code = f"from pathlib import Path; from orchestration.db import embedded; embedded.{call}(Path({str(pgdata)!r}))"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=devstack.PROJECT_ROOT, timeout=120)


@pytest.fixture
def stack(server_url, tmp_path):
    # A short path keeps the server's Unix socket in its data dir, so it has the same URL after a restart.
    pgdata = Path("/tmp") / f"hreg-nodb-{os.getpid()}"
    app_url = make_url(embedded.server_url(pgdata, embedded.APP_DATABASE))
    storage_url = server_url.set(database=f"hreg_nodb_dagster_{uuid.uuid4().hex[:8]}")
    settings = Settings(
        database_url=app_url.render_as_string(hide_password=False), data_dir=tmp_path, webserver_port=free_port()
    )
    ensure_database(app_url)
    ensure_storage(storage_url)
    engine = create_app_engine(app_url)
    upgrade(engine, settings)
    engine.dispose()
    write_instance_config(settings.dagster_home, storage_url, settings)
    stack = devstack.Stack(
        settings=settings, app_url=app_url, dagster_url=storage_url, dagster_home=settings.dagster_home
    )
    try:
        devstack.start_dagster(stack, log_dir=tmp_path / "logs")
        yield stack, pgdata
    finally:
        devstack.stop(stack)
        in_another_process("stop", pgdata)
        admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{storage_url.database}" WITH (FORCE)'))
        admin.dispose()
        for log_file in sorted((tmp_path / "logs").glob("*.log")):
            print(f"--- {log_file.name} (tail)\n{log_file.read_text(errors='replace')[-3000:]}")


def last_tick(stack: devstack.Stack, sensor: str) -> dict | None:
    selector = {"repositoryLocationName": LOCATION, "repositoryName": "__repository__", "sensorName": sensor}
    found = webserver_graphql(stack.webserver_url, SENSOR_TICK, {"selector": selector})["sensorOrError"]
    if found["__typename"] != "Sensor":
        return None  # the location is still loading
    ticks = found["sensorState"]["ticks"]
    return ticks[0] if ticks else None


def wait_for_skip(stack: devstack.Stack, sensor: str, starts: str) -> str:
    def skipped():
        tick = last_tick(stack, sensor)
        assert tick is None or tick["error"] is None, tick  # never a traceback
        if tick and tick["status"] == "SKIPPED" and tick["skipReason"].startswith(starts):
            return tick["skipReason"]
        return None

    return wait_until(skipped, 180, f"a tick of {sensor} skipped with {starts!r}")


def test_the_location_loads_and_says_so_while_postgresql_is_stopped_and_recovers(stack):
    stack, pgdata = stack
    wait_for_skip(stack, "xml_parsing_sensor", "no due xml_parsing jobs")

    assert embedded.stop(pgdata)
    # The reload answers once the location has loaded again, which takes long on a busy machine.
    response = httpx.post(
        f"{stack.webserver_url}/graphql", json={"query": RELOAD, "variables": {"name": LOCATION}}, timeout=300
    )
    reloaded = response.json()["data"]["reloadRepositoryLocation"]
    assert reloaded["__typename"] == "WorkspaceLocationEntry", reloaded
    assert reloaded["locationOrLoadError"]["__typename"] == "RepositoryLocation", reloaded
    message = wait_for_skip(stack, "xml_parsing_sensor", "database unavailable: cannot reach the database")
    assert "HREG_DATABASE_URL" in message
    wait_for_skip(stack, "lease_reaper_sensor", "database unavailable: cannot reach the database")

    in_another_process("ensure_running", pgdata)
    wait_for_skip(stack, "xml_parsing_sensor", "no due xml_parsing jobs")
    wait_for_skip(stack, "lease_reaper_sensor", "reaped 0 expired leases")
