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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from dataclasses import fields as dataclass_fields
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from orchestration.automation.monitoring_rules import CHANGE_FIELDS, Rule
from orchestration.db import queries

QUERIES = queries.load("automation")

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
    # The stream's queries in db/sql/queries/automation.sql: <reads>_after and <reads>_end.
    reads: str
    # Where a stream of this id type stands before its first row.
    zero_id: Any = 0

    def parameters(self, position: Position) -> dict[str, Any]:
        xid, row_id = position
        return {"after_xid": xid, "after_id": row_id or self.zero_id}


_STREAMS = {
    "revision": _Stream("revisions"),
    "shareholder_list": _Stream("shareholder_lists"),
    "entity": _Stream("entities", "00000000-0000-0000-0000-000000000000"),
    "failure": _Stream("failures"),
    "announcement": _Stream("announcements"),
}


def _position(row: Any) -> Position:
    """The position of a row read with ``created_xid::text AS created_xid`` and ``id``."""
    return (int(row.created_xid), row.id if isinstance(row.id, int) else str(row.id))


def _stream_end(conn: sa.Connection, stream: _Stream) -> Position:
    row = conn.execute(QUERIES[f"{stream.reads}_end"]).first()
    return _position(row) if row else _START


@dataclass(frozen=True)
class EventBatch:
    events: list[Event]
    cursor: EventCursor
    # Some stream returned a full batch: more events may be waiting.
    more: bool


def _entity_details(row: Any) -> dict[str, Any]:
    return {
        "name": row.name,
        "court_code": row.court_code,
        "register_type": row.register_type,
        "register_number": row.register_number,
        "register_suffix": row.register_suffix,
    }


def _event(
    row: Any,
    source_type: str,
    key: str,
    summary: str,
    details: Mapping[str, Any],
    *,
    subject_id: uuid.UUID | None = None,
    changed_fields: frozenset[str] = frozenset(),
) -> Event:
    """The event of a stream's row, which says when it happened (``created_at``) and which company
    it concerns (``entity_id``, with its register details, or None)."""
    return Event(
        source_type=source_type,
        key=key,
        subject_id=subject_id or row.entity_id,
        entity_id=row.entity_id,
        occurred_at=row.created_at,
        summary=summary,
        details={**(_entity_details(row) if row.entity_id else {}), **details},
        changed_fields=changed_fields,
    )


# Fields that say how a record was made, not what the company is: a re-parse with a new parser
# changes them without any change in the register.
_PROVENANCE_FIELDS = frozenset({"parser_version", "source"})


def changed_fields(record: Mapping[str, Any], previous: Mapping[str, Any]) -> frozenset[str]:
    """Top-level fields of a company record whose values differ between two revisions."""
    keys = (set(record) | set(previous)) - _PROVENANCE_FIELDS
    return frozenset(key for key in keys if record.get(key) != previous.get(key))


def _revision_event(row: Any) -> Event | None:
    if row.previous_id is None:
        return None
    fields = changed_fields(row.record, row.previous_record)
    if not fields:
        return None
    # Old and new values of the fields rules can choose; other fields (register entries) are long.
    reported = sorted(fields & set(CHANGE_FIELDS))
    return _event(
        row,
        "entity_changed",
        f"revision:{row.id}",
        f"{row.name}: {', '.join(sorted(fields))} changed",
        {
            "revision_id": row.id,
            "previous_revision_id": row.previous_id,
            "changed_fields": sorted(fields),
            "changes": {f: {"old": row.previous_record.get(f), "new": row.record.get(f)} for f in reported},
        },
        changed_fields=fields,
    )


def _shareholder_event(row: Any) -> Event | None:
    if not row.changed:
        return None
    return _event(
        row,
        "entity_changed",
        f"shareholder_list:{row.id}",
        f"{row.name}: shareholders changed",
        {
            "shareholder_list_id": row.id,
            "previous_shareholder_list_id": row.previous_id,
            "changed_fields": ["shareholders"],
        },
        changed_fields=frozenset({"shareholders"}),
    )


def _new_entity_event(row: Any) -> Event:
    return _event(
        row,
        "search_match",
        f"entity:{row.id}",
        f"New company {row.name}",
        {"court_name": row.court_name, "legal_form": row.legal_form, "seat": row.seat},
    )


def _failure_event(row: Any) -> Event | None:
    if not row.permanent:
        return None
    what = row.name if row.entity_id else f"search {row.search_id}"
    return _event(
        row,
        "job_failed",
        f"job_failure:{row.id}",
        f"{row.job_type} failed permanently ({row.failure_class or 'retries exhausted'}) for {what}",
        {
            "job_id": row.job_id,
            "job_type": row.job_type,
            "failure_class": row.failure_class,
            "error_message": (row.error or {}).get("message"),
            "search_id": row.search_id,
            "attempts": row.retry_count + 1,
        },
        subject_id=row.entity_id or row.search_id,
    )


def _announcement_event(row: Any) -> Event:
    return _event(
        row,
        "announcement_for_watched_company",
        f"announcement:{row.id}",
        f"{row.name}: {row.category} ({row.published:%d.%m.%Y})",
        {
            "announcement_id": row.portal_id,
            "published": row.published.isoformat(),
            "category": row.category,
            "category_code": row.category_code,
        },
    )


# Each stream's rows become events one by one; a row that is no event (None) still moves the cursor.
_TO_EVENT: dict[str, Callable[[Any], Event | None]] = {
    "revision": _revision_event,
    "shareholder_list": _shareholder_event,
    "entity": _new_entity_event,
    "failure": _failure_event,
    "announcement": _announcement_event,
}


def _read_stream(conn: sa.Connection, name: str, after: Position, limit: int) -> tuple[list[Event], Position, bool]:
    """The events among the next ``limit`` rows of a stream, its new position, and whether the
    batch was full (more rows may be waiting)."""
    stream = _STREAMS[name]
    rows = conn.execute(QUERIES[f"{stream.reads}_after"], {**stream.parameters(after), "limit": limit}).all()
    events = [event for event in map(_TO_EVENT[name], rows) if event is not None]
    return events, _position(rows[-1]) if rows else after, len(rows) == limit


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


def load_watchers(conn: sa.Connection, entity_ids: Iterable[uuid.UUID | None]) -> Watchers:
    """For each company: the (organization, rule or None) watch-list entries that name it."""
    ids = list({e for e in entity_ids if e is not None})
    watchers: dict[uuid.UUID, set[tuple[uuid.UUID, int | None]]] = {}
    if not ids:
        return watchers
    rows = conn.execute(QUERIES["watchers"], {"entity_ids": ids})
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
    rows = conn.execute(QUERIES["saved_searches"], {"ids": ids})
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
