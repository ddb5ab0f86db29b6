"""Shared fixtures: a real PostgreSQL (embedded, or HREG_TEST_DATABASE_URL) with a fresh,
migrated database per test, cloned from a template that is migrated once per session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from database_helpers import TEMPLATE_DB, fresh_database
from orchestration.db import embedded
from orchestration.db.engine import create_app_engine, ensure_database
from orchestration.db.migrate import upgrade
from orchestration.runtime.processes import reset_interrupt_signals
from orchestration.settings import Settings
from sample_register import start_sample_register_in_thread

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLES_DIR = REPO_ROOT.parent / "shared" / "samples"


def pytest_configure(config):
    # Started as a background job, the suite inherits SIGINT ignored; Dagster's in-process runs
    # would then make SIGTERM ignored too, for every pool and server the tests start later.
    reset_interrupt_signals()


@pytest.fixture(scope="session")
def samples_dir() -> Path:
    return SAMPLES_DIR


@pytest.fixture(scope="session")
def test_data_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hreg")


@pytest.fixture(scope="session")
def server_url(test_data_dir):
    """URL of the server's maintenance database ``postgres``."""
    external = os.environ.get("HREG_TEST_DATABASE_URL")
    if external:
        return make_url(external).set(drivername="postgresql+psycopg2", database="postgres")
    # A short path keeps the Unix socket under the 107-byte limit.
    pgdata = Path("/tmp") / f"hreg-test-pg-{os.getpid()}"
    url = make_url(embedded.server_url(pgdata, "postgres"))
    yield url
    embedded.stop(pgdata)


@pytest.fixture(scope="session")
def template_url(server_url):
    url = server_url.set(database=TEMPLATE_DB)
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{TEMPLATE_DB}" WITH (FORCE)'))
    admin.dispose()
    ensure_database(url)
    engine = create_app_engine(url)
    upgrade(engine, Settings())
    engine.dispose()
    return url


@pytest.fixture
def db_url(server_url, template_url, monkeypatch, test_data_dir):
    """A fresh migrated database for one test; HREG_DATABASE_URL points at it for subprocesses."""
    with fresh_database(server_url) as url:
        monkeypatch.setenv("HREG_DATABASE_URL", url.render_as_string(hide_password=False))
        monkeypatch.setenv("HREG_DATA_DIR", str(test_data_dir))
        yield url


@pytest.fixture
def settings(db_url, test_data_dir) -> Settings:
    """The configuration of a test's code location: its fresh database and the session's data dir.
    A test that needs another value builds ``build_definitions(settings.model_copy(update=...))``."""
    return Settings(database_url=db_url.render_as_string(hide_password=False), data_dir=test_data_dir)


@pytest.fixture
def engine(db_url):
    engine = create_app_engine(db_url)
    yield engine
    engine.dispose()


@pytest.fixture
def configured_sample_register(samples_dir, db_url, monkeypatch):
    """A sample register in a thread that HREG_REGISTER and HREG_REGISTER_URL point at, for runs that
    build their register client from the settings."""
    with start_sample_register_in_thread(samples_dir=samples_dir) as server:
        monkeypatch.setenv("HREG_REGISTER", "sample")
        monkeypatch.setenv("HREG_REGISTER_URL", server.url)
        yield server


@pytest.fixture
def sample_register_settings(settings, configured_sample_register) -> Settings:
    """The test's settings with the register pointed at the sample register in a thread."""
    return settings.model_copy(update={"register_kind": "sample", "register_url": configured_sample_register.url})
