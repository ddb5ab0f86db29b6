"""Register announcements as an event source: which watched companies changed, for a few
retrievals a day instead of one per company.

``poll_announcements`` reads one results page per register court and day: the courts of the
companies that live ``announcement_for_watched_company`` rules watch, each day that has ended
since the last one read (yesterday, on the first poll of a court). A day is read once, when it is
complete, so a daily poll costs one page per watched court. Announcements are stored in
content.register_announcements, matched to the companies we know; the rule evaluator reads them
as events (``sources``), and a rule's action, typically ``enqueue_job`` with ``rediscovery`` or
``shareholder_research``, refreshes just the companies they name.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import date, timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from orchestration.automation.monitoring_rules import live_rules
from orchestration.db import queries
from orchestration.register.client import RegisterClient
from orchestration.register.results import Announcement
from orchestration.runtime.failures import JobError

QUERIES = queries.load("automation")

log = logging.getLogger(__name__)

SOURCE_TYPE = "announcement_for_watched_company"
# How far back the first poll of a court reaches, in ended days.
FIRST_POLL_DAYS = 1


@dataclass
class PollSummary:
    pages: int = 0  # results pages read: one per court and day
    announcements: int = 0  # new announcements stored
    of_known_companies: int = 0  # of those, about a company we know
    errors: list[str] = field(default_factory=list)

    def describe(self) -> str:
        failed = f"; {len(self.errors)} failed: {'; '.join(self.errors)}" if self.errors else ""
        return (
            f"{self.pages} announcement pages read, {self.announcements} new announcements, "
            f"{self.of_known_companies} about known companies{failed}"
        )


def watched_courts(conn: sa.Connection) -> list[str]:
    """The courts of the companies some live announcement rule watches."""
    rules = live_rules(conn, [SOURCE_TYPE])
    if not rules:
        return []
    # Organization scope: the organization's watch list; rule scope: the rule's own list.
    organizations = sorted({str(r.organization_id) for r in rules if r.watch_scope == "organization"})
    own_lists = sorted({r.id for r in rules if r.watch_scope == "rule"})
    every = any(r.watch_scope == "all" for r in rules)
    rows = conn.execute(
        QUERIES["watched_courts"], {"all_companies": every, "organizations": organizations, "rules": own_lists}
    )
    return [row.court_code for row in rows]


def _days_to_poll(conn: sa.Connection, court_code: str, today: date) -> list[date]:
    """The ended days not read yet, oldest first."""
    last = conn.execute(QUERIES["last_day_read"], {"court_code": court_code}).scalar()
    first = last + timedelta(days=1) if last else today - timedelta(days=FIRST_POLL_DAYS)
    return [first + timedelta(days=n) for n in range((today - first).days)]


def _store(conn: sa.Connection, court_code: str, found: list[Announcement]) -> tuple[int, int]:
    new = known = 0
    for a in found:
        row = conn.execute(
            QUERIES["store_announcement"],
            {
                "portal_id": a.id,
                "published": a.published,
                "category": a.category,
                "category_code": a.category_code,
                "court_code": court_code,
                "register_type": a.register_type,
                "register_number": a.register_number,
                "register_suffix": a.register_suffix,
                "name": a.name,
                "seat": a.seat,
            },
        ).first()
        if row is not None:
            new += 1
            known += row.entity_id is not None
    return new, known


def poll_announcements(engine: Engine, client: RegisterClient, *, today: date | None = None) -> PollSummary:
    """Read the announcement pages of ended days not read yet for the watched courts (see the
    module docstring); ``today`` is the first day not to read.

    A court whose page cannot be read is reported and tried again at the next poll; the others go on."""
    today = today or date.today()
    summary = PollSummary()
    with engine.begin() as conn:
        courts = watched_courts(conn)
    for court_code in courts:
        with engine.begin() as conn:
            days = _days_to_poll(conn, court_code, today)
        for day in days:
            try:
                found = client.search_announcements(day, day, court=court_code)
            except (JobError, ValueError) as exc:
                log.warning("announcements of %s on %s: %s", court_code, day, exc)
                summary.errors.append(f"{court_code} {day:%d.%m.%Y}: {exc}")
                break
            summary.pages += 1
            with engine.begin() as conn:
                new, known = _store(conn, court_code, found)
                conn.execute(QUERIES["record_poll"], {"court_code": court_code, "day": day, "found": len(found)})
            summary.announcements += new
            summary.of_known_companies += known
    return summary
