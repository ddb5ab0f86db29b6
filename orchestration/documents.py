"""Raw documents, content-addressed: one content.raw_documents row per sha256.

Small documents (SI XML) live in the row; larger ones (scanned shareholder lists) in files under
the store's directory, named by their hash, so that the table stays small and backups cheap.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

INLINE_LIMIT_BYTES = 512 * 1024

STORE = sa.text("""
    INSERT INTO content.raw_documents
        (sha256, entity_id, kind, media_type, filename, size_bytes, content, storage_path, source_url)
    VALUES (:sha256, :entity_id, :kind, :media_type, :filename, :size_bytes, :content, :storage_path, :source_url)
    ON CONFLICT (sha256) DO UPDATE SET entity_id = coalesce(content.raw_documents.entity_id, EXCLUDED.entity_id)
    RETURNING id
""")

LOAD = sa.text("""
    SELECT id, sha256, kind, media_type, filename, content, storage_path
      FROM content.raw_documents WHERE id = ANY(CAST(:ids AS uuid[]))
""")


@dataclass(frozen=True)
class StoredDocument:
    id: str
    sha256: str
    kind: str
    media_type: str
    filename: str | None
    content: bytes


class DocumentStore:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, sha256: str) -> Path:
        return self.directory / sha256[:2] / sha256

    def store(
        self,
        conn: sa.Connection,
        content: bytes,
        *,
        kind: str,
        media_type: str,
        filename: str | None = None,
        source_url: str | None = None,
        entity_id: str | None = None,
    ) -> str:
        """Store ``content`` once; returns the id of its row (the existing one for known bytes)."""
        sha256 = hashlib.sha256(content).hexdigest()
        storage_path = None
        if len(content) > INLINE_LIMIT_BYTES:
            path = self._path(sha256)
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                # Write-then-rename: a reader never sees half a file.
                with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as tmp:
                    tmp.write(content)
                os.replace(tmp.name, path)
            storage_path = str(path)
        row_id = conn.execute(
            STORE,
            {
                "sha256": sha256,
                "entity_id": entity_id,
                "kind": kind,
                "media_type": media_type,
                "filename": filename,
                "size_bytes": len(content),
                "content": None if storage_path else content,
                "storage_path": storage_path,
                "source_url": source_url,
            },
        ).scalar_one()
        return str(row_id)

    def load(self, conn: sa.Connection, ids: list[str]) -> dict[str, StoredDocument]:
        """The documents with ``ids``, with their bytes; ids that do not exist are missing."""
        documents = {}
        for row in conn.execute(LOAD, {"ids": ids}):
            content = bytes(row.content) if row.content is not None else Path(row.storage_path).read_bytes()
            documents[str(row.id)] = StoredDocument(
                id=str(row.id),
                sha256=row.sha256,
                kind=row.kind,
                media_type=row.media_type,
                filename=row.filename,
                content=content,
            )
        return documents
