"""`hreg db`: the database."""

from __future__ import annotations

import click

from orchestration.cli import cli_settings
from orchestration.db import embedded
from orchestration.db.engine import app_url, create_app_engine, dagster_url, ensure_database
from orchestration.db.migrate import current_revision, upgrade


@click.group()
def db() -> None:
    """The application database (embedded PostgreSQL unless HREG_DATABASE_URL is set)."""


@db.command("upgrade")
def upgrade_command() -> None:
    """Create the databases when needed and migrate ours and Dagster's storage to the newest schema."""
    settings = cli_settings()
    url = app_url(settings)
    ensure_database(url)
    engine = create_app_engine(url)
    upgrade(engine, settings)
    click.echo(f"schema at revision {current_revision(engine)} on {url.render_as_string(hide_password=True)}")
    # Dagster's storage, as `dagster instance migrate` would: imported here, since Dagster's import
    # costs every other command a second.
    from orchestration.assembly.dagster_instance import upgrade_storage

    storage_url = dagster_url(settings)
    click.echo(f"Dagster's storage on {storage_url.render_as_string(hide_password=True)}:")
    for storage in upgrade_storage(storage_url, settings, _echo_dagster_step):
        click.echo(f"  {storage.describe()}")


def _echo_dagster_step(line: str) -> None:
    # Dagster names every data migration it finds done already, on every upgrade.
    if not line.startswith("Skipping already applied"):
        click.echo(f"  {line}")


@db.command("url")
def url_command() -> None:
    """Print the application database URL (starting the embedded server when needed)."""
    click.echo(app_url(cli_settings()).render_as_string(hide_password=False))


@db.command("stop")
def stop_command() -> None:
    """Stop the embedded PostgreSQL server of this data dir."""
    settings = cli_settings()
    if settings.database_url:
        raise click.ClickException("HREG_DATABASE_URL is set: the server is external, not ours to stop.")
    click.echo("stopped" if embedded.stop(settings.pgdata_dir) else "not running")
