"""`hreg sample-register` and `hreg register …`: the register from the command line."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from orchestration.db.engine import get_engine
from orchestration.failures import JobError
from orchestration.register import SearchMode, make_register_client
from orchestration.register.sample import serve
from orchestration.register.sample.corpus import DEFAULT_GENERATED_COUNT, DEFAULT_SEED
from orchestration.settings import get_settings


@click.command("sample-register")
@click.option("--port", type=int, default=None, help="Port to listen on (default: HREG_SAMPLE_REGISTER_PORT).")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--samples-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Directory with xjustiz/*.xml (default: ../shared/samples beside the repository).")  # fmt: skip
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Seed of the generated companies.")
@click.option("--generated", type=int, default=DEFAULT_GENERATED_COUNT, show_default=True, help="Generated companies.")
def sample_register(port: int | None, host: str, samples_dir: Path | None, seed: int, generated: int) -> None:
    """Serve the sample register: a local imitation of the register portal."""
    serve(port or get_settings().sample_register_port, host=host, samples_dir=samples_dir, seed=seed, generated=generated)


@click.group()
def register() -> None:
    """Use the configured register (HREG_REGISTER, HREG_REGISTER_URL)."""


def _client():
    return make_register_client(get_settings(), get_engine())


def _fail(exc: JobError) -> None:
    click.echo(f"error: {exc}", err=True)
    sys.exit(1)


@register.command("search")
@click.argument("query")
@click.option("--mode", type=click.Choice([m.value for m in SearchMode]), default="all", show_default=True)
@click.option("--max", "max_results", type=click.IntRange(1, 100), default=10, show_default=True)
@click.option("--register-type", type=click.Choice(["HRA", "HRB", "GnR", "PR", "VR"]), default=None)
@click.option("--court", default=None, help="Court code (D2601) or name (München).")
@click.option("--include-deleted", is_flag=True)
def search(query: str, mode: str, max_results: int, register_type: str | None, court: str | None, include_deleted: bool) -> None:
    """Print the result rows of a search as JSON lines."""
    try:
        with _client() as client:
            rows = client.search(
                query, mode, register_type=register_type, court=court, include_deleted=include_deleted, max_results=max_results
            )
    except JobError as exc:
        _fail(exc)
    for row in rows:
        click.echo(row.model_dump_json())


@register.command("download-si")
@click.argument("court_code")
@click.argument("register_type", type=click.Choice(["HRA", "HRB", "GnR", "PR", "VR"]))
@click.argument("number")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True, help="File to write.")
def download_si(court_code: str, register_type: str, number: str, output: Path) -> None:
    """Save the SI document (XJustiz XML) of COURT_CODE TYPE NUMBER, e.g. D2601 HRB 218585."""
    try:
        with _client() as client:
            rows = client.search(
                "", court=court_code, register_type=register_type, register_number=number, include_deleted=True, max_results=100
            )
            row = next((r for r in rows if r.register_number == number), None)
            if row is None:
                click.echo(f"error: {court_code} {register_type} {number} is not in the register", err=True)
                sys.exit(1)
            content, filename = client.download_si(row)
    except JobError as exc:
        _fail(exc)
    output.write_bytes(content)
    click.echo(f"{output} ({len(content)} bytes; the register calls it {filename})")
