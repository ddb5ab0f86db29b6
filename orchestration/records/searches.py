"""Searches of the register as the application saves them, and what they found. The SQL is
db/sql/queries/searches.sql."""

from __future__ import annotations

import uuid

import sqlalchemy as sa

from orchestration.db import queries

QUERIES = queries.load("searches")


def insert_search(
    conn: sa.Connection,
    *,
    user_id: uuid.UUID,
    query: str,
    mode: str,
    register_type: str | None,
    court: str | None,
    include_deleted: bool,
    result_pages: int | None,
) -> tuple[uuid.UUID, uuid.UUID]:
    """Save a search (its trigger queues the basic_discovery job); returns the search's and the job's id."""
    values = {
        "user_id": user_id,
        "query": query,
        "mode": mode,
        "register_type": register_type,
        "court": court,
        "include_deleted": include_deleted,
        "result_pages": result_pages,
    }
    search_id = conn.execute(QUERIES["insert_search"], values).scalar_one()
    return search_id, conn.execute(QUERIES["job_of_search"], {"search_id": search_id}).scalar_one()


def search(conn: sa.Connection, search_id: uuid.UUID) -> sa.Row | None:
    """The search with its newest job's status, priority, ``total_results`` and ``error``."""
    return conn.execute(QUERIES["search"], {"search_id": search_id}).first()


def results(conn: sa.Connection, search_id: uuid.UUID) -> list[sa.Row]:
    """The search's result rows in the portal's order, each with its company's status."""
    return list(conn.execute(QUERIES["results"], {"search_id": search_id}))
