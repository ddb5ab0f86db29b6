"""`hreg reparse`: queue re-parses of stored SI documents; nothing is downloaded (seeds/002).

A scope with --reason queues manual jobs on a person's behalf; --stale queues what a parser
change leaves to do (trigger parser_change). The xml_parsing sensor's runs work the jobs.
"""

from __future__ import annotations

import uuid
from datetime import datetime

import click
import sqlalchemy as sa
from click.core import ParameterSource

from orchestration.db.engine import get_engine
from orchestration.reparse import ReparseScope, count_active_reparses, enqueue_reparse
from orchestration.xjustiz import PARSER_VERSION

SCOPE_OPTIONS = "--all, --entity, --search, --since or --stale"


@click.command()
@click.option("--all", "all_entities", is_flag=True, help="Every entity with a stored SI document.")
@click.option("--entity", "entity_id", type=click.UUID, metavar="ID", help="One entity.")
@click.option("--search", "search_id", type=click.UUID, metavar="ID", help="The entities a search discovered.")
@click.option("--since", type=click.DateTime(["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"]),
              metavar="DATE", help="The entities updated since DATE (YYYY-MM-DD, or with a time).")
@click.option("--stale", is_flag=True,
              help="What a parser change leaves to do: the documents no job of the current parser version "
              "has taken. Queued as parser_change, without user or reason.")
@click.option("--reason", help="Why, in one line a person can act on; required except with --stale.")
@click.option("--user", "user_id", type=click.UUID, envvar="HREG_USER_ID",
              help="The person who asks (default: $HREG_USER_ID); required except with --stale.")
def reparse(all_entities: bool, entity_id: uuid.UUID | None, search_id: uuid.UUID | None, since: datetime | None,
            stale: bool, reason: str | None, user_id: uuid.UUID | None) -> None:
    """Queue xml_parsing jobs that re-parse the stored SI documents with the current parser.

    Prints how many jobs were queued and how many were already queued or running (one active
    job per document and parser version: asking twice queues nothing new).
    """
    chosen = [given for given in (all_entities, entity_id, search_id, since, stale) if given]
    if len(chosen) != 1:
        raise click.UsageError(f"choose exactly one of {SCOPE_OPTIONS}")
    if stale:
        user_given = click.get_current_context().get_parameter_source("user_id") == ParameterSource.COMMANDLINE
        if reason is not None or user_given:
            raise click.UsageError("--stale queues parser_change jobs, which carry no --user or --reason")
        scope = ReparseScope(stale_only=True)
        trigger, requested_by = "parser_change", None
    else:
        if not (reason or "").strip():
            raise click.UsageError("a manual re-parse needs --reason: why, in one line a person can act on")
        if user_id is None:
            raise click.UsageError("a manual re-parse needs the person who asks: pass --user UUID or set HREG_USER_ID")
        scope = ReparseScope(
            entity_id=str(entity_id) if entity_id else None, search_id=str(search_id) if search_id else None, since=since
        )
        trigger, requested_by = "manual", str(user_id)
    try:
        with get_engine().begin() as conn:
            already_active = count_active_reparses(conn, scope, parser_version=PARSER_VERSION)
            queued = enqueue_reparse(
                conn, scope, parser_version=PARSER_VERSION, trigger=trigger, requested_by=requested_by,
                reason=reason.strip() if reason else None,
            )
    except sa.exc.IntegrityError as error:
        raise click.ClickException(f"the database refused the re-parse jobs: {error.orig}") from error
    click.echo(f"queued {queued} {trigger} re-parse jobs for parser {PARSER_VERSION}, {already_active} already active")
    if not queued and not already_active:
        click.echo("nothing to re-parse in this scope" if not stale
                   else f"every stored SI document has been taken by parser {PARSER_VERSION}")
