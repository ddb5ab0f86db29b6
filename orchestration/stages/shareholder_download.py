"""Shareholder download: the newest shareholder list of an entity's DK tree, as a raw document.

Its result names the stored document; on completion the database queues the shareholder_parsing
job for it (apply_job_progress). A list the portal offers only as a ZIP is unpacked (`orchestration.records.documents.unpack_zip`)
and the list inside is stored.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from orchestration.records.documents import DocumentStore, is_zip, unpack_zip
from orchestration.register.client import RegisterClient
from orchestration.register.ratelimit import Priority
from orchestration.register.results import DocumentNode, Download, walk_nodes
from orchestration.runtime.failures import FailureClass, JobError
from orchestration.runtime.queue import ClaimedJob
from orchestration.runtime.worker import RetrievingStage
from orchestration.stages.entities import EntityKey, find_entity_row, load_entity_key

if TYPE_CHECKING:
    from orchestration.jobs.specs import JobTypeSpec

_LIST_MEDIA_TYPES = ("application/pdf", "image/tiff")


def leads_to_shareholder_lists(folder: DocumentNode) -> bool:
    """Folders worth a retrieval when looking for shareholder lists: the tree's own folders
    ("Dokumente zum Rechtsträger", "Dokumente zur Registernummer") and the category of lists."""
    label = folder.label.casefold()
    return label.startswith("dokumente") or label.startswith("liste der gesellschafter")


def newest_shareholder_list(nodes: list[DocumentNode]) -> DocumentNode | None:
    lists = [node for node in walk_nodes(nodes) if node.is_shareholder_list]
    if not lists:
        return None
    # Undated lists count as oldest; among equals the tree's earlier entry wins: the portal lists
    # the current list under its category and again under the root, and one download is enough.
    return max(enumerate(lists), key=lambda item: (item[1].date or date.min, -item[0]))[1]


def shareholder_list_file(download: Download, what: str, *, source: str) -> Download:
    """The list itself: the download, or the one PDF or TIFF in the ZIP the portal sent."""
    if download.media_type != "application/zip" and not is_zip(download.content):
        return download
    files = [f for f in unpack_zip(download.content, what) if f.media_type in _LIST_MEDIA_TYPES]
    if len(files) != 1:
        raise JobError(
            FailureClass.INVALID_FILE,
            f"{what}: the ZIP holds {len(files)} PDF or TIFF files, expected the one shareholder list",
            source=source,
            code="zip",
        )
    (file,) = files
    return Download(content=file.content, media_type=file.media_type, filename=file.filename)


class ShareholderDownloadStage(RetrievingStage):
    """The DK tree's retrievals happen before the job's transaction (``fetch``), with the job's
    priority at the shared rate limit; the transaction stores the list (``record``)."""

    def __init__(
        self, spec: JobTypeSpec, client_factory: Callable[[Priority], RegisterClient], documents: DocumentStore
    ) -> None:
        super().__init__(spec)
        self.client_factory = client_factory
        self.documents = documents

    def fetch(self, engine: Engine, job: ClaimedJob) -> tuple[EntityKey, DocumentNode, Download]:
        with engine.connect() as conn:
            entity = load_entity_key(conn, job.entity_id)
        with self.client_factory(job.priority) as client:
            return (entity, *self._download(client, entity))

    def _download(self, client: RegisterClient, entity: EntityKey) -> tuple[DocumentNode, Download]:
        row = find_entity_row(client, entity)
        node = newest_shareholder_list(client.list_documents(row, expand=leads_to_shareholder_lists))
        if node is None:
            raise JobError(
                FailureClass.INVALID_FILE,
                f"the DK tree of {entity.designation} ({entity.name}) holds no shareholder list "
                "(Liste der Gesellschafter); only GmbHs and UGs file one",
                source=self.job_type,
            )
        what = f"the shareholder list {node.label!r} of {entity.designation}"
        return node, shareholder_list_file(client.download_document(row, node), what, source=self.job_type)

    def record(self, conn: sa.Connection, job: ClaimedJob, fetched: tuple[EntityKey, DocumentNode, Download]) -> dict:
        entity, node, download = fetched
        document_id = self.documents.store(
            conn,
            download.content,
            kind="shareholder_list",
            media_type=download.media_type,
            filename=download.filename,
            entity_id=entity.id,
        )
        return {
            "raw_document_id": document_id,
            "label": node.label,
            "media_type": download.media_type,
            "filename": download.filename,
        }
