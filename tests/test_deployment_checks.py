"""What a process of a multi-host deployment checks before it works: a database server to work
against (no embedded one of its own), and a schema as new as its code."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest
import sqlalchemy as sa
from alembic import command

from orchestration.db.migrate import _alembic_config, head_revision, upgrade
from orchestration.definitions import build_definitions

HREG = Path(sys.executable).parent / "hreg"


def test_a_cluster_process_without_a_database_url_refuses_to_start_an_embedded_server(tmp_path):
    env = {**os.environ, "HREG_CLUSTER": "1", "HREG_DATABASE_URL": "", "HREG_DATA_DIR": str(tmp_path)}
    done = subprocess.run([str(HREG), "status"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "HREG_DATABASE_URL is empty" in done.stderr
    assert not (tmp_path / "postgres").exists()


@pytest.mark.parametrize("process", ["code location", "Celery worker"])
def test_a_cluster_process_without_a_database_url_refuses_to_load(process, tmp_path):
    program = {
        "code location": "from orchestration.definitions import build_definitions; build_definitions()",
        "Celery worker": "import orchestration.assembly.celery_app",
    }[process]
    env = {**os.environ, "HREG_CLUSTER": "1", "HREG_DATABASE_URL": "", "HREG_DATA_DIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "NoDatabaseServer: HREG_CLUSTER is set but HREG_DATABASE_URL is empty" in done.stderr
    assert not (tmp_path / "postgres").exists()


def tick(defs, sensor_name: str) -> str:
    with (
        dg.instance_for_test() as instance,
        dg.build_sensor_context(instance=instance, resources=defs.resources, definitions=defs) as context,
    ):
        result = defs.get_sensor_def(sensor_name).evaluate_tick(context)
    assert not result.run_requests
    return result.skip_message


def test_against_an_older_schema_the_location_loads_and_its_sensors_request_no_run(engine, settings):
    with engine.begin() as connection:
        command.downgrade(_alembic_config(connection), "-1")
    defs = build_definitions(settings)
    assert re.search(rf"this code needs {head_revision()}: run `hreg db upgrade`", tick(defs, "xml_parsing_sensor"))

    upgrade(engine, settings)
    assert tick(defs, "xml_parsing_sensor") == "no due xml_parsing jobs"


def test_with_a_parser_version_not_synced_the_sensors_request_no_run(engine, settings):
    with engine.begin() as connection:
        connection.execute(sa.text("UPDATE processing.job_types SET current_version = 'v0' WHERE type = 'xml_parsing'"))
    message = tick(build_definitions(settings), "basic_discovery_sensor")
    assert re.search(r"xml_parsing version v0.*run `hreg db upgrade`", message)
