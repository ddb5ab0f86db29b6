"""basic_discovery: search the register, record what it finds, and download their SI documents.

A search job records every result row as an entity and downloads its SI document; an entity job
(a user asked for fresh data) finds that one entity again and downloads its SI document. A stored
document makes the entity xml_ready, and the database queues its xml_parsing job.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Callable, ClassVar

import sqlalchemy as sa

from orchestration.documents import DocumentStore
from orchestration.failures import FailureClass, JobError
from orchestration.queue import ClaimedJob
from orchestration.register.client import RegisterClient
from orchestration.register.models import ResultRow, SearchMode
from orchestration.stages.entities import find_entity_row, load_entity_key
from orchestration.worker import Outcome, Stage, each_job

UPSERT_ENTITY = sa.text("""
    INSERT INTO content.entities
        (court_code, court_name, register_type, register_number, register_suffix, name, seat,
         register_status, discovered_by_search_id)
    VALUES (:court_code, :court_name, :register_type, :register_number, :register_suffix, :name, :seat,
            :register_status, :search_id)
    ON CONFLICT ON CONSTRAINT entities_register_key DO UPDATE
       SET name = EXCLUDED.name, seat = EXCLUDED.seat, register_status = EXCLUDED.register_status,
           updated_at = now()
    RETURNING id,
              (SELECT d.retrieved_at FROM content.raw_documents d
                WHERE d.id = content.entities.current_si_document_id) AS si_retrieved_at
""")

# A new document makes the entity xml_ready (the trigger queues the parse); the same bytes again
# are not new work, except for an entity a user explicitly sent back to discovery.
ATTACH_SI = sa.text("""
    UPDATE content.entities
       SET current_si_document_id = :document_id, processing_status = 'xml_ready', updated_at = now()
     WHERE id = :entity_id
       AND (current_si_document_id IS DISTINCT FROM :document_id OR processing_status = 'basic_discovery_running')
""")


class DiscoveryStage(Stage):
    job_type: ClassVar[str] = "basic_discovery"
    chunk_size: ClassVar[int] = 1

    def __init__(
        self,
        client_factory: Callable[[], RegisterClient],
        documents: DocumentStore,
        *,
        max_results: int,
        si_refresh_after: timedelta = timedelta(hours=1),
    ) -> None:
        self.client_factory = client_factory
        self.documents = documents
        self.max_results = max_results
        self.si_refresh_after = si_refresh_after

    def process_chunk(self, conn: sa.Connection, jobs: list[ClaimedJob]) -> dict[str, Outcome]:
        with self.client_factory() as client:
            return each_job(conn, jobs, lambda job: self._discover(conn, client, job))

    def _discover(self, conn: sa.Connection, client: RegisterClient, job: ClaimedJob) -> dict:
        if job.search_id:
            return self._discover_search(conn, client, job)
        return self._rediscover_entity(conn, client, job)

    def _discover_search(self, conn: sa.Connection, client: RegisterClient, job: ClaimedJob) -> dict:
        data = job.data
        rows = client.search(
            data["query"],
            SearchMode(data.get("search_mode") or "all"),
            register_type=data.get("register_type"),
            court=data.get("court"),
            include_deleted=bool(data.get("include_deleted")),
            max_results=self.max_results,
        )
        entity_ids, downloaded = [], 0
        for row in rows:
            entity_id, si_retrieved_at = self._upsert_entity(conn, row, job.search_id)
            entity_ids.append(entity_id)
            fresh = si_retrieved_at is not None and si_retrieved_at > _now(conn) - self.si_refresh_after
            if "SI" in row.documents and not fresh:
                self._download_si(conn, client, row, entity_id)
                downloaded += 1
        return {"result_count": len(rows), "si_downloaded": downloaded, "entity_ids": entity_ids}

    def _rediscover_entity(self, conn: sa.Connection, client: RegisterClient, job: ClaimedJob) -> dict:
        entity = load_entity_key(conn, job.entity_id)
        row = find_entity_row(client, entity)
        self._download_si(conn, client, row, job.entity_id)
        return {"result_count": 1, "si_downloaded": 1, "entity_ids": [job.entity_id]}

    def _upsert_entity(self, conn: sa.Connection, row: ResultRow, search_id: str | None) -> tuple[str, object]:
        court_code = row.court_code
        if court_code is None:
            raise JobError(
                FailureClass.PARSER_ERROR,
                f"register court {row.court!r} of {row.register_designation} has no XJustiz court code "
                "in the search form's court list",
                source="discovery",
            )
        result = conn.execute(
            UPSERT_ENTITY,
            {
                "court_code": court_code,
                "court_name": row.court,
                "register_type": row.register_type,
                "register_number": row.register_number,
                "register_suffix": row.register_suffix or "",
                "name": row.name,
                "seat": row.seat,
                "register_status": row.status,
                "search_id": search_id,
            },
        ).one()
        return str(result.id), result.si_retrieved_at

    def _download_si(self, conn: sa.Connection, client: RegisterClient, row: ResultRow, entity_id: str) -> str:
        content, filename = client.download_si(row)
        document_id = self.documents.store(
            conn, content, kind="si", media_type="application/xml", filename=filename, entity_id=entity_id
        )
        conn.execute(ATTACH_SI, {"entity_id": entity_id, "document_id": document_id})
        return document_id


def _now(conn: sa.Connection):
    return conn.execute(sa.text("SELECT now()")).scalar_one()

