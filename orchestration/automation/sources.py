"""Event sources: what happened since a cursor, and which rules it concerns.

Four streams feed the event-driven rules. Each is read from where the cursor stands, in the
order of (inserting transaction, id), and only up to the horizon: the oldest transaction still
running (db/sql/migrations/0004_event_horizon.sql). Below it every transaction has ended, so a row that
commits late is read late but never skipped, however the ids of concurrent writers interleave.

- content.entity_revisions: a new revision is a change of a company's record; it is compared
  with the previous revision of the same ``source_record_key`` to tell which fields changed. The
  first revision of a record has nothing to compare with and is no change.
- content.shareholder_lists: a valid list whose content differs from the company's previous
  valid list is a change of the field ``shareholders``.
- content.entities: a new company, for rules that match it against a saved search.
- processing.job_step_history: a transition to ``failed`` of a job that is still failed, i.e.
  one the database did not re-queue, is a permanent failure.
- content.register_announcements: an announcement of the register about a company we know
  (``orchestration.automation.announcements`` polls them).

The cursor only makes evaluation incremental: a rule fires at most once per event key
(automation.trigger_log), so reading an event twice is harmless.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from dataclasses import fields as dataclass_fields
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from orchestration.automation.monitoring_rules import CHANGE_FIELDS, Rule
from orchestration.automation.tables import watch_list

EVENT_SOURCE_TYPES = ("entity_changed", "search_match", "job_failed", "announcement_for_watched_company")


def _json_value(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)


@dataclass(frozen=True)
class Event:
    """Something that happened and may fire rules of ``source_type``."""

    source_type: str
    # Unique among the events of all sources; a rule fires at most once per key.
    key: str
    # What the frequency limit counts per: the company, or the search of a failed search job.
    subject_id: uuid.UUID
    entity_id: uuid.UUID | None
    occurred_at: datetime
    summary: str
    details: Mapping[str, Any] = field(default_factory=dict)
    changed_fields: frozenset[str] = frozenset()

    def as_json(self) -> dict[str, Any]:
        """The event as stored in the log and sent to webhooks."""
        document = {
            "type": self.source_type,
            "key": self.key,
            "entity_id": self.entity_id,
            "occurred_at": self.occurred_at,
            "summary": self.summary,
            **self.details,
        }
        return json.loads(json.dumps(document, default=_json_value))


# Where a stream stands: the (inserting transaction, id) of the last row read, (0, "") at the start.
Position = tuple[int, Any]
_START: Position = (0, "")


@dataclass(frozen=True)
class EventCursor:
    """How far each stream has been evaluated."""

    revision: Position = _START
    shareholder_list: Position = _START
    entity: Position = _START
    failure: Position = _START
    announcement: Position = _START

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> EventCursor | None:
        """The cursor ``to_json`` wrote; None for a cursor of an earlier format (positions by id
        alone), which cannot be carried over: evaluation then starts from the present. A stream
        the cursor does not know yet (added since) is read from its start."""
        document = json.loads(text)
        names = {f.name for f in dataclass_fields(cls)}
        if not set(document) <= names or not all(isinstance(p, list) and len(p) == 2 for p in document.values()):
            return None
        return cls(**{name: (int(xid), row_id) for name, (xid, row_id) in document.items()})

    @classmethod
    def at_end(cls, conn: sa.Connection) -> EventCursor:
        """A cursor past everything below the horizon now: monitoring starts from the present."""
        return cls(**{name: _stream_end(conn, stream) for name, stream in _STREAMS.items()})


@dataclass(frozen=True)
class _Stream:
    table: str
    id_type: str
    # The rows that can be events at all (the stream's index covers just these), with {a} for
    # the table's alias.
    condition: str = "true"

    def after(self, alias: str) -> str:
        """SQL: rows after the position :after_xid, :after_id and below the horizon."""
        return f"""({alias}.created_xid, {alias}.id) > (CAST(CAST(:after_xid AS text) AS xid8), CAST(:after_id AS {self.id_type}))
           AND {alias}.created_xid < pg_snapshot_xmin(pg_current_snapshot())
           AND {self.condition.format(a=alias)}"""

    def parameters(self, position: Position) -> dict[str, Any]:
        xid, row_id = position
        return {"after_xid": xid, "after_id": row_id or _ZERO_ID[self.id_type]}


_ZERO_ID = {"bigint": 0, "uuid": "00000000-0000-0000-0000-000000000000"}
_STREAMS = {
    "revision": _Stream("content.entity_revisions", "bigint"),
    "shareholder_list": _Stream("content.shareholder_lists", "bigint", "{a}.valid"),
    "entity": _Stream("content.entities", "uuid"),
    "failure": _Stream("processing.job_step_history", "bigint", "{a}.status = 'failed'"),
    "announcement": _Stream("content.register_announcements", "bigint", "{a}.entity_id IS NOT NULL"),
}


def _position(row: Any) -> Position:
    """The position of a row read with ``created_xid::text AS created_xid`` and ``id``."""
    return (int(row.created_xid), row.id if isinstance(row.id, int) else str(row.id))


def _stream_end(conn: sa.Connection, stream: _Stream) -> Position:
    row = conn.execute(
        sa.text(f"""
        SELECT t.created_xid::text AS created_xid, t.id FROM {stream.table} t
         WHERE t.created_xid < pg_snapshot_xmin(pg_current_snapshot()) AND {stream.condition.format(a="t")}
         ORDER BY t.created_xid DESC, t.id DESC
         LIMIT 1""")
    ).first()
    return _position(row) if row else _START


@dataclass(frozen=True)
class EventBatch:
    events: list[Event]
    cursor: EventCursor
    # Some stream returned a full batch: more events may be waiting.
    more: bool


_REVISIONS = sa.text(f"""
    SELECT r.id, r.created_xid::text AS created_xid, r.entity_id, r.created_at, r.record,
           p.id AS previous_id, p.record AS previous_record,
           e.name, e.court_code, e.register_type, e.register_number, e.register_suffix
      FROM content.entity_revisions r
      JOIN content.entities e ON e.id = r.entity_id
      LEFT JOIN LATERAL (
          SELECT p.id, p.record FROM content.entity_revisions p
           WHERE p.source_record_key = r.source_record_key AND p.id < r.id
           ORDER BY p.id DESC LIMIT 1) p ON true
     WHERE {_STREAMS["revision"].after("r")}
     ORDER BY r.created_xid, r.id
     LIMIT :limit
""")

_SHAREHOLDER_LISTS = sa.text(f"""
    SELECT l.id, l.created_xid::text AS created_xid, l.entity_id, l.created_at, p.id AS previous_id,
           p.content_hash <> l.content_hash AS changed,
           e.name, e.court_code, e.register_type, e.register_number, e.register_suffix
      FROM content.shareholder_lists l
      JOIN content.entities e ON e.id = l.entity_id
      LEFT JOIN LATERAL (
          SELECT p.id, p.content_hash FROM content.shareholder_lists p
           WHERE p.entity_id = l.entity_id AND p.id < l.id AND p.valid
           ORDER BY p.id DESC LIMIT 1) p ON true
     WHERE {_STREAMS["shareholder_list"].after("l")}
     ORDER BY l.created_xid, l.id
     LIMIT :limit
""")

_NEW_ENTITIES = sa.text(f"""
    SELECT e.id, e.created_xid::text AS created_xid, e.name, e.court_code, e.court_name, e.register_type,
           e.register_number, e.register_suffix, e.legal_form, e.seat, e.created_at
      FROM content.entities e
     WHERE {_STREAMS["entity"].after("e")}
     ORDER BY e.created_xid, e.id
     LIMIT :limit
""")

# Every failure transition moves the cursor; the permanent one is an event: its job is failed
# and it is the job's last attempt (an earlier attempt's failure was re-queued, even when the
# job has failed for good by the time it is read).
_FAILURES = sa.text(f"""
    SELECT h.id, h.created_xid::text AS created_xid, h.created_at,
           j.status = 'failed' AND h.attempt_number = j.retry_count + 1 AS permanent,
           j.id AS job_id, j.type AS job_type, j.failure_class, j.entity_id,
           j.search_id, j.retry_count, j.result -> 'error' AS error,
           e.name, e.court_code, e.register_type, e.register_number, e.register_suffix
      FROM processing.job_step_history h
      JOIN processing.processing_jobs j ON j.id = h.job_id
      LEFT JOIN content.entities e ON e.id = j.entity_id
     WHERE {_STREAMS["failure"].after("h")}
     ORDER BY h.created_xid, h.id
     LIMIT :limit
""")


_ANNOUNCEMENTS = sa.text(f"""
    SELECT a.id, a.created_xid::text AS created_xid, a.entity_id, a.created_at, a.portal_id, a.published,
           a.category, a.category_code,
           e.name, e.court_code, e.register_type, e.register_number, e.register_suffix
      FROM content.register_announcements a
      JOIN content.entities e ON e.id = a.entity_id
     WHERE {_STREAMS["announcement"].after("a")}
     ORDER BY a.created_xid, a.id
     LIMIT :limit
""")


def _entity_details(row: Any) -> dict[str, Any]:
    return {
        "name": row.name,
        "court_code": row.court_code,
        "register_type": row.register_type,
        "register_number": row.register_number,
        "register_suffix": row.register_suffix,
    }


# Fields that say how a record was made, not what the company is: a re-parse with a new parser
# changes them without any change in the register.
_PROVENANCE_FIELDS = frozenset({"parser_version", "source"})


def changed_fields(record: Mapping[str, Any], previous: Mapping[str, Any]) -> frozenset[str]:
    """Top-level fields of a company record whose values differ between two revisions."""
    keys = (set(record) | set(previous)) - _PROVENANCE_FIELDS
    return frozenset(key for key in keys if record.get(key) != previous.get(key))


def _revision_events(rows: Sequence[Any]) -> list[Event]:
    events = []
    for row in rows:
        if row.previous_id is None:
            continue
        fields = changed_fields(row.record, row.previous_record)
        if not fields:
            continue
        # Old and new values of the fields rules can choose; other fields (register entries) are long.
        reported = sorted(fields & set(CHANGE_FIELDS))
        events.append(
            Event(
                source_type="entity_changed",
                key=f"revision:{row.id}",
                subject_id=row.entity_id,
                entity_id=row.entity_id,
                occurred_at=row.created_at,
                summary=f"{row.name}: {', '.join(sorted(fields))} changed",
                details={
                    **_entity_details(row),
                    "revision_id": row.id,
                    "previous_revision_id": row.previous_id,
                    "changed_fields": sorted(fields),
                    "changes": {f: {"old": row.previous_record.get(f), "new": row.record.get(f)} for f in reported},
                },
                changed_fields=fields,
            )
        )
    return events


def _shareholder_events(rows: Sequence[Any]) -> list[Event]:
    events = [
        Event(
            source_type="entity_changed",
            key=f"shareholder_list:{row.id}",
            subject_id=row.entity_id,
            entity_id=row.entity_id,
            occurred_at=row.created_at,
            summary=f"{row.name}: shareholders changed",
            details={
                **_entity_details(row),
                "shareholder_list_id": row.id,
                "previous_shareholder_list_id": row.previous_id,
                "changed_fields": ["shareholders"],
            },
            changed_fields=frozenset({"shareholders"}),
        )
        for row in rows
        if row.changed
    ]
    return events


def _new_entity_events(rows: Sequence[Any]) -> list[Event]:
    events = [
        Event(
            source_type="search_match",
            key=f"entity:{row.id}",
            subject_id=row.id,
            entity_id=row.id,
            occurred_at=row.created_at,
            summary=f"New company {row.name}",
            details={
                **_entity_details(row),
                "court_name": row.court_name,
                "legal_form": row.legal_form,
                "seat": row.seat,
            },
        )
        for row in rows
    ]
    return events


def _failure_events(rows: Sequence[Any]) -> list[Event]:
    events = []
    for row in rows:
        if not row.permanent:
            continue
        subject = row.entity_id or row.search_id
        what = row.name if row.entity_id else f"search {row.search_id}"
        error = row.error or {}
        events.append(
            Event(
                source_type="job_failed",
                key=f"job_failure:{row.id}",
                subject_id=subject,
                entity_id=row.entity_id,
                occurred_at=row.created_at,
                summary=f"{row.job_type} failed permanently ({row.failure_class or 'retries exhausted'}) for {what}",
                details={
                    **(_entity_details(row) if row.entity_id else {}),
                    "job_id": row.job_id,
                    "job_type": row.job_type,
                    "failure_class": row.failure_class,
                    "error_message": error.get("message"),
                    "search_id": row.search_id,
                    "attempts": row.retry_count + 1,
                },
            )
        )
    return events


def _announcement_events(rows: Sequence[Any]) -> list[Event]:
    return [
        Event(
            source_type="announcement_for_watched_company",
            key=f"announcement:{row.id}",
            subject_id=row.entity_id,
            entity_id=row.entity_id,
            occurred_at=row.created_at,
            summary=f"{row.name}: {row.category} ({row.published:%d.%m.%Y})",
            details={
                **_entity_details(row),
                "announcement_id": row.portal_id,
                "published": row.published.isoformat(),
                "category": row.category,
                "category_code": row.category_code,
            },
        )
        for row in rows
    ]


_READERS: dict[str, tuple[sa.TextClause, Callable[[Sequence[Any]], list[Event]]]] = {
    "revision": (_REVISIONS, _revision_events),
    "shareholder_list": (_SHAREHOLDER_LISTS, _shareholder_events),
    "entity": (_NEW_ENTITIES, _new_entity_events),
    "failure": (_FAILURES, _failure_events),
    "announcement": (_ANNOUNCEMENTS, _announcement_events),
}


def _read_stream(conn: sa.Connection, name: str, after: Position, limit: int) -> tuple[list[Event], Position, bool]:
    """The events among the next ``limit`` rows of a stream, its new position, and whether the
    batch was full (more rows may be waiting)."""
    statement, to_events = _READERS[name]
    rows = conn.execute(statement, {**_STREAMS[name].parameters(after), "limit": limit}).all()
    return to_events(rows), _position(rows[-1]) if rows else after, len(rows) == limit


def _reads_shareholder_lists(rule: Rule) -> bool:
    return rule.source_type == "entity_changed" and (not rule.change_fields or "shareholders" in rule.change_fields)


def collect_events(conn: sa.Connection, cursor: EventCursor, rules: Iterable[Rule], limit: int) -> EventBatch:
    """The next events after ``cursor`` in every stream that some rule listens to.

    Streams no rule listens to move straight to their end, so that a rule created later starts
    from the present instead of scanning history."""
    rules = list(rules)
    kinds = {rule.source_type for rule in rules}
    listened_to = {
        "revision": "entity_changed" in kinds,
        "shareholder_list": any(_reads_shareholder_lists(rule) for rule in rules),
        "entity": "search_match" in kinds,
        "failure": "job_failed" in kinds,
        "announcement": "announcement_for_watched_company" in kinds,
    }
    events: list[Event] = []
    more = False
    position: dict[str, Position] = {}
    for name, listened in listened_to.items():
        if listened:
            found, position[name], full = _read_stream(conn, name, getattr(cursor, name), limit)
            events += found
            more |= full
        else:
            position[name] = _stream_end(conn, _STREAMS[name])
    return EventBatch(events=events, cursor=replace(cursor, **position), more=more)


# Who watches what ----------------------------------------------------------------------------

Watchers = Mapping[uuid.UUID, set[tuple[uuid.UUID, int | None]]]


def load_watchers(conn: sa.Connection, entity_ids: Iterable[uuid.UUID]) -> Watchers:
    """For each company: the (organization, rule or None) watch-list entries that name it."""
    ids = list({e for e in entity_ids if e is not None})
    watchers: dict[uuid.UUID, set[tuple[uuid.UUID, int | None]]] = {}
    if not ids:
        return watchers
    rows = conn.execute(
        sa.select(watch_list.c.entity_id, watch_list.c.organization_id, watch_list.c.trigger_rule_id).where(
            watch_list.c.entity_id.in_(ids)
        )
    )
    for row in rows:
        watchers.setdefault(row.entity_id, set()).add((row.organization_id, row.trigger_rule_id))
    return watchers


def rule_watches(rule: Rule, entity_id: uuid.UUID | None, watchers: Watchers) -> bool:
    if rule.watch_scope == "all":
        return True
    if entity_id is None:
        return False
    entry = (rule.organization_id, rule.id if rule.watch_scope == "rule" else None)
    return entry in watchers.get(entity_id, ())


# Saved searches ------------------------------------------------------------------------------

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class SavedSearch:
    """The criteria of a row of public.searches, matched against a company as the portal would."""

    id: uuid.UUID
    query: str
    mode: str
    register_type: str | None
    court: str | None

    def matches(self, company: Mapping[str, Any]) -> bool:
        """``company``: name, register_type, court_code and court_name, as in a new-company event."""
        name = company["name"]
        if self.register_type and company["register_type"] != self.register_type:
            return False
        courts = {company["court_code"].casefold(), (company.get("court_name") or "").casefold()}
        if self.court and self.court.casefold() not in courts:
            return False
        if self.mode == "exact":
            return " ".join(name.casefold().split()) == " ".join(self.query.casefold().split())
        wanted = set(_WORD.findall(self.query.casefold()))
        present = set(_WORD.findall(name.casefold()))
        return wanted <= present if self.mode == "all" else bool(wanted & present)


def load_saved_searches(conn: sa.Connection, rules: Iterable[Rule]) -> dict[uuid.UUID, SavedSearch]:
    ids = [rule.source_config["search_id"] for rule in rules if rule.source_type == "search_match"]
    if not ids:
        return {}
    rows = conn.execute(
        sa.text(
            "SELECT id, query, mode, register_type, court FROM public.searches WHERE id = ANY(CAST(:ids AS uuid[]))"
        ),
        {"ids": ids},
    )
    return {row.id: SavedSearch(**row._mapping) for row in rows}


def rule_accepts(rule: Rule, event: Event, watchers: Watchers, searches: Mapping[uuid.UUID, SavedSearch]) -> bool:
    """Whether ``event`` fires ``rule`` (before frequency and cooldown are considered).

    What happened before the rule existed does not fire it: the results a saved search found
    before its rule was made are not news to whoever made it."""
    if event.source_type != rule.source_type or event.occurred_at < rule.created_date:
        return False
    if rule.source_type == "entity_changed":
        wanted = rule.change_fields
        return (not wanted or bool(wanted & event.changed_fields)) and rule_watches(rule, event.entity_id, watchers)
    if rule.source_type == "search_match":
        search = searches.get(uuid.UUID(rule.source_config["search_id"]))
        return search is not None and search.matches(event.details)
    if rule.source_type == "announcement_for_watched_company":
        categories = rule.source_config.get("categories")
        return (not categories or event.details["category_code"] in categories) and rule_watches(
            rule, event.entity_id, watchers
        )
    if rule.source_type == "job_failed":
        config = rule.source_config
        d = event.details
        return (
            ("job_types" not in config or d["job_type"] in config["job_types"])
            and ("failure_classes" not in config or d["failure_class"] in config["failure_classes"])
            and rule_watches(rule, event.entity_id, watchers)
        )
    return False
