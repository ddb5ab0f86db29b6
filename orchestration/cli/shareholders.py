"""`hreg shareholders`: shareholder lists (Gesellschafterliste)."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from pathlib import Path

import click

from orchestration.cli import cli_engine, cli_settings, user_option
from orchestration.runtime.failures import FailureClass, JobError
from orchestration.shareholders.cell_values import parse_amount
from orchestration.shareholders.parse import METHODS, parse_shareholder_list


@click.group()
def shareholders() -> None:
    """Shareholder lists: parse a file, or ask for an entity's list."""


class _Capital(click.ParamType):
    name = "amount"

    def convert(self, value, param, ctx) -> Decimal:
        if isinstance(value, Decimal):
            return value
        try:
            return parse_amount(value) if ("," in value or value.count(".") > 1) else Decimal(value)
        except (ValueError, InvalidOperation):
            self.fail(f"{value!r} is not an amount such as 25000 or 25.000,00", param, ctx)


@shareholders.command("parse")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--capital", type=_Capital(), help="Nominal capital from the register, checked against the list.")
@click.option(
    "--method",
    type=click.Choice(METHODS),
    default="auto",
    show_default=True,
    help="rules; llm (needs HREG_LLM_BASE_URL); auto: rules, and the LLM when they fail.",
)
def parse_command(file: Path, capital: Decimal | None, method: str) -> None:
    """Print the shareholders of a list FILE (PDF, TIFF, PNG, JPEG) as JSON; its review status
    (verified or needs_review), where it was read from, failed checks and low-confidence cells
    follow on stderr."""
    try:
        content = file.read_bytes()
    except OSError as error:
        raise click.ClickException(f"{FailureClass.INVALID_FILE.value}: cannot read {file}: {error.strerror}") from None
    try:
        result = parse_shareholder_list(content, capital=capital, method=method, llm=cli_settings().llm_endpoint)
    except JobError as error:
        raise click.ClickException(str(error).replace("\n", " ")) from None
    click.echo(result.model_dump_json(indent=2))
    validation = result.validation
    click.echo(f"review status: {validation.status}", err=True)
    fallback = f" (OCR fallback for the text layer: {result.ocr_fallback})" if result.ocr_fallback else ""
    click.echo(f"read from: {result.source}{fallback}", err=True)
    for check in validation.failed:
        click.echo(f"  failed check {check.name}: {check.message}", err=True)
    for cell in result.low_confidence_cells:
        click.echo(f"  low-confidence cell on page {cell.page}: {cell.text!r} ({cell.confidence:.0f})", err=True)


@shareholders.command("request")
@click.argument("entity", type=click.UUID)
@user_option("requested_by", "Who asks (default HREG_USER_ID); without it the request counts as automatic.")
def request_command(entity, requested_by) -> None:
    """Ask for the shareholders of ENTITY (its id): sets its research status and queues the download;
    the sensors then run the download and the parsing."""
    import sqlalchemy as sa

    from orchestration.records import companies

    with cli_engine().begin() as conn:
        try:
            job_id = companies.request_shareholder_research(
                conn, str(entity), str(requested_by) if requested_by else None, "interactive"
            )
        except sa.exc.DBAPIError as error:
            raise click.ClickException(str(error.orig).splitlines()[0]) from None
    click.echo(f"entity {entity}: shareholder research requested, job {job_id}")
