"""Monitoring rules on companies: "when this happens, do that", for organizations and their users.

- ``monitoring_rules``: what a rule may say; create, list, disable rules; watch lists.
- ``sources``: the events (changed records and shareholder lists, new companies matching a saved
  search, permanently failed jobs) and which rules they concern.
- ``firing``: frequency, cooldown, the log of every firing, and running or queueing the action.
- ``evaluator``: incremental evaluation of event-driven rules from a cursor the caller keeps.
- ``schedules``: cron rules, run once per (rule, scheduled time) however many evaluators run.
- ``actions`` and ``webhooks``: enqueue a job, notify, POST a signed webhook; the queue of
  actions that run later, with retries and expiry.

The Dagster sensors in ``sensors/automation.py`` call ``evaluate_events``, ``run_due_actions``
and ``run_scheduled_rules``; nothing here needs Dagster.
"""

from orchestration.automation.actions import DeliverySummary, run_due_actions
from orchestration.automation.evaluator import EvaluationSummary, evaluate_events
from orchestration.automation.firing import FiringOutcome, fire
from orchestration.automation.monitoring_rules import (
    Rule,
    RuleConfigError,
    create_rule,
    disable_rule,
    get_rule,
    list_rules,
    rule_log,
    watch,
)
from orchestration.automation.schedules import ScheduledRun, run_scheduled_rules
from orchestration.automation.sources import Event, EventCursor
from orchestration.automation.webhooks import SIGNATURE_HEADER, verify_signature

__all__ = [
    "SIGNATURE_HEADER",
    "DeliverySummary",
    "EvaluationSummary",
    "Event",
    "EventCursor",
    "FiringOutcome",
    "Rule",
    "RuleConfigError",
    "ScheduledRun",
    "create_rule",
    "disable_rule",
    "evaluate_events",
    "fire",
    "get_rule",
    "list_rules",
    "rule_log",
    "run_due_actions",
    "run_scheduled_rules",
    "verify_signature",
    "watch",
]
