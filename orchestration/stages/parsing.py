"""Parsing: stored SI documents into canonical company records, stored as revisions, by the
parser its spec hands it (orchestration.jobs.specs), which stamps the spec's version."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

from orchestration.records.documents import DocumentStore
from orchestration.records.revisions import ParsedRecord, write_revisions
from orchestration.runtime.failures import FailureClass, JobError
from orchestration.runtime.queue import ClaimedJob
from orchestration.runtime.worker import Outcome, Stage, classify_exception

if TYPE_CHECKING:
    from orchestration.jobs.specs import JobTypeSpec


class XmlParsingStage(Stage):
    def __init__(self, spec: JobTypeSpec, documents: DocumentStore) -> None:
        if spec.parse is None or spec.version is None:
            raise ValueError(f"{spec.name} needs a parser and its version")
        super().__init__(spec)
        self.parse = spec.parse
        self.version = spec.version
        self.documents = documents

    def process_chunk(self, conn: sa.Connection, jobs: list[ClaimedJob]) -> dict[str, Outcome]:
        stored = self.documents.load(conn, [job.raw_document_id for job in jobs if job.raw_document_id])
        outcomes: dict[str, Outcome] = {}
        parsed: dict[str, ParsedRecord] = {}  # by job id
        for job in jobs:
            document = stored.get(job.raw_document_id) if job.raw_document_id else None
            if document is None:
                outcomes[job.id] = JobError(
                    FailureClass.INVALID_FILE,
                    f"no stored SI document {job.raw_document_id} for entity {job.entity_id}; download it again",
                    source=self.job_type,
                )
                continue
            try:
                record = {**self.parse(document.content).model_dump(mode="json"), "parser_version": self.version}
            except Exception as exc:  # one bad document fails only its own job
                outcomes[job.id] = classify_exception(exc)
                continue
            assert job.entity_id is not None, "a parsing job is about one company"
            parsed[job.id] = ParsedRecord(job.entity_id, job.id, job.raw_document_id, record)
        changed = write_revisions(conn, list(parsed.values()))
        for job_id, item in parsed.items():
            outcomes[job_id] = {
                "source_record_key": item.key,
                "name": item.record["name"],
                "new_revision": item.entity_id in changed,
                "parser_version": item.record["parser_version"],
            }
        return outcomes
