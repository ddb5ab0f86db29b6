"""Re-parses of stored SI documents, after a parser change or on a person's request (seeds/002).

A re-parse downloads nothing: it queues an xml_parsing job per entity for its current SI
document and the current parser version, linked to the job it redoes. The unique index on
active work keeps one active job per document and version, so asking twice is harmless.
Records whose content is unchanged produce no new revision.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import sqlalchemy as sa

from orchestration import queue
from orchestration.worker import BatchReport, Stage, work_claimed

# The entities a scope names that have a stored SI document to re-parse. A court is the register
# court without a department letter (orchestration.courts).
_IN_SCOPE = """
    e.current_si_document_id IS NOT NULL
    AND (CAST(:entity_ids AS uuid[]) IS NULL OR e.id = ANY(CAST(:entity_ids AS uuid[])))
    AND (CAST(:courts AS text[]) IS NULL OR left(e.court_code, 5) = ANY(CAST(:courts AS text[])))
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

    entity_ids: tuple[str, ...] | None = None
    search_id: str | None = None
    since: datetime | None = None
    courts: tuple[str, ...] | None = None
    stale_only: bool = False

    def parameters(self) -> dict[str, Any]:
        """The bind parameters of the entities this scope names (stale or not)."""
        return {
            "entity_ids": list(self.entity_ids) if self.entity_ids is not None else None,
            "search_id": self.search_id,
            "since": self.since,
            "courts": list(self.courts) if self.courts is not None else None,
        }


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


def _completed_by_version(job_type: str, document: str) -> str:
    """SQL: a job of ``job_type`` and :parser_version completed ``document`` of entity ``e`` (the
    job may have moved to the archive, which keeps completed jobs only)."""
    match = f"""done.entity_id = e.id AND done.type = '{job_type}' AND done.raw_document_id = {document}
                AND done.parser_version = :parser_version"""
    return f"""(EXISTS (SELECT 1 FROM processing.processing_jobs done WHERE {match} AND done.status = 'completed')
             OR EXISTS (SELECT 1 FROM processing.job_archive done WHERE {match}))"""


# The entities in scope whose current document no job of this parser version has completed: what
# a backfill of their courts has left to do. A document that failed, or that no job took, is in
# it; one this version has parsed is not, so re-running a finished court finds nothing to do.
UNFINISHED = sa.text(f"""
    SELECT e.id::text
      FROM content.entities e
     WHERE {_IN_SCOPE}
       AND NOT {_completed_by_version("xml_parsing", "e.current_si_document_id")}
     ORDER BY e.id
""")


# Shareholder lists: the entities of the courts whose newest stored list no shareholder_parsing
# job of this reader version has completed, and the re-reads that queue it again.
_NEWEST_LIST = """
    SELECT d.id FROM content.raw_documents d
     WHERE d.entity_id = e.id AND d.kind = 'shareholder_list'
     ORDER BY d.retrieved_at DESC LIMIT 1
"""
UNFINISHED_LISTS = sa.text(f"""
    SELECT e.id::text
      FROM content.entities e
      CROSS JOIN LATERAL ({_NEWEST_LIST}) list
     WHERE left(e.court_code, 5) = ANY(CAST(:courts AS text[]))
       AND NOT {_completed_by_version("shareholder_parsing", "list.id")}
     ORDER BY e.id
""")
ENQUEUE_LIST_REREADS = sa.text(f"""
    INSERT INTO processing.processing_jobs
        (type, status, entity_id, raw_document_id, parser_version, trigger, previous_job_id)
    SELECT 'shareholder_parsing', 'queued', e.id, list.id, :parser_version, 'parser_change', previous.id
      FROM content.entities e
      CROSS JOIN LATERAL ({_NEWEST_LIST}) list
      LEFT JOIN LATERAL (
            SELECT j.id FROM processing.processing_jobs j
             WHERE j.entity_id = e.id AND j.type = 'shareholder_parsing'
             ORDER BY j.created_at DESC LIMIT 1) previous ON true
     WHERE e.id = ANY(CAST(:entity_ids AS uuid[]))
    ON CONFLICT (work_key) WHERE status IN ('queued', 'running') DO NOTHING
""")


@dataclass(frozen=True)
class StoredDocumentRedo:
    """How a job type redoes the documents it has already stored, for a backfill of courts."""

    job_type: str
    # Entity ids (text) of :courts whose document :parser_version has not completed, in id order.
    unfinished: sa.TextClause
    # Queues parser_change jobs of :parser_version for :entity_ids, each linked to the job it redoes.
    enqueue: sa.TextClause


SI_REPARSE = StoredDocumentRedo("xml_parsing", UNFINISHED, ENQUEUE_REPARSE)
SHAREHOLDER_LIST_REREAD = StoredDocumentRedo("shareholder_parsing", UNFINISHED_LISTS, ENQUEUE_LIST_REREADS)


@dataclass
class CourtReparse:
    """What redoing one court did in this worker."""

    court: str
    report: BatchReport
    # Documents whose job another worker held (queued or running there), left to it.
    held_elsewhere: int = 0


class ReparseCourt(Protocol):
    """Redo one court's work of a stage with the current code (what a backfill run does per court)."""

    def __call__(
        self,
        engine: sa.Engine,
        stage: Stage,
        worker_id: str,
        court: str,
        *,
        parser_version: str,
        batch_size: int,
        lease_seconds: int,
    ) -> CourtReparse: ...


def reparse_court(
    engine: sa.Engine,
    stage: Stage,
    worker_id: str,
    court: str,
    *,
    parser_version: str,
    batch_size: int,
    lease_seconds: int,
    redo: StoredDocumentRedo = SI_REPARSE,
) -> CourtReparse:
    """Redo the stored documents of one register court that this parser version has not done.

    Each batch is queued as parser_change jobs (linked to the jobs they redo) and claimed by this
    worker in the same transaction, so no sensor run ever sees them queued; then they are worked
    like any claimed batch: new revisions only for changed content, every attempt in the step
    history.
    """
    with engine.connect() as conn:
        todo = (
            conn.execute(
                redo.unfinished,
                {
                    **ReparseScope(courts=(court,)).parameters(),
                    "parser_version": parser_version,
                },
            )
            .scalars()
            .all()
        )
    result = CourtReparse(court, BatchReport(job_type=stage.job_type, worker_id=worker_id))
    for start in range(0, len(todo), batch_size):
        entity_ids = todo[start : start + batch_size]
        with engine.begin() as conn:
            conn.execute(
                redo.enqueue,
                {
                    **ReparseScope(entity_ids=tuple(entity_ids)).parameters(),
                    "stale_only": False,
                    "parser_version": parser_version,
                    "trigger": "parser_change",
                    "requested_by": None,
                    "reason": None,
                },
            )
            jobs = queue.claim_for_entities(conn, redo.job_type, entity_ids, parser_version, worker_id, lease_seconds)
        result.held_elsewhere += len(entity_ids) - len(jobs)
        result.report.absorb(work_claimed(engine, stage, worker_id, jobs, lease_seconds))
    return result
