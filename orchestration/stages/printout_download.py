"""Printout download: a company's current printout (AD, "Aktueller Abdruck"), the PDF the portal
serves beside its SI document, as a raw document of kind ``printout``.

A person asks for it (processing.request_printout). The job finds the company's row again and
downloads the AD: two retrievals, in ``fetch``, with the job's priority at the shared rate limit.
A printout this job type retrieved within the freshness window (HREG_DOCUMENT_FRESH_HOURS) is
handed back instead, retrieving nothing. Its result names the stored document.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from orchestration.db import queries
from orchestration.records.documents import DocumentStore
from orchestration.register.client import RegisterClient
from orchestration.register.ratelimit import Priority
from orchestration.register.results import Download
from orchestration.runtime.failures import FailureClass, JobError
from orchestration.runtime.queue import ClaimedJob
from orchestration.runtime.worker import RetrievingStage
from orchestration.stages.entities import EntityKey, find_entity_row, load_entity_key

if TYPE_CHECKING:
    from orchestration.jobs.specs import JobTypeSpec

QUERIES = queries.load("stages")
# The register's link of the current printout on a result row.
PRINTOUT_LINK = "AD"


@dataclass(frozen=True)
class PrintoutFetch:
    entity: EntityKey
    download: Download | None = None  # None: a fresh printout is stored, nothing was retrieved
    fresh_document_id: str | None = None


class PrintoutDownloadStage(RetrievingStage):
    def __init__(
        self,
        spec: JobTypeSpec,
        client_factory: Callable[[Priority], RegisterClient],
        documents: DocumentStore,
        fresh_for: timedelta,
    ) -> None:
        super().__init__(spec)
        self.client_factory = client_factory
        self.documents = documents
        self.fresh_for = fresh_for

    def fetch(self, engine: Engine, job: ClaimedJob) -> PrintoutFetch:
        with engine.connect() as conn:
            entity = load_entity_key(conn, job.entity_id)
            fresh = conn.execute(
                QUERIES["fresh_download"],
                {"entity_id": job.entity_id, "job_type": self.job_type, "fresh_s": self.fresh_for.total_seconds()},
            ).scalar()
        if fresh is not None:
            return PrintoutFetch(entity, fresh_document_id=str(fresh))
        with self.client_factory(job.priority) as client:
            download = client.download(find_entity_row(client, entity), PRINTOUT_LINK)
        if not download.content.startswith(b"%PDF"):
            raise JobError(
                FailureClass.INVALID_FILE,
                f"the printout ({PRINTOUT_LINK}) of {entity.designation} is not a PDF ({download.media_type})",
                source=self.job_type,
            )
        return PrintoutFetch(entity, download)

    def record(self, conn: sa.Connection, job: ClaimedJob, fetched: PrintoutFetch) -> dict:
        if fetched.download is None:
            return {"raw_document_id": fetched.fresh_document_id, "retrieved": False}
        document_id = self.documents.store(
            conn,
            fetched.download.content,
            kind="printout",
            media_type="application/pdf",
            filename=fetched.download.filename,
            entity_id=fetched.entity.id,
        )
        return {"raw_document_id": document_id, "retrieved": True, "filename": fetched.download.filename}
