"""Shareholder parsing: a stored shareholder list into shareholder rows, validated against the capital."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import TYPE_CHECKING

import sqlalchemy as sa

from orchestration.db import queries
from orchestration.records.documents import DocumentStore
from orchestration.runtime.failures import FailureClass, JobError
from orchestration.runtime.queue import ClaimedJob
from orchestration.runtime.worker import Outcome, Stage, each_job
from orchestration.shareholders.shareholder_list import ShareholderList
from orchestration.shareholders.store import store_shareholder_list

if TYPE_CHECKING:
    from orchestration.jobs.specs import JobTypeSpec

QUERIES = queries.load("stages")

Extract = Callable[[bytes, Decimal | None], ShareholderList]


class ShareholderParsingStage(Stage):
    def __init__(self, spec: JobTypeSpec, documents: DocumentStore, extract: Extract) -> None:
        super().__init__(spec)
        self.documents = documents
        self.extract = extract

    def process_chunk(self, conn: sa.Connection, jobs: list[ClaimedJob]) -> dict[str, Outcome]:
        return each_job(conn, jobs, lambda job: self._parse(conn, job))

    def _parse(self, conn: sa.Connection, job: ClaimedJob) -> dict:
        document = (
            self.documents.load(conn, [job.raw_document_id]).get(job.raw_document_id) if job.raw_document_id else None
        )
        if document is None:
            raise JobError(
                FailureClass.INVALID_FILE,
                f"no stored shareholder list {job.raw_document_id}; request the shareholder research again",
                source=self.job_type,
            )
        capital_text = conn.execute(QUERIES["current_capital"], {"entity_id": job.entity_id}).scalar()
        capital = Decimal(capital_text) if capital_text else None
        result = self.extract(document.content, capital)
        assert job.entity_id is not None, "a parsing job is about one company"
        list_id = store_shareholder_list(
            conn, entity_id=job.entity_id, raw_document_id=document.id, job_id=job.id, result=result, capital=capital
        )
        return {
            "list_id": list_id,
            "new_list": list_id is not None,
            "shareholders": len(result.shareholders),
            "method": result.method,
            "source": result.source,
            "ocr_fallback": result.ocr_fallback,
            "valid": result.validation.valid,
            "status": result.validation.status,
            "failed_checks": [check.name for check in result.validation.failed],
            "low_confidence_cells": len(result.low_confidence_cells),
        }
