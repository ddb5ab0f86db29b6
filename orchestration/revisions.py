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


# The keys whose latest revision has another hash (or none): one index probe per key on
# (source_record_key, id DESC). Only the records behind these keys are sent to be stored, so a
# re-parse that changes nothing serialises and transfers no record at all.
CHANGED_KEYS = sa.text("""
    SELECT i.source_record_key
      FROM unnest(CAST(:keys AS text[]), CAST(:hashes AS text[])) AS i(source_record_key, content_hash)
      LEFT JOIN LATERAL (
            SELECT r.content_hash FROM content.entity_revisions r
             WHERE r.source_record_key = i.source_record_key
             ORDER BY r.id DESC LIMIT 1) latest ON true
     WHERE latest.content_hash IS DISTINCT FROM i.content_hash
""")

# The changed records of a chunk in one statement, which also brings the entities' summary
# columns up to date.
INSERT_REVISIONS = sa.text("""
    WITH inserted AS (
        INSERT INTO content.entity_revisions
            (entity_id, source_record_key, content_hash, record, parser_version, raw_document_id, job_id)
        SELECT *
          FROM unnest(CAST(:entity_ids AS uuid[]), CAST(:keys AS text[]), CAST(:hashes AS text[]),
                      CAST(:records AS jsonb[]), CAST(:parser_versions AS text[]), CAST(:raw_document_ids AS uuid[]),
                      CAST(:job_ids AS uuid[]))
        RETURNING entity_id, record
    ),
    summarised AS (
        UPDATE content.entities e
           SET name = ins.record ->> 'name',
               legal_form = ins.record #>> '{legal_form,code}',
               seat = ins.record ->> 'seat',
               court_name = coalesce(ins.record #>> '{register,court_name}', e.court_name),
               updated_at = now()
          FROM inserted ins
         WHERE e.id = ins.entity_id
        RETURNING e.id
    )
    SELECT ins.entity_id::text FROM inserted ins
""")


def write_revisions(conn: sa.Connection, parsed: list[ParsedRecord]) -> set[str]:
    """Store the records whose content changed; returns the entity ids that got a new revision."""
    if not parsed:
        return set()
    keys = [p.key for p in parsed]
    hashes = [content_hash(p.record) for p in parsed]
    changed_keys = set(conn.execute(CHANGED_KEYS, {"keys": keys, "hashes": hashes}).scalars())
    changed = [(p, key, digest) for p, key, digest in zip(parsed, keys, hashes) if key in changed_keys]
    if not changed:
        return set()
    rows = conn.execute(
        INSERT_REVISIONS,
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
