"""What a process of a multi-host deployment checks before it works: a database server to work
against (no embedded one of its own), and a schema as new as its code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command

from database_helpers import clear_process_caches
from orchestration.db.migrate import _alembic_config, head_revision, upgrade
from orchestration.definitions import SchemaBehind, build_definitions
from orchestration.settings import Settings

HREG = Path(sys.executable).parent / "hreg"


def test_a_cluster_process_without_a_database_url_refuses_to_start_an_embedded_server(tmp_path):
    env = {**os.environ, "HREG_CLUSTER": "1", "HREG_DATABASE_URL": "", "HREG_DATA_DIR": str(tmp_path)}
    done = subprocess.run([str(HREG), "status"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "HREG_DATABASE_URL is empty" in done.stderr
    assert not (tmp_path / "postgres").exists()


def test_the_code_location_refuses_to_load_against_an_older_schema(engine):
    with engine.begin() as connection:
        command.downgrade(_alembic_config(connection), "-1")
    with pytest.raises(SchemaBehind, match=rf"this code needs {head_revision()}: run `hreg db upgrade`"):
        build_definitions()

    upgrade(engine, Settings())
    assert build_definitions().resolve_job_def("xml_parsing_job").name == "xml_parsing_job"


def test_the_code_location_refuses_to_load_when_a_parser_version_is_not_synced(engine):
    with engine.begin() as connection:
        connection.execute(sa.text("UPDATE processing.job_types SET current_version = 'v0' WHERE type = 'xml_parsing'"))
    clear_process_caches()
    with pytest.raises(SchemaBehind, match=r"xml_parsing version v0.*run `hreg db upgrade`"):
        build_definitions()
