"""Scheduled rules: periodic re-checks of watched companies.

When a rule's cron expression comes due, every company it watches is handed to its action,
typically a re-discovery, which yields a new revision when the register changed and so a change
event for the entity_changed rules. Only the latest due time runs: a daemon that was down does
not catch up on every missed one. The unique (rule, scheduled_at) constraint of
automation.scheduled_trigger_execution makes each scheduled time run once, whoever evaluates.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from croniter import croniter
from sqlalchemy.engine import Engine

from orchestration.automation.firing import FiringOutcome, fire, fired_within
from orchestration.automation.monitoring_rules import Rule, live_rules
from orchestration.automation.sources import Event
from orchestration.db import queries

QUERIES = queries.load("automation")


def latest_due_time(cron: str, timezone_name: str, now: datetime) -> datetime:
    """The latest time at or before ``now`` that ``cron`` names, in ``timezone_name``."""
    minute = now.astimezone(ZoneInfo(timezone_name)).replace(second=0, microsecond=0)
    if croniter.match(cron, minute):
        return minute
    return croniter(cron, minute).get_prev(datetime)


@dataclass(frozen=True)
class ScheduledRun:
    rule_id: int
    scheduled_at: datetime
    status: str
    total: int = 0
    processed: int = 0
    failed: int = 0
    error: str | None = None


def _claim_run(conn: sa.Connection, rule: Rule, now: datetime) -> datetime | None:
    """Insert the execution row of the rule's latest due time; None when it is not due or taken."""
    due = latest_due_time(rule.source_config["cron"], rule.source_config.get("timezone", "UTC"), now)
    last = conn.execute(QUERIES["last_scheduled_time"], {"rule_id": rule.id}).scalar()
    if due <= max(filter(None, (last, rule.created_date))):
        return None
    claimed = conn.execute(QUERIES["claim_scheduled_time"], {"rule_id": rule.id, "scheduled_at": due}).first()
    return due if claimed else None


def _finish_run(conn: sa.Connection, run: ScheduledRun) -> None:
    conn.execute(
        QUERIES["finish_scheduled_run"],
        {
            "rule_id": run.rule_id,
            "scheduled_at": run.scheduled_at,
            "status": run.status,
            "total": run.total,
            "processed": run.processed,
            "failed": run.failed,
            "error_message": run.error,
        },
    )


def _run(conn: sa.Connection, rule: Rule, scheduled_at: datetime) -> ScheduledRun:
    with conn.begin():
        if rule.cooldown_seconds is not None and fired_within(conn, rule.id, rule.cooldown_seconds):
            return ScheduledRun(rule.id, scheduled_at, "skipped", error="the rule is cooling down")
        scope_rule_id = rule.id if rule.watch_scope == "rule" else None
        entities = conn.execute(
            QUERIES["watched_entities"], {"organization_id": rule.organization_id, "rule_id": scope_rule_id}
        ).all()
    outcomes = [
        fire(
            conn,
            rule,
            Event(
                source_type="schedule",
                key=f"schedule:{scheduled_at.isoformat()}:{row.id}",
                subject_id=row.id,
                entity_id=row.id,
                occurred_at=scheduled_at,
                summary=f"Scheduled re-check of {row.name}",
                details={
                    "name": row.name,
                    "court_code": row.court_code,
                    "register_type": row.register_type,
                    "register_number": row.register_number,
                    "register_suffix": row.register_suffix,
                    "scheduled_at": scheduled_at,
                },
            ),
            apply_cooldown=False,
        )
        for row in entities
    ]
    return ScheduledRun(
        rule.id,
        scheduled_at,
        "completed",
        total=len(entities),
        processed=sum(o in (FiringOutcome.SUCCEEDED, FiringOutcome.SCHEDULED) for o in outcomes),
        failed=outcomes.count(FiringOutcome.FAILED),
    )


def run_scheduled_rules(engine: Engine, now: datetime | None = None) -> list[ScheduledRun]:
    """Run every scheduled rule whose cron expression came due; returns the runs this call made.

    A run another evaluator claimed first is not repeated here."""
    now = now or datetime.now(UTC)
    runs = []
    with engine.connect() as conn:
        with conn.begin():
            rules = live_rules(conn, ("schedule",))
        for rule in rules:
            with conn.begin():
                scheduled_at = _claim_run(conn, rule, now)
            if scheduled_at is None:
                continue
            try:
                run = _run(conn, rule, scheduled_at)
            except Exception as exc:  # recorded on the run; the other rules still run
                if conn.in_transaction():
                    conn.rollback()
                run = ScheduledRun(rule.id, scheduled_at, "failed", error=f"{type(exc).__name__}: {exc}")
            with conn.begin():
                _finish_run(conn, run)
            runs.append(run)
    return runs
