"""`hreg search`: search the register as the application does, by inserting a search (its trigger
queues the basic_discovery job that a worker picks up), and show what a search found."""

from __future__ import annotations

import json
import uuid

import click
import sqlalchemy as sa
from click_default_group import DefaultGroup

from orchestration.cli import cli_engine
from orchestration.cli.status import format_table
from orchestration.records import searches

# Searches typed on the command line belong to no application user.
COMMAND_LINE_USER = uuid.UUID(int=0)


@click.group(cls=DefaultGroup, default="new", default_if_no_args=False)
def search() -> None:
    """Search the register (`hreg search QUERY`), or show what a search found (`hreg search show ID`)."""


@search.command("new")
@click.argument("query")
@click.option(
    "--mode",
    type=click.Choice(["all", "any", "exact"]),
    default="all",
    show_default=True,
    help="all: every word; any: at least one word; exact: the exact company name.",
)
@click.option("--register-type", type=click.Choice(["HRA", "HRB", "GnR", "PR", "VR"]), help="Only this register type.")
@click.option("--court", help="Only this register court, by its code (e.g. D2601V for Köln).")
@click.option("--include-deleted", is_flag=True, help="Also find companies deleted from the register.")
@click.option(
    "--pages",
    "result_pages",
    type=click.IntRange(1, 100),
    help="Result pages to read (up to 100 rows and one retrieval each); default HREG_DISCOVERY_RESULT_PAGES.",
)
@click.option(
    "--user",
    "user_id",
    type=click.UUID,
    default=str(COMMAND_LINE_USER),
    show_default=True,
    help="The application user the search belongs to.",
)
def new_search(
    query: str,
    mode: str,
    register_type: str | None,
    court: str | None,
    include_deleted: bool,
    result_pages: int | None,
    user_id: uuid.UUID,
) -> None:
    """Queue a search of the register for QUERY; prints the search id and its job id
    (`hreg search show SEARCH_ID` lists the results once it completed)."""
    if not query.strip():
        raise click.BadParameter("must not be blank", param_hint="QUERY")
    try:
        with cli_engine().begin() as conn:
            search_id, job_id = searches.insert_search(
                conn,
                user_id=user_id,
                query=query.strip(),
                mode=mode,
                register_type=register_type,
                court=court,
                include_deleted=include_deleted,
                result_pages=result_pages,
            )
    except sa.exc.IntegrityError as error:
        raise click.ClickException(f"the search was not saved: {str(error.orig).splitlines()[0]}") from error
    click.echo(f"search {search_id}")
    click.echo(f"job    {job_id}")


def designation(row: sa.Row) -> str:
    return " ".join(p for p in (row.register_type, row.register_number, row.register_suffix) if p)


@search.command("show")
@click.argument("search_id", type=click.UUID)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of a table.")
def show(search_id: uuid.UUID, as_json: bool) -> None:
    """The results of search SEARCH_ID, each with its entity's status."""
    with cli_engine().connect() as conn:
        found = searches.search(conn, search_id)
        if found is None:
            raise click.ClickException(f"there is no search {search_id}")
        results = searches.results(conn, search_id)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "search": dict(found._mapping),
                    "results": [dict(row._mapping) for row in results],
                },
                default=str,
            )
        )
        return
    filters = ", ".join(
        f"{name} {value}" for name, value in (("type", found.register_type), ("court", found.court)) if value
    )
    click.echo(
        f"search {found.id}: {found.query!r} ({found.mode}{', ' + filters if filters else ''}"
        f"{', deleted too' if found.include_deleted else ''})"
    )
    if found.status == "completed":
        total = int(found.total_results) if found.total_results else found.result_count
        more = f" of {total} the register reported (read more with --pages)" if total > found.result_count else ""
        click.echo(f"completed: {found.result_count} results{more}")
    elif found.status == "failed":
        click.echo(f"failed: {found.error or 'see hreg status'}")
    else:
        click.echo(f"{found.status} (job {found.job_status}, {found.priority}); results appear when it completes")
    if results:
        click.echo(
            format_table(
                ("#", "entity", "court", "register", "name", "seat", "register status", "status", "documents"),
                [
                    (
                        r.position,
                        r.id,
                        r.court_name or r.court_code,
                        designation(r),
                        r.name,
                        r.seat or "",
                        r.register_status or "",
                        r.processing_status,
                        " ".join(r.documents_offered or ()),
                    )
                    for r in results
                ],
            )
        )
        click.echo("open one (fetches its register data) with: hreg entity open ENTITY_ID")
