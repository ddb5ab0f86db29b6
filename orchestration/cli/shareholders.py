"""`hreg shareholders`: shareholder lists (Gesellschafterliste)."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from pathlib import Path

import click

from orchestration.failures import FailureClass, JobError
from orchestration.shareholders.parse import METHODS, parse_shareholder_list
from orchestration.shareholders.rules import parse_amount


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
@click.option("--method", type=click.Choice(METHODS), default="auto", show_default=True,
              help="rules; llm (needs HREG_LLM_BASE_URL); auto: rules, and the LLM when they fail.")
def parse_command(file: Path, capital: Decimal | None, method: str) -> None:
    """Print the shareholders of a list FILE (PDF, TIFF, PNG, JPEG) as JSON."""
    try:
        content = file.read_bytes()
    except OSError as error:
        raise click.ClickException(
            f"{FailureClass.INVALID_FILE.value}: cannot read {file}: {error.strerror}"
        ) from None
    try:
        result = parse_shareholder_list(content, capital=capital, method=method)
    except JobError as error:
        raise click.ClickException(str(error).replace("\n", " ")) from None
    click.echo(result.model_dump_json(indent=2))
