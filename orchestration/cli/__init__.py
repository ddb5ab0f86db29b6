"""`hreg`: the command line of handelsregister-orchestration."""

from __future__ import annotations

import logging

import click


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log at debug level.")
def main(verbose: bool) -> None:
    """Research companies in the German commercial register: a Dagster code location on PostgreSQL."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


# Each command group lives in its own module and is registered here.
from orchestration.cli import db as _db  # noqa: E402

main.add_command(_db.db)

from orchestration.cli import dev as _dev  # noqa: E402

main.add_command(_dev.dev)

from orchestration.cli import xjustiz as _xjustiz  # noqa: E402

main.add_command(_xjustiz.xjustiz)

from orchestration.cli import search as _search  # noqa: E402

main.add_command(_search.search)

from orchestration.cli import status as _status  # noqa: E402

main.add_command(_status.status)

from orchestration.cli import register as _register  # noqa: E402

main.add_command(_register.sample_register)
main.add_command(_register.register)

from orchestration.cli import rules as _rules  # noqa: E402

main.add_command(_rules.rules)

from orchestration.cli import shareholders as _shareholders  # noqa: E402

main.add_command(_shareholders.shareholders)
