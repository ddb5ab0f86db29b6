"""`hreg metrics`: the Prometheus endpoint, /metrics, until stopped."""

from __future__ import annotations

import os

import click
from prometheus_client import start_http_server

from orchestration.cli import cli_engine, cli_settings


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every interface).")
@click.option("--port", type=int, default=None, help="Port to listen on (default: HREG_METRICS_PORT).")
def metrics(host: str, port: int | None) -> None:
    """Serve the queue, the dead letter, the register's rate limit and Dagster's failed runs as
    Prometheus metrics at /metrics, read from the databases on each scrape (docs/deployment.md)."""
    from orchestration.assembly.run_metrics import metrics_registry  # Dagster, for this command only

    settings = cli_settings()
    port = settings.metrics_port if port is None else port
    if not port:
        raise click.UsageError("no port: HREG_METRICS_PORT is 0 and --port was not given")
    # Dagster's instance of `hreg dev` when no DAGSTER_HOME says otherwise.
    os.environ.setdefault("DAGSTER_HOME", str(settings.dagster_home))
    server, thread = start_http_server(port, addr=host, registry=metrics_registry(cli_engine()))
    click.echo(f"metrics: http://{host}:{server.server_port}/metrics")
    thread.join()
