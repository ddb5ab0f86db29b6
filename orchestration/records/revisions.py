"""Parsed company records stored as revisions: a new row only when a record's content changed.

A revision is keyed by its source record key (the register key) and the hash of its content.
The hash leaves out what says how and when the record was made (parser version, retrieval
time), so a re-parse by a new parser version that yields the same data writes nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from orchestration.db import queries

QUERIES = queries.load("revisions")

# Provenance, not content: excluded from the content hash.
_PROVENANCE_KEYS = ("parser_version", "source")


def source_record_key(record: dict[str, Any]) -> str:
    register = record["register"]
    return f"{register['court_code']}/{register['type']}/{register['number']}{register.get('suffix') or ''}"


def content_hash(record: dict[str, Any]) -> str:
    content = {k: v for k, v in record.items() if k not in _PROVENANCE_KEYS}
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class ParsedRecord:
    entity_id: str
    job_id: str | None
    raw_document_id: str | None
    record: dict[str, Any]

    @property
    def key(self) -> str:
        return source_record_key(self.record)


def write_revisions(conn: sa.Connection, parsed: list[ParsedRecord]) -> set[str]:
    """Store the records whose content changed; returns the entity ids that got a new revision."""
    if not parsed:
        return set()
    keys = [p.key for p in parsed]
    hashes = [content_hash(p.record) for p in parsed]
    changed_keys = set(conn.execute(QUERIES["changed_keys"], {"keys": keys, "hashes": hashes}).scalars())
    changed = [(p, key, digest) for p, key, digest in zip(parsed, keys, hashes) if key in changed_keys]
    if not changed:
        return set()
    rows = conn.execute(
        QUERIES["insert_revisions"],
        {
            "entity_ids": [p.entity_id for p, _, _ in changed],
            "keys": [key for _, key, _ in changed],
            "hashes": [digest for _, _, digest in changed],
            "records": [json.dumps(p.record, ensure_ascii=False) for p, _, _ in changed],
            "parser_versions": [p.record["parser_version"] for p, _, _ in changed],
            "raw_document_ids": [p.raw_document_id for p, _, _ in changed],
            "job_ids": [p.job_id for p, _, _ in changed],
        },
    )
    return set(rows.scalars())
