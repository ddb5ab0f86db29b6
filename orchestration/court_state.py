"""Whether a register court's records are current: what its Dagster partitions report.

A court is current for a parser version when that version has completed the current stored
document of every company filed there. A record whose newest parse was made by another version,
or a stored document no job has parsed yet, keeps it unfinished. (An unchanged re-parse writes
no revision, so the completed job, not the newest revision, says which version last read a
document.) The fingerprints are what Dagster compares: the documents of a court as its input's
data version, the newest records as its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from orchestration.reparse import _NEWEST_LIST, _completed_by_version

# A court without stored documents has nothing to parse: current, with this fingerprint.
EMPTY_FINGERPRINT = "empty"

SI_COURT_STATES = sa.text(f"""
    SELECT left(e.court_code, 5) AS court,
           count(*) FILTER (WHERE NOT {_completed_by_version("xml_parsing", "e.current_si_document_id")}) AS unfinished,
           md5(string_agg(e.id::text || ':' || e.current_si_document_id::text, ',' ORDER BY e.id)) AS documents,
           md5(string_agg(e.id::text || ':' || coalesce(newest.content_hash, ''), ',' ORDER BY e.id)) AS records
      FROM content.entities e
      LEFT JOIN LATERAL (
            SELECT r.content_hash FROM content.entity_revisions r
             WHERE r.entity_id = e.id ORDER BY r.id DESC LIMIT 1) newest ON true
     WHERE e.current_si_document_id IS NOT NULL AND left(e.court_code, 5) = ANY(CAST(:courts AS text[]))
     GROUP BY 1
""")

SHAREHOLDER_COURT_STATES = sa.text(f"""
    SELECT left(e.court_code, 5) AS court,
           count(*) FILTER (WHERE NOT {_completed_by_version("shareholder_parsing", "list.id")}) AS unfinished,
           md5(string_agg(e.id::text || ':' || list.id::text, ',' ORDER BY e.id)) AS documents,
           md5(string_agg(e.id::text || ':' || coalesce(newest.content_hash, ''), ',' ORDER BY e.id)) AS records
      FROM content.entities e
      CROSS JOIN LATERAL ({_NEWEST_LIST}) list
      LEFT JOIN LATERAL (
            SELECT l.content_hash FROM content.shareholder_lists l
             WHERE l.entity_id = e.id ORDER BY l.id DESC LIMIT 1) newest ON true
     WHERE left(e.court_code, 5) = ANY(CAST(:courts AS text[]))
     GROUP BY 1
""")

# The stored documents of each court, for the partitions of the downloaded documents.
SI_DOCUMENT_FINGERPRINTS = sa.text("""
    SELECT left(e.court_code, 5) AS court,
           md5(string_agg(e.id::text || ':' || e.current_si_document_id::text, ',' ORDER BY e.id)) AS documents
      FROM content.entities e
     WHERE e.current_si_document_id IS NOT NULL AND left(e.court_code, 5) = ANY(CAST(:courts AS text[]))
     GROUP BY 1
""")
SHAREHOLDER_LIST_FINGERPRINTS = sa.text(f"""
    SELECT left(e.court_code, 5) AS court,
           md5(string_agg(e.id::text || ':' || list.id::text, ',' ORDER BY e.id)) AS documents
      FROM content.entities e
      CROSS JOIN LATERAL ({_NEWEST_LIST}) list
     WHERE left(e.court_code, 5) = ANY(CAST(:courts AS text[]))
     GROUP BY 1
""")

COURTS_OF_ENTITIES = sa.text("""
    SELECT DISTINCT left(court_code, 5) FROM content.entities
     WHERE id = ANY(CAST(:entity_ids AS uuid[])) AND court_code IS NOT NULL
""")


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
    """The queries of one parsed asset: its courts' states and its input's fingerprints."""

    states: sa.TextClause
    document_fingerprints: sa.TextClause


SI_RECORDS = CourtStateQueries(SI_COURT_STATES, SI_DOCUMENT_FINGERPRINTS)
SHAREHOLDER_RECORDS = CourtStateQueries(SHAREHOLDER_COURT_STATES, SHAREHOLDER_LIST_FINGERPRINTS)


def court_states(
    conn: sa.Connection, queries: CourtStateQueries, courts: Sequence[str], parser_version: str
) -> dict[str, CourtState]:
    """The state of each of ``courts`` for ``parser_version``."""
    states = {court: CourtState(court, 0, EMPTY_FINGERPRINT, EMPTY_FINGERPRINT) for court in courts}
    for row in conn.execute(queries.states, {"courts": list(courts), "parser_version": parser_version}):
        states[row.court] = CourtState(row.court, row.unfinished, row.documents, row.records)
    return states


def document_fingerprints(conn: sa.Connection, queries: CourtStateQueries, courts: Sequence[str]) -> dict[str, str]:
    """Each court's fingerprint of its stored documents (the data version of its documents' partition)."""
    fingerprints = dict.fromkeys(courts, EMPTY_FINGERPRINT)
    for row in conn.execute(queries.document_fingerprints, {"courts": list(courts)}):
        fingerprints[row.court] = row.documents
    return fingerprints


def courts_of_entities(conn: sa.Connection, entity_ids: Sequence[str]) -> list[str]:
    return sorted(conn.execute(COURTS_OF_ENTITIES, {"entity_ids": list(entity_ids)}).scalars())
