"""Discovery: a search lists what the register finds; an opened entity gets its SI document.

The portal's budget (60 retrievals an hour for the whole system) is spent where a person waits:

- A **search job** reads its result pages (one retrieval each, up to 100 rows a page) and records
  every row as an entity in ``discovered``, with what the row carries (name, seat, status, the
  documents it offers, earlier names). It completes as soon as the rows are recorded, with its
  ``result_count``. It downloads nothing else: when its rule says so (``HREG_SEARCH_OPENS``:
  an exact-name search with one result, live; the first ten results, sample register), it opens
  those results, each becoming an entity job of the search's priority.
- An **entity job** (a person opened the entity, seed 000's ``discovered`` ->
  ``basic_discovery_running``, or a monitoring rule asked for a re-check) finds the entity's row
  again and downloads its SI document: two retrievals. A document retrieved within the freshness
  window is not retrieved again. A stored document makes the entity ``xml_ready``, and the
  database queues its ``xml_parsing`` job.

Every retrieval happens in ``fetch``, before the job's transaction opens, with the job's priority
(interactive or background) at the shared rate limit; the transaction only writes (``record``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from orchestration.db import queries
from orchestration.records import companies
from orchestration.records.documents import DocumentStore
from orchestration.register.client import RegisterClient
from orchestration.register.ratelimit import Priority
from orchestration.register.results import ResultRow, SearchMode
from orchestration.runtime.failures import FailureClass, JobError
from orchestration.runtime.queue import ClaimedJob
from orchestration.runtime.worker import RetrievingStage
from orchestration.stages.entities import EntityKey, find_entity_row, load_entity_key

if TYPE_CHECKING:
    from orchestration.jobs.specs import JobTypeSpec

# Rows of one result page, the most the portal shows at once.
ROWS_PER_PAGE = 100

QUERIES = queries.load("stages")


@dataclass(frozen=True)
class SearchFetch:
    rows: list[ResultRow]
    total: int
    pages: int


@dataclass(frozen=True)
class EntityFetch:
    entity: EntityKey
    row: ResultRow | None = None  # None: the stored document is fresh, nothing was retrieved
    content: bytes = b""
    filename: str = ""
    fresh_document_id: str | None = None


class DiscoveryStage(RetrievingStage):
    def __init__(
        self,
        spec: JobTypeSpec,
        client_factory: Callable[[Priority], RegisterClient],
        documents: DocumentStore,
        *,
        result_pages: int = 1,
        search_opens: tuple[str, int] = ("exact", 1),
        fresh_for: timedelta = timedelta(hours=24),
    ) -> None:
        super().__init__(spec)
        self.client_factory = client_factory
        self.documents = documents
        self.result_pages = result_pages
        self.search_opens = search_opens
        self.fresh_for = fresh_for

    # ------------------------------------------------------------------ retrievals, no transaction

    def fetch(self, engine: Engine, job: ClaimedJob) -> SearchFetch | EntityFetch:
        with self.client_factory(job.priority) as client:
            return self._search(client, job) if job.search_id else self._fetch_entity(engine, client, job)

    def _search(self, client: RegisterClient, job: ClaimedJob) -> SearchFetch:
        data = job.data
        pages = max(1, int(data.get("result_pages") or self.result_pages))
        rows = client.search(
            data["query"],
            SearchMode(data.get("search_mode") or "all"),
            register_type=data.get("register_type"),
            court=data.get("court"),
            include_deleted=bool(data.get("include_deleted")),
            max_results=ROWS_PER_PAGE * pages,
            max_pages=pages,
        )
        return SearchFetch(rows, max(client.total_results, len(rows)), pages)

    def _fetch_entity(self, engine: Engine, client: RegisterClient, job: ClaimedJob) -> EntityFetch:
        with engine.connect() as conn:
            entity = load_entity_key(conn, job.entity_id)
            current = conn.execute(
                QUERIES["current_si"], {"entity_id": job.entity_id, "fresh_s": self.fresh_for.total_seconds()}
            ).first()
        if current is not None and current.fresh:
            return EntityFetch(entity, fresh_document_id=str(current.id))
        row = find_entity_row(client, entity)
        if "SI" not in row.documents:
            raise JobError(
                FailureClass.INVALID_FILE,
                f"{row.court} {row.register_designation} offers no SI document",
                source="register",
                code="no_document",
            )
        content, filename = client.download_si(row)
        return EntityFetch(entity, row, content, filename)

    # ------------------------------------------------------------------ writes, one transaction

    def record(self, conn: sa.Connection, job: ClaimedJob, fetched: SearchFetch | EntityFetch) -> dict:
        if isinstance(fetched, SearchFetch):
            return self._record_search(conn, job, fetched)
        return self._record_entity(conn, job, fetched)

    def _record_search(self, conn: sa.Connection, job: ClaimedJob, fetch: SearchFetch) -> dict:
        entity_ids = [self._upsert_entity(conn, row, job.search_id) for row in fetch.rows]
        conn.execute(QUERIES["record_search_results"], {"search_id": job.search_id, "entity_ids": entity_ids})
        opened = [
            entity_id
            for entity_id in self._to_open(job, entity_ids)
            if companies.open_entity(conn, entity_id, job.data.get("user_id"), "opened by its search", job.priority)
        ]
        return {
            "result_count": len(entity_ids),
            "total_results": fetch.total,
            "result_pages": fetch.pages,
            "opened": len(opened),
            "entity_ids": entity_ids,
        }

    def _to_open(self, job: ClaimedJob, entity_ids: list[str]) -> list[str]:
        """The results this search opens itself, by the rule of HREG_SEARCH_OPENS."""
        rule, count = self.search_opens
        if rule == "first":
            return entity_ids[:count]
        if len(entity_ids) > count or (rule == "exact" and job.data.get("search_mode") != SearchMode.EXACT.value):
            return []
        return entity_ids

    def _record_entity(self, conn: sa.Connection, job: ClaimedJob, fetch: EntityFetch) -> dict:
        if fetch.row is None:
            conn.execute(QUERIES["attach_si"], {"entity_id": job.entity_id, "document_id": fetch.fresh_document_id})
            return {"result_count": 1, "si_downloaded": 0, "si_fresh": True}
        conn.execute(QUERIES["update_from_row"], {"entity_id": job.entity_id, **_row_columns(fetch.row)})
        document_id = self.documents.store(
            conn,
            fetch.content,
            kind="si",
            media_type="application/xml",
            filename=fetch.filename,
            entity_id=job.entity_id,
        )
        conn.execute(QUERIES["attach_si"], {"entity_id": job.entity_id, "document_id": document_id})
        return {"result_count": 1, "si_downloaded": 1, "si_fresh": False}

    def _upsert_entity(self, conn: sa.Connection, row: ResultRow, search_id: str | None) -> str:
        if row.court_code is None:
            raise JobError(
                FailureClass.PARSER_ERROR,
                f"register court {row.court!r} of {row.register_designation} has no XJustiz court code "
                "in the search form's court list",
                source="discovery",
            )
        params = {
            "court_code": row.court_code,
            "court_name": row.court,
            "register_type": row.register_type,
            "register_number": row.register_number,
            "register_suffix": row.register_suffix or "",
            "search_id": search_id,
            **_row_columns(row),
        }
        return str(conn.execute(QUERIES["upsert_entity"], params).scalar_one())


def _row_columns(row: ResultRow) -> dict:
    """What a result row says about its entity, as the entity's columns."""
    return {
        "name": row.name,
        "seat": row.seat,
        "register_status": row.status,
        "documents_offered": list(row.documents),
        "earlier_names": json.dumps([name.model_dump() for name in row.earlier_names]),
    }
