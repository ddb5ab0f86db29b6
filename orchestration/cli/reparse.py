"""`hreg reparse`: redo the parse of stored SI documents; nothing is downloaded (seeds/002).

Two kinds of request:

- ``--backfill`` launches the Dagster backfill of ``company_records`` over register courts
  (``--court``, or every court), through the webserver as the UI's "Launch backfill" does: the
  same backfill a person sees, follows and re-executes on the Backfills page. Its jobs are
  parser_change jobs; who asked and why go into the backfill's tags and description.
- Any other scope queues jobs in the job table, which the xml_parsing sensor's runs work: with
  ``--reason`` and ``--user`` manual jobs on a person's behalf, with ``--stale`` what a parser
  change leaves to do (trigger parser_change).
"""

from __future__ import annotations

import uuid
from datetime import datetime

import click
import sqlalchemy as sa
from click.core import ParameterSource

from orchestration.cli import cli_engine, cli_settings, user_option
from orchestration.records.courts import register_courts, unknown_courts
from orchestration.records.reparse import ReparseScope, count_active_reparses, enqueue_reparse
from orchestration.webserver.backfills import BackfillError, launch_backfill
from orchestration.xjustiz import PARSER_VERSION

SCOPE_OPTIONS = "--all, --entity, --search, --since, --court or --stale"


@click.command()
@click.option("--all", "all_entities", is_flag=True, help="Every entity with a stored SI document.")
@click.option("--entity", "entity_id", type=click.UUID, metavar="ID", help="One entity.")
@click.option("--search", "search_id", type=click.UUID, metavar="ID", help="The entities a search discovered.")
@click.option(
    "--since",
    type=click.DateTime(["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"]),
    metavar="DATE",
    help="The entities updated since DATE (YYYY-MM-DD, or with a time).",
)
@click.option(
    "--court",
    "courts",
    multiple=True,
    metavar="CODE",
    help="The entities of a register court, e.g. D2601 (München); repeatable.",
)
@click.option(
    "--stale",
    is_flag=True,
    help="What a parser change leaves to do: the documents no job of the current parser version "
    "has taken. Queued as parser_change, without user or reason.",
)
@click.option(
    "--backfill",
    is_flag=True,
    help="Launch the Dagster backfill of company_records over the --court courts (default: every "
    "court) instead of queueing jobs; it shows on the Backfills page.",
)
@click.option("--webserver", metavar="URL", help="The Dagster webserver for --backfill (default: this machine's).")
@click.option("--reason", help="Why, in one line a person can act on; required for manual jobs.")
@user_option("user_id", "The person who asks (default: HREG_USER_ID); required for manual jobs.")
def reparse(
    all_entities: bool,
    entity_id: uuid.UUID | None,
    search_id: uuid.UUID | None,
    since: datetime | None,
    courts: tuple[str, ...],
    stale: bool,
    backfill: bool,
    webserver: str | None,
    reason: str | None,
    user_id: uuid.UUID | None,
) -> None:
    """Re-parse the stored SI documents with the current parser.

    Queueing prints how many jobs were queued and how many were already queued or running (one
    active job per document and parser version: asking twice queues nothing new). A backfill
    prints its id and where the UI shows it.
    """
    courts = tuple(code.strip().upper() for code in courts)
    if unknown := unknown_courts(list(courts)):
        raise click.UsageError(
            f"not a register court: {', '.join(unknown)} (see orchestration/records/data/register_courts.tsv)"
        )
    if backfill:
        if any((all_entities, entity_id, search_id, since, stale)):
            raise click.UsageError("--backfill takes register courts (--court) as its only scope")
        _launch_backfill(courts or tuple(register_courts()), webserver, reason, user_id)
        return
    chosen = [given for given in (all_entities, entity_id, search_id, since, courts, stale) if given]
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
            entity_ids=(str(entity_id),) if entity_id else None,
            search_id=str(search_id) if search_id else None,
            since=since,
            courts=courts or None,
        )
        trigger, requested_by = "manual", str(user_id)
    try:
        with cli_engine().begin() as conn:
            already_active = count_active_reparses(conn, scope, parser_version=PARSER_VERSION)
            queued = enqueue_reparse(
                conn,
                scope,
                parser_version=PARSER_VERSION,
                trigger=trigger,
                requested_by=requested_by,
                reason=reason.strip() if reason else None,
            )
    except sa.exc.IntegrityError as error:
        raise click.ClickException(f"the database refused the re-parse jobs: {error.orig}") from error
    click.echo(f"queued {queued} {trigger} re-parse jobs for parser {PARSER_VERSION}, {already_active} already active")
    if not queued and not already_active:
        click.echo(
            "nothing to re-parse in this scope"
            if not stale
            else f"every stored SI document has been taken by parser {PARSER_VERSION}"
        )


def _launch_backfill(
    courts: tuple[str, ...], webserver: str | None, reason: str | None, user_id: uuid.UUID | None
) -> None:
    url = (webserver or f"http://127.0.0.1:{cli_settings().webserver_port}").rstrip("/")
    tags = {"hreg/requested_by": str(user_id)} if user_id else {}
    try:
        backfill_id = launch_backfill(
            url,
            ["company_records"],
            courts,
            title=f"re-parse {len(courts)} courts with parser {PARSER_VERSION}",
            description=reason.strip() if reason else None,
            tags=tags,
        )
    except BackfillError as error:
        raise click.ClickException(str(error)) from error
    click.echo(
        f"launched backfill {backfill_id} of company_records over {len(courts)} courts "
        f"(parser {PARSER_VERSION}): {url}/runs/b/{backfill_id}"
    )
