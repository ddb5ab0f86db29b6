"""Whether a register court's records are current: what its Dagster partitions report.

A court is current for a parser version when that version has completed the current stored
document of every company filed there. A record whose newest parse was made by another version,
or a stored document no job has parsed yet, keeps it unfinished. (An unchanged re-parse writes
no revision, so the completed job, not the newest revision, says which version last read a
document.) The fingerprints are what Dagster compares: the documents of a court as its input's
data version, the newest records as its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from orchestration.db import queries

QUERIES = queries.load("court_state")
# A court without stored documents has nothing to parse: current, with this fingerprint.
EMPTY_FINGERPRINT = "empty"


@dataclass(frozen=True)
class CourtState:
    court: str
    # Companies whose current document this version has not completed.
    unfinished: int
    documents: str
    records: str

    @property
    def current(self) -> bool:
        return self.unfinished == 0


@dataclass(frozen=True)
class CourtStateQueries:
    """The queries of one parsed asset: its courts' states, their failures and its input's fingerprints."""

    states: sa.TextClause
    failures: sa.TextClause
    document_fingerprints: sa.TextClause


SI_RECORDS = CourtStateQueries(
    QUERIES["si_court_states"], QUERIES["si_court_failures"], QUERIES["si_document_fingerprints"]
)
SHAREHOLDER_RECORDS = CourtStateQueries(
    QUERIES["shareholder_court_states"], QUERIES["shareholder_court_failures"], QUERIES["shareholder_list_fingerprints"]
)


def court_states(
    conn: sa.Connection, queries: CourtStateQueries, courts: Sequence[str], parser_version: str
) -> dict[str, CourtState]:
    """The state of each of ``courts`` for ``parser_version``."""
    states = {court: CourtState(court, 0, EMPTY_FINGERPRINT, EMPTY_FINGERPRINT) for court in courts}
    for row in conn.execute(queries.states, {"courts": list(courts), "parser_version": parser_version}):
        states[row.court] = CourtState(row.court, row.unfinished, row.documents, row.records)
    return states


def court_failures(
    conn: sa.Connection, queries: CourtStateQueries, courts: Sequence[str], parser_version: str, since: datetime
) -> dict[str, Counter]:
    """Per court of ``courts``, by failure class, its unfinished companies whose document a job of
    ``parser_version`` has failed for good since ``since``: what keeps a court unsynced until a
    person looks at it, rather than work still under way."""
    failures: dict[str, Counter] = {court: Counter() for court in courts}
    parameters = {"courts": list(courts), "parser_version": parser_version, "since": since}
    for row in conn.execute(queries.failures, parameters):
        failures[row.court][row.failure_class] += row.companies
    return failures


def document_fingerprints(conn: sa.Connection, query: sa.TextClause, courts: Sequence[str]) -> dict[str, str]:
    """Each court's fingerprint of its stored documents (the data version of its documents'
    partition), by ``query`` (a ``*_fingerprints`` query of court_state.sql)."""
    fingerprints = dict.fromkeys(courts, EMPTY_FINGERPRINT)
    for row in conn.execute(query, {"courts": list(courts)}):
        fingerprints[row.court] = row.documents
    return fingerprints


def courts_of_entities(conn: sa.Connection, entity_ids: Sequence[str]) -> list[str]:
    return sorted(conn.execute(QUERIES["courts_of_entities"], {"entity_ids": list(entity_ids)}).scalars())
