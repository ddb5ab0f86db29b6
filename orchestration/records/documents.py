"""Raw documents, content-addressed: one content.raw_documents row per sha256.

Small documents (SI XML) live in the row; larger ones (scanned shareholder lists) in the object
store (a directory or an S3 bucket), under a key made of their hash, so that the table stays small,
backups stay cheap and every host reads what any host stored.
ZIP archives the register sends are unpacked safely (`unpack_zip`) and their files stored.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from orchestration.db import queries
from orchestration.records.object_store import ObjectStore, open_object_store
from orchestration.runtime.failures import FailureClass, JobError

QUERIES = queries.load("documents")

INLINE_LIMIT_BYTES = 512 * 1024


@dataclass(frozen=True)
class StoredDocument:
    id: str
    sha256: str
    kind: str
    media_type: str
    filename: str | None
    content: bytes


class DocumentStore:
    """Document rows in the database, their large bytes in an object store under a relative key."""

    def __init__(self, location: str | Path, inline_limit_bytes: int = INLINE_LIMIT_BYTES) -> None:
        self.objects: ObjectStore = open_object_store(location)
        self.inline_limit_bytes = inline_limit_bytes

    @staticmethod
    def key(sha256: str) -> str:
        return f"{sha256[:2]}/{sha256}"

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
        storage_key = None
        if len(content) > self.inline_limit_bytes:
            storage_key = self.key(sha256)
            if not self.objects.exists(storage_key):
                self.objects.put(storage_key, content)
        row_id = conn.execute(
            QUERIES["store_document"],
            {
                "sha256": sha256,
                "entity_id": entity_id,
                "kind": kind,
                "media_type": media_type,
                "filename": filename,
                "size_bytes": len(content),
                "content": None if storage_key else content,
                "storage_path": storage_key,
                "source_url": source_url,
            },
        ).scalar_one()
        return str(row_id)

    def load(self, conn: sa.Connection, ids: list[str]) -> dict[str, StoredDocument]:
        """The documents with ``ids``, with their bytes; ids that do not exist are missing."""
        documents = {}
        for row in conn.execute(QUERIES["load_documents"], {"ids": ids}):
            content = bytes(row.content) if row.content is not None else self.objects.get(row.storage_path)
            documents[str(row.id)] = StoredDocument(
                id=str(row.id),
                sha256=row.sha256,
                kind=row.kind,
                media_type=row.media_type,
                filename=row.filename,
                content=content,
            )
        return documents

    def adopt_local_paths(self, conn: sa.Connection) -> tuple[int, list[str]]:
        """Move files that rows name by an absolute local path (as stored before keys) into this
        store and give the rows their key. Returns how many moved and the paths that do not exist,
        whose rows keep their path: nothing is lost, and a later run with the files back adopts them."""
        moved, missing = 0, []
        for row in conn.execute(QUERIES["documents_at_local_paths"]):
            path = Path(row.storage_path)
            if not path.is_file():
                missing.append(row.storage_path)
                continue
            key = self.key(row.sha256)
            if not self.objects.exists(key):
                self.objects.put(key, path.read_bytes())
            conn.execute(QUERIES["set_storage_key"], {"id": row.id, "key": key})
            moved += 1
        return moved, missing


# ZIP archives from the register ---------------------------------------------------------------

# Limits for unpacking: a shareholder list is a few scanned pages; anything far beyond is not one.
ZIP_MAX_MEMBERS = 50
ZIP_MAX_MEMBER_BYTES = 64 * 1024 * 1024
ZIP_MAX_TOTAL_BYTES = 256 * 1024 * 1024
ZIP_MAX_RATIO = 200  # uncompressed / compressed; far beyond is a zip bomb, not a scan
ZIP_MAX_DEPTH = 2  # a ZIP in a ZIP is unpacked; deeper nesting is refused

_MEDIA_TYPES = {
    ".pdf": "application/pdf",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
    ".xml": "text/xml",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".png": "image/png",
}


@dataclass(frozen=True)
class UnpackedFile:
    filename: str  # the member's base name; folders inside the archive are not kept
    media_type: str
    content: bytes


def _refuse(what: str, reason: str) -> JobError:
    return JobError(FailureClass.INVALID_FILE, f"{what}: {reason}", source="documents", code="zip")


def _safe_name(name: str, what: str) -> str:
    """The base name of a member; absolute paths, drive letters and ``..`` are refused."""
    normalised = name.replace("\\", "/")
    parts = [p for p in normalised.split("/") if p not in ("", ".")]
    if normalised.startswith("/") or ".." in parts or (parts and ":" in parts[0]):
        raise _refuse(what, f"member {name!r} points outside the archive")
    if not parts:
        raise _refuse(what, f"member {name!r} has no name")
    return parts[-1]


def is_zip(content: bytes) -> bool:
    return content[:4] == b"PK\x03\x04"


def unpack_zip(content: bytes, what: str = "ZIP archive", *, _depth: int = 1) -> list[UnpackedFile]:
    """The files of a ZIP from the register, nested ZIPs unpacked, within size and count limits.

    Path traversal, too many members, oversized members and zip bombs (sizes or ratios no
    document has) are refused with ``invalid_file``: fetching again would bring the same bytes."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(content))
    except zipfile.BadZipFile as exc:
        raise _refuse(what, f"not a readable ZIP ({exc})") from exc
    with archive:
        members = [m for m in archive.infolist() if not m.is_dir()]
        if len(members) > ZIP_MAX_MEMBERS:
            raise _refuse(what, f"{len(members)} members, more than the {ZIP_MAX_MEMBERS} allowed")
        total = 0
        files: list[UnpackedFile] = []
        for member in members:
            name = _safe_name(member.filename, what)
            if member.flag_bits & 0x1:
                raise _refuse(what, f"member {name!r} is encrypted")
            total += member.file_size
            if member.file_size > ZIP_MAX_MEMBER_BYTES or total > ZIP_MAX_TOTAL_BYTES:
                raise _refuse(what, f"member {name!r} unpacks to more than the size limit (a zip bomb?)")
            if member.compress_size and member.file_size / member.compress_size > ZIP_MAX_RATIO:
                raise _refuse(
                    what, f"member {name!r} is compressed {member.file_size // member.compress_size}:1 (a zip bomb?)"
                )
            # The declared size may lie: read at most one byte past it.
            with archive.open(member) as stream:
                data = stream.read(member.file_size + 1)
            if len(data) != member.file_size:
                raise _refuse(what, f"member {name!r} is not the size its header declares")
            if is_zip(data):
                if _depth >= ZIP_MAX_DEPTH:
                    raise _refuse(what, f"member {name!r} nests archives deeper than {ZIP_MAX_DEPTH} levels")
                files += unpack_zip(data, f"{what} / {name}", _depth=_depth + 1)
                continue
            media_type = _MEDIA_TYPES.get(Path(name).suffix.casefold(), "application/octet-stream")
            files.append(UnpackedFile(name, media_type, data))
    if len(files) > ZIP_MAX_MEMBERS:
        raise _refuse(what, f"{len(files)} files, more than the {ZIP_MAX_MEMBERS} allowed")
    if not files:
        raise _refuse(what, "the archive holds no file")
    return files
