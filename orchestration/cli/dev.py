"""`hreg dev`: the main job, everything on one machine, until Ctrl-C."""

from __future__ import annotations

import logging
import signal
import time

import click

from orchestration.cli import cli_settings
from orchestration.db import embedded
from orchestration.stacks import devstack

# The first search the ready line suggests: one that finds companies on the sample register
# (tests/test_first_look.py runs it there).
FIRST_SEARCH = "Bau GmbH"


def _echo_problem(name: str, line: str) -> None:
    click.echo(f"[{name}] {line}", err=True)


@click.command()
@click.option("--no-webserver", is_flag=True, help="Run only the daemon (sensors and runs), no UI.")
def dev(no_webserver: bool) -> None:
    """Start PostgreSQL (embedded unless HREG_DATABASE_URL), migrate, and run the sample register
    (when HREG_REGISTER=sample), the Dagster daemon, the webserver and the Prometheus endpoint
    (HREG_METRICS_PORT); Ctrl-C stops everything.

    The children's output goes to HREG_DATA_DIR/logs/; the terminal shows their warnings and errors."""
    # Start-up, addresses, warnings and errors: not every migration step or readiness poll.
    for chatty in ("alembic", "httpx"):
        logging.getLogger(chatty).setLevel(logging.WARNING)
    settings = cli_settings()
    log_dir = settings.resolved_data_dir / "logs"
    click.echo(f"data dir: {settings.resolved_data_dir}")
    stack = devstack.prepare(settings)
    click.echo(f"database: {stack.app_url.render_as_string(hide_password=True)} (migrated)")
    click.echo(f"dagster storage: {stack.dagster_url.database}, DAGSTER_HOME={stack.dagster_home}")

    def _stop(*_args) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _stop)
    try:
        if settings.register_kind == "sample":
            click.echo(f"sample register: {devstack.start_sample_register(stack, log_dir, _echo_problem)}")
        else:
            click.echo(f"register: live portal at {settings.register_base_url}")
        click.echo(f"logs: {log_dir}/ (daemon, webserver, metrics, sample register)")
        devstack.start_dagster(stack, webserver=not no_webserver, log_dir=log_dir, echo=_echo_problem)
        if not no_webserver:
            click.echo(f"Dagster UI: {stack.webserver_url}")
        if settings.metrics_port:
            click.echo(f"metrics: {devstack.start_metrics(stack, log_dir, _echo_problem)}")
        click.echo(f'ready: try `.venv/bin/hreg search "{FIRST_SEARCH}"` in another shell; Ctrl-C stops')
        while True:
            for name, process in stack.processes.items():
                if process.poll() is not None:
                    raise click.ClickException(f"{name} exited with {process.returncode}; see {log_dir / name}.log")
            time.sleep(1)
    except KeyboardInterrupt:
        click.echo("stopping…")
    finally:
        devstack.stop(stack)
        if not settings.database_url:
            embedded.stop(settings.pgdata_dir)
        click.echo("stopped")
