"""Actions, and the queue of actions that run later (automation.scheduled_action).

Database actions (enqueue a job, write a notification) run in the transaction that logs the
firing, unless the rule delays them. Webhooks, delayed actions and retries go through
scheduled_action: ``run_due_actions`` claims due rows with ``FOR UPDATE SKIP LOCKED``, so two
evaluators never run the same action, and an action whose ``expires_at`` has passed never runs.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from time import monotonic
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from orchestration.automation import webhooks
from orchestration.automation.monitoring_rules import Rule, get_rule
from orchestration.automation.webhooks import Network
from orchestration.db import queries
from orchestration.records import companies

QUERIES = queries.load("automation")

RETRY_BACKOFF_BASE_S = 30
RETRY_BACKOFF_CAP_S = 3600
# A claim older than this belongs to an evaluator that died; the action is due again.
STALE_CLAIM_S = 300

# The outcome a settled scheduled action gives the firing it belongs to.
_LOG_STATUS = {"completed": "success", "failed": "failed", "expired": "expired", "cancelled": "cancelled"}


class ActionError(Exception):
    """An action that cannot be carried out for this event."""


def describe_error(exc: Exception) -> str:
    """One line a person can act on; driver errors carry their SQL and parameters otherwise."""
    if isinstance(exc, sa.exc.DBAPIError) and exc.orig is not None:
        return str(exc.orig).strip().splitlines()[0]
    return str(exc)


def execute_database_action(
    conn: sa.Connection,
    rule: Rule,
    action_type: str,
    action_config: Mapping[str, Any],
    event: Mapping[str, Any],
    trigger_log_id: int,
) -> None:
    """Run an action that only writes to the database, in the caller's transaction."""
    if action_type == "enqueue_job":
        if not event.get("entity_id"):
            raise ActionError("the event concerns no company, so no job can be queued for it")
        if action_config["job"] == "rediscovery":
            companies.request_rediscovery(
                conn, event["entity_id"], rule.created_by, f"re-check by monitoring rule {rule.id} ({rule.name})"
            )
        else:
            companies.request_shareholder_research(conn, event["entity_id"], rule.created_by, "background")
    elif action_type == "notification":
        conn.execute(
            QUERIES["insert_notification"],
            {
                "organization_id": rule.organization_id,
                "user_id": action_config.get("user_id"),
                "rule_id": rule.id,
                "trigger_log_id": trigger_log_id,
                "entity_id": event.get("entity_id"),
                "title": event["summary"],
                "event": json.dumps(event),
            },
        )
    else:
        raise ValueError(f"{action_type} is not a database action")


def schedule_action(
    conn: sa.Connection,
    rule: Rule,
    subject_id: uuid.UUID,
    event: Mapping[str, Any],
    trigger_log_id: int,
) -> int:
    """Queue the rule's action for later; its expiry counts from when it is due."""
    config = rule.action_config
    expires_after = config.get("expires_after_seconds")
    return conn.execute(
        QUERIES["schedule_action"],
        {
            "rule_id": rule.id,
            "trigger_log_id": trigger_log_id,
            "subject_id": subject_id,
            "organization_id": rule.organization_id,
            "action_type": rule.action_type,
            "action_config": json.dumps(config),
            "source_config": json.dumps(rule.source_config),
            "event": json.dumps(event),
            "delay": timedelta(seconds=rule.delay_seconds),
            "expires_after": timedelta(seconds=expires_after) if expires_after else None,
            "max_retries": config.get("max_retries", 0),
        },
    ).scalar_one()


@dataclass
class DeliverySummary:
    completed: int = 0
    retried: int = 0
    failed: int = 0
    expired: int = 0
    cancelled: int = 0

    def count(self, status: str) -> None:
        setattr(self, status, getattr(self, status) + 1)


_STALE_CLAIM = {"stale_after": timedelta(seconds=STALE_CLAIM_S)}


def _settle_firing(conn: sa.Connection, trigger_log_id: int | None, status: str, error: str | None) -> None:
    if trigger_log_id is not None:
        conn.execute(QUERIES["settle_firing"], {"id": trigger_log_id, "status": status, "error_message": error})


def _settle(conn: sa.Connection, action: sa.Row, status: str, error: str | None = None) -> None:
    """Give a scheduled action its final status, and the firing it belongs to its outcome."""
    conn.execute(
        QUERIES["settle_action"],
        # It ran when it completed or failed; an expired or cancelled action never ran.
        {"id": action.id, "status": status, "error": error, "ran": status in ("completed", "failed")},
    )
    # A success after retries leaves the failed attempts in the action's last_error only.
    log_error = None if status == "completed" else error or action.last_error
    _settle_firing(conn, action.trigger_log_id, _LOG_STATUS[status], log_error)


def _retry_or_fail(conn: sa.Connection, action: sa.Row, error: str, retryable: bool) -> str:
    attempt = action.retry_count + 1
    if not retryable or action.retry_count >= action.max_retries:
        _settle(conn, action, "failed", f"attempt {attempt}: {error}")
        return "failed"
    retry_at = datetime.now(UTC) + timedelta(
        seconds=min(RETRY_BACKOFF_CAP_S, RETRY_BACKOFF_BASE_S * 2**action.retry_count)
    )
    if action.expires_at is not None and retry_at >= action.expires_at:
        _settle(conn, action, "expired", f"attempt {attempt}: {error}; no retry before it expires")
        return "expired"
    message = f"attempt {attempt}: {error}; retrying at {retry_at.isoformat(timespec='seconds')}"
    conn.execute(
        QUERIES["retry_action"],
        {"id": action.id, "retry_count": attempt, "execute_at": retry_at, "last_error": message},
    )
    if action.trigger_log_id is not None:
        conn.execute(QUERIES["note_firing_error"], {"id": action.trigger_log_id, "error_message": message})
    return "retried"


def expire_overdue(conn: sa.Connection) -> int:
    """Mark every waiting action whose expiry has passed as expired; returns how many."""
    expired = conn.execute(QUERIES["expire_overdue_actions"], _STALE_CLAIM).all()
    for row in expired:
        _settle_firing(conn, row.trigger_log_id, "expired", row.last_error or "expired before it could run")
    return len(expired)


def claim_due_actions(conn: sa.Connection, limit: int) -> Sequence[sa.Row]:
    """Take up to ``limit`` due, unexpired actions; concurrent claimers get disjoint sets."""
    return conn.execute(QUERIES["claim_due_actions"], {**_STALE_CLAIM, "limit": limit}).all()


def _run_claimed(conn: sa.Connection, action: sa.Row, allowed_networks: Sequence[Network]) -> str:
    """Run one claimed action and record how it went; returns its status (or ``retried``)."""
    with conn.begin():
        rule = get_rule(conn, action.trigger_rule_id)
    if rule is None or not rule.live:
        with conn.begin():
            _settle(conn, action, "cancelled", "the rule was disabled or deleted before the action ran")
        return "cancelled"
    if action.expires_at is not None and action.expires_at <= datetime.now(UTC):
        with conn.begin():
            _settle(conn, action, "expired", action.last_error or "expired before it could run")
        return "expired"

    if action.action_type == "webhook":
        config = action.action_config
        payload = {
            "delivery_id": str(action.id),
            "attempt": action.retry_count + 1,
            "organization_id": str(action.organization_id),
            "rule": {"id": rule.id, "name": rule.name, "source_type": rule.source_type},
            "event": action.event,
        }
        try:
            webhooks.post(
                config["url"],
                config["secret"],
                payload,
                delivery_id=str(action.id),
                event_type=action.event.get("type", ""),
                timeout_s=config["timeout_seconds"],
                allowed_networks=allowed_networks,
            )
        except webhooks.WebhookError as exc:
            with conn.begin():
                return _retry_or_fail(conn, action, str(exc), exc.retryable)
        with conn.begin():
            _settle(conn, action, "completed")
        return "completed"

    with conn.begin():
        try:
            with conn.begin_nested():
                execute_database_action(
                    conn, rule, action.action_type, action.action_config, action.event, action.trigger_log_id
                )
        except (ActionError, sa.exc.DBAPIError) as exc:
            # The database answers the same way next time: no retry.
            _settle(conn, action, "failed", describe_error(exc))
            return "failed"
        _settle(conn, action, "completed")
    return "completed"


def run_due_actions(
    engine: Engine,
    *,
    allowed_networks: Sequence[Network] = (),
    limit: int = 100,
    time_budget_s: float = 20.0,
) -> DeliverySummary:
    """Expire overdue actions, then run due ones until ``limit`` or the time budget is used up;
    webhooks reach public addresses and ``allowed_networks`` (HREG_WEBHOOK_ALLOWED_NETWORKS).

    Actions are claimed one at a time, so that those left when the budget ends stay pending for
    the next call instead of waiting for a claim to go stale."""
    summary = DeliverySummary()
    deadline = monotonic() + time_budget_s
    with engine.connect() as conn:
        with conn.begin():
            summary.expired += expire_overdue(conn)
        for _ in range(limit):
            if monotonic() >= deadline:
                break
            with conn.begin():
                claimed = claim_due_actions(conn, 1)
            if not claimed:
                break
            summary.count(_run_claimed(conn, claimed[0], allowed_networks))
    return summary
