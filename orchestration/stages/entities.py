"""Finding a known entity in the register again, shared by re-discovery and shareholder downloads."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa

from orchestration.db import queries
from orchestration.register.client import RegisterClient
from orchestration.register.results import ResultRow, SearchMode
from orchestration.runtime.failures import FailureClass, JobError

QUERIES = queries.load("stages")


@dataclass(frozen=True)
class EntityKey:
    id: str
    court_code: str
    register_type: str
    register_number: str
    register_suffix: str
    name: str

    @property
    def designation(self) -> str:
        return " ".join(p for p in (self.register_type, self.register_number, self.register_suffix) if p)


def load_entity_key(conn: sa.Connection, entity_id: str | None) -> EntityKey:
    row = conn.execute(QUERIES["entity_key"], {"entity_id": entity_id}).first()
    if row is None:
        raise JobError(FailureClass.INVALID_FILE, f"entity {entity_id} no longer exists", source="entities")
    return EntityKey(**{k: str(v) if k == "id" else v for k, v in row._mapping.items()})


def find_entity_row(client: RegisterClient, entity: EntityKey) -> ResultRow:
    """The result row of ``entity``: searched by register number at its court, matched on the full key."""
    rows = client.search(
        entity.name,
        SearchMode.ALL,
        register_type=entity.register_type,
        court=entity.court_code,
        register_number=entity.register_number,
        include_deleted=True,
        max_results=10,
    )
    for row in rows:
        if (
            row.register_type == entity.register_type
            and row.register_number == entity.register_number
            and (row.register_suffix or "") == entity.register_suffix
            and (row.court_code is None or row.court_code == entity.court_code)
        ):
            return row
    raise JobError(
        FailureClass.PARSER_ERROR,
        f"{entity.designation} ({entity.name}) at court {entity.court_code} was not among the register's "
        f"{len(rows)} results; check whether it was renamed or moved to another court",
        source="register",
    )
