"""`hreg search`: search the register as the application does, by inserting a search; its trigger
queues the basic_discovery job that a worker picks up."""

from __future__ import annotations

import uuid

import click
import sqlalchemy as sa

from orchestration.db.engine import get_engine

INSERT_SEARCH = sa.text("""
    INSERT INTO public.searches (user_id, query, mode, register_type, court, include_deleted)
    VALUES (:user_id, :query, :mode, :register_type, :court, :include_deleted)
    RETURNING id
""")
JOB_OF_SEARCH = sa.text("SELECT id FROM processing.processing_jobs WHERE search_id = :search_id")

# Searches typed on the command line belong to no application user.
COMMAND_LINE_USER = uuid.UUID(int=0)


@click.command()
@click.argument("query")
@click.option("--mode", type=click.Choice(["all", "any", "exact"]), default="all", show_default=True,
              help="all: every word; any: at least one word; exact: the exact company name.")
@click.option("--register-type", type=click.Choice(["HRA", "HRB", "GnR", "PR", "VR"]), help="Only this register type.")
@click.option("--court", help="Only this register court, by its code (e.g. D2601V for Köln).")
@click.option("--include-deleted", is_flag=True, help="Also find companies deleted from the register.")
@click.option("--user", "user_id", type=click.UUID, default=str(COMMAND_LINE_USER), show_default=True,
              help="The application user the search belongs to.")
def search(query: str, mode: str, register_type: str | None, court: str | None, include_deleted: bool,
           user_id: uuid.UUID) -> None:
    """Queue a search of the register for QUERY; prints the search id and its job id."""
    if not query.strip():
        raise click.BadParameter("must not be blank", param_hint="QUERY")
    try:
        with get_engine().begin() as conn:
            search_id = conn.execute(INSERT_SEARCH, {
                "user_id": user_id, "query": query.strip(), "mode": mode, "register_type": register_type,
                "court": court, "include_deleted": include_deleted,
            }).scalar_one()
            job_id = conn.execute(JOB_OF_SEARCH, {"search_id": search_id}).scalar_one()
    except sa.exc.DBAPIError as error:
        raise click.ClickException(f"the search was not saved: {error.orig}") from error
    click.echo(f"search {search_id}")
    click.echo(f"job    {job_id}")
