"""shareholder_download: the newest shareholder list of an entity's DK tree, as a raw document.

Its result names the stored document; on completion the database queues the shareholder_parsing
job for it.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Callable, ClassVar

import sqlalchemy as sa

from orchestration.documents import DocumentStore
from orchestration.failures import FailureClass, JobError
from orchestration.queue import ClaimedJob
from orchestration.register.client import RegisterClient
from orchestration.register.models import DocumentNode, walk_nodes
from orchestration.stages.entities import find_entity_row, load_entity_key
from orchestration.worker import Outcome, Stage, each_job

_GERMAN_DATE = re.compile(r"(\d{1,2})\.(\d{1,2})\.(\d{4})")


def list_date(node: DocumentNode) -> date | None:
    """The date in a label such as "Liste der Gesellschafter vom 12.03.2021"."""
    match = _GERMAN_DATE.search(node.label)
    if not match:
        return None
    day, month, year = map(int, match.groups())
    try:
        return date(year, month, day)
    except ValueError:
        return None


def newest_shareholder_list(nodes: list[DocumentNode]) -> DocumentNode | None:
    lists = [node for node in walk_nodes(nodes) if node.is_shareholder_list]
    if not lists:
        return None
    # Undated lists count as oldest; among equals the tree's later entry is the newer filing.
    return max(enumerate(lists), key=lambda item: (list_date(item[1]) or date.min, item[0]))[1]


class ShareholderDownloadStage(Stage):
    job_type: ClassVar[str] = "shareholder_download"
    chunk_size: ClassVar[int] = 1

    def __init__(self, client_factory: Callable[[str], RegisterClient], documents: DocumentStore) -> None:
        self.client_factory = client_factory
        self.documents = documents

    def process_chunk(self, conn: sa.Connection, jobs: list[ClaimedJob]) -> dict[str, Outcome]:
        # One job a chunk: the client waits at the rate limit with that job's priority.
        with self.client_factory(jobs[0].priority) as client:
            return each_job(conn, jobs, lambda job: self._download(conn, client, job))

    def _download(self, conn: sa.Connection, client: RegisterClient, job: ClaimedJob) -> dict:
        entity = load_entity_key(conn, job.entity_id)
        row = find_entity_row(client, entity)
        node = newest_shareholder_list(client.list_documents(row))
        if node is None:
            raise JobError(
                FailureClass.INVALID_FILE,
                f"the DK tree of {entity.designation} ({entity.name}) holds no shareholder list "
                "(Liste der Gesellschafter); only GmbHs and UGs file one",
                source="shareholder_download",
            )
        content, media_type, filename = client.download_document(row, node)
        document_id = self.documents.store(
            conn, content, kind="shareholder_list", media_type=media_type, filename=filename, entity_id=entity.id
        )
        return {"raw_document_id": document_id, "label": node.label, "media_type": media_type, "filename": filename}
