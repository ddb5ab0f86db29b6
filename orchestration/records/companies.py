"""What we know of a company, read as a person looks at it, and the requests a person or a rule
makes for one: open it, ask for its shareholders, re-check its register data. The SQL is
db/sql/queries/companies.sql."""

from __future__ import annotations

import uuid
from typing import Any

import sqlalchemy as sa

from orchestration.db import queries

QUERIES = queries.load("companies")


def entity(conn: sa.Connection, entity_id: uuid.UUID | str) -> sa.Row | None:
    """The company's row with ``si_retrieved_at``, the time its current SI document was retrieved."""
    return conn.execute(QUERIES["entity_by_id"], {"entity_id": entity_id}).first()


def entities_by_register(
    conn: sa.Connection, court: str, register_type: str, register_number: str, suffix: str | None
) -> list[uuid.UUID]:
    """The companies at a court (its code or name) with this register type and number (and suffix, if given)."""
    params = {"court": court, "register_type": register_type, "register_number": register_number, "suffix": suffix}
    return list(conn.execute(QUERIES["entities_by_register"], params).scalars())


def revisions(conn: sa.Connection, entity_id: uuid.UUID | str) -> list[sa.Row]:
    """The company's revisions, newest first, with the retrieval time and file name of their documents."""
    return list(conn.execute(QUERIES["revisions"], {"entity_id": entity_id}))


def current_shareholder_list(conn: sa.Connection, entity_id: uuid.UUID | str) -> sa.Row | None:
    return conn.execute(QUERIES["current_shareholder_list"], {"entity_id": entity_id}).first()


def shareholders(conn: sa.Connection, list_id: int) -> list[dict[str, Any]]:
    return [dict(row._mapping) for row in conn.execute(QUERIES["shareholders"], {"list_id": list_id})]


def stored_documents(conn: sa.Connection, entity_id: uuid.UUID | str) -> list[dict[str, Any]]:
    """The documents stored of the company (SI, shareholder lists, printouts…), newest first."""
    return [dict(row._mapping) for row in conn.execute(QUERIES["stored_documents"], {"entity_id": entity_id})]


def active_discovery(conn: sa.Connection, entity_id: uuid.UUID | str) -> dict[str, Any] | None:
    """The company's basic_discovery job (id, status, priority) while it is queued or running."""
    row = conn.execute(QUERIES["active_discovery"], {"entity_id": entity_id}).first()
    return dict(row._mapping) if row else None


def open_entity(
    conn: sa.Connection,
    entity_id: uuid.UUID | str,
    requested_by: uuid.UUID | str | None,
    reason: str,
    priority: str = "interactive",
) -> str | None:
    """Open the company (processing.open_entity): as a person does, or as ``priority`` work;
    returns the id of the job that fetches its register data, None when none is needed."""
    params = {"entity_id": entity_id, "requested_by": requested_by, "reason": reason, "priority": priority}
    return conn.execute(QUERIES["open_entity"], params).scalar_one()


def request_shareholder_research(
    conn: sa.Connection, entity_id: uuid.UUID | str, requested_by: uuid.UUID | str | None, priority: str
) -> str:
    """Ask for the company's shareholders as ``priority`` work; returns the download job's id."""
    params = {"entity_id": entity_id, "requested_by": requested_by, "priority": priority}
    return conn.execute(QUERIES["request_shareholder_research"], params).scalar_one()


def request_rediscovery(
    conn: sa.Connection, entity_id: uuid.UUID | str, requested_by: uuid.UUID | str | None, reason: str | None
) -> str | None:
    """Queue a background re-check of the company's register data; returns the job's id, if one was queued."""
    params = {"entity_id": entity_id, "requested_by": requested_by, "reason": reason}
    return conn.execute(QUERIES["request_rediscovery"], params).scalar()
