"""Firing a rule for one event: frequency and cooldown, the log row, and the action.

Each firing is one transaction holding an advisory lock on its rule, so that concurrent
evaluators see each other's firings when they check the limits; the unique (rule, event key)
index of automation.trigger_log makes a rule fire at most once per event.
"""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from enum import StrEnum

import sqlalchemy as sa

from orchestration.automation.actions import ActionError, describe_error, execute_database_action, schedule_action
from orchestration.automation.monitoring_rules import FREQUENCY_WINDOW_SECONDS, Rule
from orchestration.automation.sources import Event
from orchestration.db import queries

QUERIES = queries.load("automation")

# First key of the advisory locks on rules ("hrea"); the second is the rule id.
_RULE_LOCK_CLASS = 0x68726561


class FiringOutcome(StrEnum):
    """What firing one rule for one event came to (a job's outcome is ``worker.Outcome``)."""

    SUCCEEDED = "succeeded"  # the action ran at once and succeeded
    FAILED = "failed"  # the action ran at once and failed
    SCHEDULED = "scheduled"  # the action waits in automation.scheduled_action
    HELD_BACK = "held_back"  # frequency or cooldown: the rule did not fire
    ALREADY_FIRED = "already_fired"  # the rule fired for this event before

    @property
    def fired(self) -> bool:
        return self in (FiringOutcome.SUCCEEDED, FiringOutcome.FAILED, FiringOutcome.SCHEDULED)


def fired_within(conn: sa.Connection, rule_id: int, seconds: int | None, subject_id: uuid.UUID | None = None) -> bool:
    """Whether the rule fired in the last ``seconds`` (ever, when None), for one subject or any."""
    window = None if seconds is None else timedelta(seconds=seconds)
    parameters = {"rule_id": rule_id, "window": window, "subject_id": subject_id}
    return conn.execute(QUERIES["fired_within"], parameters).first() is not None


def _held_back(conn: sa.Connection, rule: Rule, subject_id: uuid.UUID, apply_cooldown: bool) -> bool:
    if rule.frequency != "always" and fired_within(
        conn, rule.id, FREQUENCY_WINDOW_SECONDS.get(rule.frequency), subject_id
    ):
        return True
    return apply_cooldown and rule.cooldown_seconds is not None and fired_within(conn, rule.id, rule.cooldown_seconds)


def fire(conn: sa.Connection, rule: Rule, event: Event, *, apply_cooldown: bool = True) -> FiringOutcome:
    """Fire ``rule`` for ``event`` unless a limit holds it back; log it and run or queue its action.

    ``conn`` must not be in a transaction: each firing commits on its own. ``apply_cooldown`` is
    False inside a scheduled run, whose cooldown is checked once per run."""
    with conn.begin():
        conn.execute(QUERIES["lock_rule"], {"lock_class": _RULE_LOCK_CLASS, "rule_id": rule.id})
        already = conn.execute(QUERIES["fired_for_event"], {"rule_id": rule.id, "event_key": event.key}).first()
        if already is not None:
            return FiringOutcome.ALREADY_FIRED
        if _held_back(conn, rule, event.subject_id, apply_cooldown):
            return FiringOutcome.HELD_BACK

        document = event.as_json()
        log_id = conn.execute(
            QUERIES["log_firing"],
            {
                "rule_id": rule.id,
                "event_key": event.key,
                "subject_id": event.subject_id,
                "trigger_on": event.source_type,
                "event": json.dumps(document),
                "action_type": rule.action_type,
                # The log is read more widely than the rules: it keeps no webhook secret.
                "action_config": json.dumps({k: v for k, v in rule.action_config.items() if k != "secret"}),
                "status": "scheduled" if rule.runs_later else "success",
                "organization_id": rule.organization_id,
                "completed": not rule.runs_later,
            },
        ).scalar_one()
        if rule.runs_later:
            schedule_action(conn, rule, event.subject_id, document, log_id)
            return FiringOutcome.SCHEDULED
        try:
            with conn.begin_nested():
                execute_database_action(conn, rule, rule.action_type, rule.action_config, document, log_id)
        except (ActionError, sa.exc.DBAPIError) as exc:
            conn.execute(QUERIES["fail_firing"], {"id": log_id, "error_message": describe_error(exc)})
            return FiringOutcome.FAILED
        return FiringOutcome.SUCCEEDED
