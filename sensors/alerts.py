"""The operator's alerts, posted to HREG_ALERT_WEBHOOK_URL (orchestration.health.alerts): every
failed run, and the dead letter when it holds more jobs than at the last look."""

from __future__ import annotations

import json

import dagster as dg

from orchestration.health import alerts
from orchestration.health.metrics import dead_letter_size
from resources.database import DatabaseResource
from resources.webhooks import AlertWebhookResource
from sensors.database import skip_while_database_unavailable

DEAD_LETTER_INTERVAL_SECONDS = 30


@dg.run_failure_sensor(
    name="run_failure_alert_sensor",
    monitor_all_code_locations=False,
    minimum_interval_seconds=10,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Posts every failed run (its job, its error, the job type it worked) to the alert webhook.",
)
def run_failure_alert_sensor(context: dg.RunFailureSensorContext, alert_webhook: AlertWebhookResource):
    webhook = alert_webhook.get_webhook()
    if webhook is None:
        return dg.SkipReason("HREG_ALERT_WEBHOOK_URL is not set")
    run = context.dagster_run
    # A failed delivery fails this evaluation, which the sensor's ticks show; Dagster does not
    # evaluate a run's failure twice.
    webhook.post(
        alerts.RUN_FAILED,
        {
            "run_id": run.run_id,
            "job_name": run.job_name,
            "message": context.failure_event.message,
            "tags": dict(run.tags),
        },
        delivery_id=f"{alerts.RUN_FAILED}:{run.run_id}",
    )
    return None


@dg.sensor(
    name="dead_letter_alert_sensor",
    minimum_interval_seconds=DEAD_LETTER_INTERVAL_SECONDS,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Posts the dead letter's size per job type and failure class to the alert webhook whenever "
    "it holds more jobs than at the last look (its cursor).",
)
@skip_while_database_unavailable
def dead_letter_alert_sensor(
    context: dg.SensorEvaluationContext, database: DatabaseResource, alert_webhook: AlertWebhookResource
):
    webhook = alert_webhook.get_webhook()
    if webhook is None:
        return dg.SkipReason("HREG_ALERT_WEBHOOK_URL is not set")
    with database.get_engine().connect() as conn:
        by_type_and_class = dead_letter_size(conn)
    previous = json.loads(context.cursor)["size"] if context.cursor else 0
    size, growth = alerts.dead_letter_growth(previous, by_type_and_class)
    if growth is not None:
        # Raises when the receiver does not take it: the cursor stays, and the next tick posts again.
        webhook.post(alerts.DEAD_LETTER_GREW, growth, delivery_id=f"{alerts.DEAD_LETTER_GREW}:{previous}:{size}")
    context.update_cursor(json.dumps({"size": size}))
    if growth is None:
        return dg.SkipReason(f"the dead letter holds {size} jobs (at the last look {previous})")
    return dg.SkipReason(f"posted: the dead letter grew from {previous} to {size} jobs")
