"""`hreg sample-register` and `hreg register …`: the register from the command line."""

from __future__ import annotations

import json
import sys
from datetime import date, timedelta
from pathlib import Path

import click

from orchestration.cli import cli_engine, cli_settings
from orchestration.records.documents import is_zip, unpack_zip
from orchestration.register import RegisterClient, ResultRow, SearchMode, register_client_for
from orchestration.register.results import (
    ANNOUNCEMENT_CATEGORIES,
    REGISTER_TYPES,
    Download,
    documents_with_folders,
    walk_nodes,
)
from orchestration.runtime.failures import JobError


@click.command("sample-register")
@click.option("--port", type=int, default=None, help="Port to listen on (default: HREG_SAMPLE_REGISTER_PORT).")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option(
    "--samples-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Directory with xjustiz/*.xml (default: ../shared/samples beside the repository).",
)
@click.option(
    "--seed", type=int, default=None, help="Seed of the generated companies (default: the sample register's)."
)
@click.option("--generated", type=int, default=None, help="Generated companies (default: the sample register's).")
def sample_register(
    port: int | None, host: str, samples_dir: Path | None, seed: int | None, generated: int | None
) -> None:
    """Serve the sample register: a local imitation of the register portal."""
    # Imported where it runs: the product does not depend on the sample world.
    from sample_register import serve

    corpus = {name: value for name, value in (("seed", seed), ("generated", generated)) if value is not None}
    serve(port or cli_settings().sample_register_port, host=host, samples_dir=samples_dir, **corpus)


@click.group()
def register() -> None:
    """Use the configured register (HREG_REGISTER, HREG_REGISTER_URL)."""


def _client():
    return register_client_for(cli_settings(), cli_engine())


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
def search(
    query: str, mode: str, max_results: int, register_type: str | None, court: str | None, include_deleted: bool
) -> None:
    """Print the result rows of a search as JSON lines."""
    try:
        with _client() as client:
            rows = client.search(
                query,
                mode,
                register_type=register_type,
                court=court,
                include_deleted=include_deleted,
                max_results=max_results,
            )
    except JobError as exc:
        _fail(exc)
    for row in rows:
        click.echo(row.model_dump_json())


def _find_row(client: RegisterClient, court_code: str, register_type: str, number: str) -> ResultRow:
    rows = client.search(
        "", court=court_code, register_type=register_type, register_number=number, include_deleted=True, max_results=100
    )
    row = next((r for r in rows if r.register_number == number), None)
    if row is None:
        click.echo(f"error: {court_code} {register_type} {number} is not in the register", err=True)
        sys.exit(1)
    return row


def _save(directory: Path, download: Download) -> list[Path]:
    """Save a download under the portal's file name; a ZIP is unpacked beside it, safely."""
    directory.mkdir(parents=True, exist_ok=True)
    # The name comes from the portal's header: only its last part, never a path.
    target = directory / (Path(download.filename.replace("\\", "/")).name or "download")
    target.write_bytes(download.content)
    saved = [target]
    if download.media_type == "application/zip" or is_zip(download.content):
        for file in unpack_zip(download.content, download.filename):
            path = directory / file.filename
            path.write_bytes(file.content)
            saved.append(path)
    return saved


court_argument = click.argument("court_code")
type_argument = click.argument("register_type", type=click.Choice(REGISTER_TYPES))
number_argument = click.argument("number")


@register.command("download-si")
@court_argument
@type_argument
@number_argument
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True, help="File to write.")
def download_si(court_code: str, register_type: str, number: str, output: Path) -> None:
    """Save the SI document (XJustiz XML) of COURT_CODE TYPE NUMBER, e.g. D2601 HRB 218585."""
    try:
        with _client() as client:
            content, filename = client.download_si(_find_row(client, court_code, register_type, number))
    except JobError as exc:
        _fail(exc)
    output.write_bytes(content)
    click.echo(f"{output} ({len(content)} bytes; the register calls it {filename})")


@register.command("documents")
@court_argument
@type_argument
@number_argument
def documents(court_code: str, register_type: str, number: str) -> None:
    """Print the DK tree (document view) of COURT_CODE TYPE NUMBER as JSON: every document with its
    row key, label, the folders it sits in and the date of its label."""
    try:
        with _client() as client:
            row = _find_row(client, court_code, register_type, number)
            nodes = client.list_documents(row)
    except JobError as exc:
        _fail(exc)
    tree = {
        "company": row.model_dump(mode="json"),
        "documents": [
            {
                "row_key": node.row_key,
                "label": node.label,
                "folders": folders,
                "date": node.date.isoformat() if node.date else None,
            }
            for node, folders in documents_with_folders(nodes)
        ],
        "tree": [node.model_dump(mode="json") for node in nodes],
    }
    click.echo(json.dumps(tree, ensure_ascii=False, indent=2))


@register.command("download")
@court_argument
@type_argument
@number_argument
@click.option(
    "--kind",
    type=click.Choice(["AD", "CD", "HD", "SI", "DK", "UT", "VÖ"]),
    required=True,
    help="AD/CD/HD printouts, SI (XJustiz XML), DK documents, UT/VÖ pages.",
)
@click.option("--document", "row_key", default=None, help="DK: the row key of one document (see `register documents`).")
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), required=True, help="Directory.")
def download(court_code: str, register_type: str, number: str, kind: str, row_key: str | None, output: Path) -> None:
    """Save a document of COURT_CODE TYPE NUMBER under the name the portal gives it.

    DK without --document saves every document of the tree; a document the tree lists in several
    folders under one label is fetched once. ZIPs are unpacked beside the archive."""
    saved: list[Path] = []
    try:
        with _client() as client:
            row = _find_row(client, court_code, register_type, number)
            if kind != "DK":
                if row_key:
                    raise click.UsageError("--document is for --kind DK")
                saved += _save(output, client.download(row, kind))
            else:
                nodes = [n for n in walk_nodes(client.list_documents(row)) if n.kind == "document"]
                if row_key:
                    nodes = [n for n in nodes if n.row_key == row_key]
                    if not nodes:
                        click.echo(f"error: the DK tree has no document {row_key}", err=True)
                        sys.exit(1)
                seen: set[str] = set()
                for node in nodes:
                    if node.label not in seen:
                        seen.add(node.label)
                        saved += _save(output, client.download_document(row, node))
    except JobError as exc:
        _fail(exc)
    for path in saved:
        click.echo(f"{path} ({path.stat().st_size} bytes)")


@register.command("announcements")
@click.option("--court", "courts", multiple=True, help="Court code (D2601) or name; repeat for several. Default: all.")
@click.option("--state", default=None, help="Federal state, as the portal's form lists it (BY, Bayern…).")
@click.option("--days", type=click.IntRange(1, 366), default=1, show_default=True, help="Today and the days before.")
@click.option(
    "--category",
    "categories",
    multiple=True,
    type=click.Choice(list(ANNOUNCEMENT_CATEGORIES)),
    help="1 Löschungsankündigung, 2 UmwG, 3 new documents, 4 other, 5 special register; repeatable.",
)
def announcements(courts: tuple[str, ...], state: str | None, days: int, categories: tuple[str, ...]) -> None:
    """Print register announcements of the last DAYS days as JSON lines, one search per court and category."""
    today = date.today()
    since = today - timedelta(days=days - 1)
    try:
        with _client() as client:
            for court in courts or (None,):
                for category in categories or (None,):
                    for item in client.search_announcements(since, today, state=state, court=court, category=category):
                        click.echo(item.model_dump_json())
    except JobError as exc:
        _fail(exc)
