"""Sensors that drive the monitoring rules (orchestration.automation).

They request no runs: a tick's work is a few cheap statements and webhook POSTs with short
timeouts, so it happens in the tick, and the tick's skip reason says what it did.
"""

from __future__ import annotations

import dagster as dg

from orchestration.automation import EventCursor, evaluate_events, run_due_actions, run_scheduled_rules
from resources.database import DatabaseResource
from resources.webhooks import WebhookResource
from sensors.database import skip_while_database_unavailable

# A tick must finish well inside Dagster's sensor timeout (60 s by default).
EVALUATION_BUDGET_S = 15.0
DELIVERY_BUDGET_S = 20.0


@dg.sensor(
    name="automation_event_sensor",
    minimum_interval_seconds=15,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Fires monitoring rules for new events (changed company records and shareholder lists, "
    "new companies matching saved searches, permanently failed jobs), then runs the due scheduled "
    "actions of every rule: delayed actions, webhooks and their retries.",
)
@skip_while_database_unavailable
def automation_event_sensor(
    context: dg.SensorEvaluationContext, database: DatabaseResource, webhooks: WebhookResource
) -> dg.SensorResult:
    engine = database.get_engine()
    cursor = EventCursor.from_json(context.cursor) if context.cursor else None
    evaluation = evaluate_events(engine, cursor, time_budget_s=EVALUATION_BUDGET_S)
    delivery = run_due_actions(engine, allowed_networks=webhooks.networks, time_budget_s=DELIVERY_BUDGET_S)
    if cursor is None:
        context.log.info("no cursor yet, or one of an earlier format: monitoring starts from the present")
    if delivery.failed or delivery.expired:
        context.log.warning(f"scheduled actions failed: {delivery.failed}, expired: {delivery.expired}")
    return dg.SensorResult(
        cursor=evaluation.cursor.to_json(),
        skip_reason=dg.SkipReason(
            f"{evaluation.describe()}; scheduled actions: {delivery.completed} completed, "
            f"{delivery.retried} retried, {delivery.failed} failed, {delivery.expired} expired, "
            f"{delivery.cancelled} cancelled"
        ),
    )


@dg.sensor(
    name="automation_schedule_sensor",
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Runs the scheduled monitoring rules whose cron expression came due: each watched "
    "company is re-checked (or handed to the rule's action) once per scheduled time, however many "
    "daemons evaluate.",
)
@skip_while_database_unavailable
def automation_schedule_sensor(context: dg.SensorEvaluationContext, database: DatabaseResource) -> dg.SkipReason:
    runs = run_scheduled_rules(database.get_engine())
    for run in runs:
        if run.status == "failed":
            context.log.error(f"scheduled run of rule {run.rule_id} at {run.scheduled_at} failed: {run.error}")
    if not runs:
        return dg.SkipReason("no scheduled rule came due")
    return dg.SkipReason(
        "; ".join(
            f"rule {r.rule_id} at {r.scheduled_at:%Y-%m-%d %H:%M %Z}: {r.status}, {r.processed}/{r.total} companies"
            + (f", {r.failed} failed" if r.failed else "")
            for r in runs
        )
    )


automation_sensors = [automation_event_sensor, automation_schedule_sensor]
