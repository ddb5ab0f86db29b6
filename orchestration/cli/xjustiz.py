"""`hreg xjustiz`: read SI documents (XJustiz structured register content)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from orchestration.cli import cli_settings
from orchestration.runtime.failures import JobError
from orchestration.xjustiz import parse_si, validate_xsd
from orchestration.xjustiz.safe_xml import MAX_DOCUMENT_BYTES


@click.group()
def xjustiz() -> None:
    """XJustiz SI documents: parse them into company records, check them against the XSDs."""


def _read(path: Path) -> bytes:
    # Read one byte past the limit, so an oversized file is refused without loading all of it.
    with path.open("rb") as handle:
        return handle.read(MAX_DOCUMENT_BYTES + 1)


def _one_line(text: str) -> str:
    return " ".join(text.split())


@xjustiz.command("parse")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
def parse_command(files: tuple[Path, ...]) -> None:
    """Print the company record of each FILE as JSON (one JSON line per file when several).

    A file that cannot be parsed gets a one-line error on stderr naming its failure class
    (invalid_file, unsupported_version, parser_error); the exit code is then 1.
    """
    failed = False
    for path in files:
        try:
            record = parse_si(_read(path))
        except JobError as exc:
            failed = True
            where = f" at {exc.code}" if exc.code else ""
            click.echo(f"{path}: {exc.failure_class.value}: {_one_line(exc.message)}{where}", err=True)
            continue
        if len(files) == 1:
            click.echo(record.model_dump_json(indent=2))
        else:
            click.echo(record.model_dump_json())
    if failed:
        sys.exit(1)


@xjustiz.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--xsd-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=lambda: cli_settings().xjustiz_xsd_dir or None,
    help="Folder with one XSD folder per XJustiz version (default: HREG_XJUSTIZ_XSD_DIR, or the schemas shipped "
    "with the parser).",
)
def validate_command(files: tuple[Path, ...], xsd_dir: Path | None) -> None:
    """Check each FILE against the official XSD of its XJustiz version (informational: parsing
    does not require it). Prints one JSON line per file; exit code 1 when any file is invalid."""
    invalid = False
    for path in files:
        problems = validate_xsd(_read(path), xsd_dir=xsd_dir)
        invalid = invalid or bool(problems)
        click.echo(json.dumps({"file": str(path), "valid": not problems, "problems": problems}, ensure_ascii=False))
    if invalid:
        sys.exit(1)
