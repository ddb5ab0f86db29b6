"""Re-parses of stored SI documents, after a parser change or on a person's request (seeds/002).

A re-parse downloads nothing: it queues an xml_parsing job per entity for its current SI
document and the current parser version, linked to the job it redoes. The unique index on
active work keeps one active job per document and version, so asking twice is harmless.
Records whose content is unchanged produce no new revision.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

# The entities a scope names that have a stored SI document to re-parse.
_IN_SCOPE = """
    e.current_si_document_id IS NOT NULL
    AND (CAST(:entity_id AS uuid) IS NULL OR e.id = CAST(:entity_id AS uuid))
    AND (CAST(:search_id AS uuid) IS NULL OR e.discovered_by_search_id = CAST(:search_id AS uuid))
    AND (CAST(:since AS timestamptz) IS NULL OR e.updated_at >= CAST(:since AS timestamptz))
"""

# One statement for any scope. "stale" picks entities whose current document no job of this
# parser version has taken yet (in any state): what a parser change leaves to do.
ENQUEUE_REPARSE = sa.text(f"""
    INSERT INTO processing.processing_jobs
        (type, status, entity_id, raw_document_id, parser_version, trigger, requested_by, reason, previous_job_id)
    SELECT 'xml_parsing', 'queued', e.id, e.current_si_document_id, :parser_version, :trigger,
           :requested_by, :reason, previous.id
      FROM content.entities e
      LEFT JOIN LATERAL (
            SELECT j.id FROM processing.processing_jobs j
             WHERE j.entity_id = e.id AND j.type = 'xml_parsing'
             ORDER BY j.created_at DESC LIMIT 1) previous ON true
     WHERE {_IN_SCOPE}
       AND (NOT :stale_only OR NOT EXISTS (
                SELECT 1 FROM processing.processing_jobs done
                 WHERE done.entity_id = e.id AND done.type = 'xml_parsing'
                   AND done.raw_document_id = e.current_si_document_id
                   AND done.parser_version = :parser_version)
            -- A completed job may have moved to the archive.
            AND NOT EXISTS (
                SELECT 1 FROM processing.job_archive done
                 WHERE done.entity_id = e.id AND done.type = 'xml_parsing'
                   AND done.raw_document_id = e.current_si_document_id
                   AND done.parser_version = :parser_version))
    ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING
""")

# The work key is the one the unique index on active work compares: these are the entities
# whose re-parse an enqueue would skip as already queued or running.
COUNT_ACTIVE = sa.text(f"""
    SELECT count(*)
      FROM content.entities e
     WHERE {_IN_SCOPE}
       AND EXISTS (
            SELECT 1 FROM processing.processing_jobs j
             WHERE j.work_key = processing.job_work_key('xml_parsing', e.current_si_document_id, e.id, NULL,
                                                         :parser_version)
               AND j.status IN ('queued', 'running'))
""")


@dataclass(frozen=True)
class ReparseScope:
    """Which entities to re-parse; no field set means all of them."""

    entity_id: str | None = None
    search_id: str | None = None
    since: datetime | None = None
    stale_only: bool = False

    def parameters(self) -> dict[str, Any]:
        """The bind parameters of the entities this scope names (stale or not)."""
        return {"entity_id": self.entity_id, "search_id": self.search_id, "since": self.since}


def enqueue_reparse(
    conn: sa.Connection,
    scope: ReparseScope,
    *,
    parser_version: str,
    trigger: str = "parser_change",
    requested_by: str | None = None,
    reason: str | None = None,
) -> int:
    """Queue re-parse jobs for the entities in ``scope``; returns how many were queued.

    ``trigger`` is ``parser_change`` (a new parser version) or ``manual``, which needs
    ``requested_by`` and a ``reason`` a person can act on (the database enforces it).
    """
    return conn.execute(
        ENQUEUE_REPARSE,
        {
            **scope.parameters(),
            "stale_only": scope.stale_only,
            "parser_version": parser_version,
            "trigger": trigger,
            "requested_by": requested_by,
            "reason": reason,
        },
    ).rowcount


def count_active_reparses(conn: sa.Connection, scope: ReparseScope, *, parser_version: str) -> int:
    """Entities in ``scope`` (stale or not) whose document has a queued or running job of ``parser_version``."""
    return conn.execute(COUNT_ACTIVE, {**scope.parameters(), "parser_version": parser_version}).scalar_one()
