"""`hreg db upgrade` brings Dagster's storage up to date as well as our schema: a Dagster database
left at the schema of an earlier Dagster release is migrated, with what it held."""

from __future__ import annotations

import dagster as dg
import dagster_postgres.run_storage.run_storage as postgres_run_storage
import sqlalchemy as sa
from alembic import command as alembic_command
from click.testing import CliRunner
from dagster_postgres.utils import pg_alembic_config

from orchestration.assembly.dagster_instance import write_instance_config
from orchestration.cli import main
from orchestration.db.engine import dagster_url
from orchestration.settings import Settings

# Dagster's storage revisions, read in dagster/_core/storage/alembic/versions: the newest of
# 1.13, and the one before 7e2f3204cf8e added concurrency_limits.using_default_limit.
DAGSTER_HEAD = "29b539ebc72a"
EARLIER_DAGSTER = "6b7fb194ff9c"


@dg.asset
def court_figures() -> int:
    return 1


def dagster_columns(url: sa.URL, table: str) -> set[str]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return {column["name"] for column in sa.inspect(conn).get_columns(table)}
    finally:
        engine.dispose()


def test_db_upgrade_migrates_dagsters_storage_from_an_earlier_release_and_keeps_its_runs(db_url, tmp_path):
    runner = CliRunner()
    first = runner.invoke(main, ["db", "upgrade"])
    assert first.exit_code == 0, first.output
    storage_url = dagster_url(Settings())
    assert f"Dagster's storage on {storage_url.render_as_string(hide_password=True)}:" in first.output
    assert f"run storage at revision {DAGSTER_HEAD} (current)" in first.output

    write_instance_config(tmp_path, storage_url, Settings())
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        run_id = dg.materialize([court_figures], instance=instance).run_id
        # The database as an earlier Dagster left it: one schema revision behind.
        # Alembic's downgrade on the storage's connection, as Dagster's own migration runs its upgrade.
        alembic_config = pg_alembic_config(postgres_run_storage.__file__)
        with instance.run_storage.connect() as conn:
            alembic_config.attributes["connection"] = conn
            alembic_command.downgrade(alembic_config, EARLIER_DAGSTER)
    assert "using_default_limit" not in dagster_columns(storage_url, "concurrency_limits")

    upgraded = runner.invoke(main, ["db", "upgrade"])
    assert upgraded.exit_code == 0, upgraded.output
    assert "Updating run storage..." in upgraded.output
    assert f"run storage migrated from revision {EARLIER_DAGSTER} to {DAGSTER_HEAD}" in upgraded.output
    assert "using_default_limit" in dagster_columns(storage_url, "concurrency_limits")
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        assert instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.SUCCESS
        assert instance.get_latest_materialization_event(dg.AssetKey("court_figures")).run_id == run_id
