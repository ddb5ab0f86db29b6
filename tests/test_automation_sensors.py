"""The Dagster sensors, evaluated with build_sensor_context against the real database."""

from __future__ import annotations

import dagster as dg
import sqlalchemy as sa

from orchestration.automation import SIGNATURE_HEADER, EventCursor, verify_signature
from resources.database import DatabaseResource
from resources.webhooks import WebhookResource
from sensors.automation import automation_event_sensor, automation_schedule_sensor, automation_sensors
from test_automation_support import (  # noqa: F401 - receiver is a fixture
    LOOPBACK,
    add_revision,
    company_record,
    make_entity,
    make_rule,
    notification_titles,
    receiver,
)


def database(db_url) -> DatabaseResource:
    return DatabaseResource(url=db_url.render_as_string(hide_password=False), pgdata_dir="", worker_role="")


def tick(sensor: dg.SensorDefinition, db_url, cursor: str | None = None):
    resources = {"database": database(db_url), "webhooks": WebhookResource(allowed_networks=LOOPBACK)}
    return sensor(dg.build_sensor_context(cursor=cursor, resources=resources))


def test_event_sensor_starts_from_the_present_then_fires_and_delivers(engine, db_url, receiver):
    with engine.begin() as conn:
        company = make_entity(conn, "Sensor GmbH")
        add_revision(conn, company, company_record())
        add_revision(conn, company, company_record(seat="Essen"))  # history: fires nothing
        make_rule(conn, "entity_changed", "notification", watched=(company,))
        make_rule(
            conn, "entity_changed", "webhook", watched=(company,), action_config={"url": receiver.url, "secret": "k"}
        )

    first = tick(automation_event_sensor, db_url)
    with engine.begin() as conn:
        assert notification_titles(conn) == []
        add_revision(conn, company, company_record(seat="Dortmund"))
    second = tick(automation_event_sensor, db_url, first.cursor)

    with engine.connect() as conn:
        assert notification_titles(conn) == ["Sensor GmbH: seat changed"]
    [delivery] = receiver.deliveries
    assert verify_signature("k", delivery.body, delivery.headers[SIGNATURE_HEADER])
    assert EventCursor.from_json(second.cursor).revision > EventCursor.from_json(first.cursor).revision
    assert "1 completed" in second.skip_reason.skip_message
    third = tick(automation_event_sensor, db_url, second.cursor)
    assert len(receiver.deliveries) == 1 and third.cursor == second.cursor


def test_schedule_sensor_runs_a_due_rule_once(engine, db_url):
    with engine.begin() as conn:
        company = make_entity(conn, "Jahres GmbH")
        rule = make_rule(
            conn,
            "schedule",
            "enqueue_job",
            source_config={"cron": "0 0 1 1 *"},
            action_config={"job": "rediscovery"},
            watched=(company,),
        )
        # Made long enough ago that last New Year's run is due.
        conn.execute(
            sa.text("UPDATE automation.trigger_rule SET created_date = now() - interval '400 days' WHERE id = :id"),
            {"id": rule.id},
        )

    first = tick(automation_schedule_sensor, db_url)
    second = tick(automation_schedule_sensor, db_url)

    assert f"rule {rule.id}" in first.skip_message and "completed, 1/1 companies" in first.skip_message
    assert second.skip_message == "no scheduled rule came due"
    with engine.connect() as conn:
        jobs = conn.execute(
            sa.text(
                "SELECT count(*) FROM processing.processing_jobs WHERE type = 'basic_discovery' AND entity_id = :e"
            ),
            {"e": company},
        ).scalar_one()
    assert jobs == 1


def test_sensors_load_in_a_code_location_with_the_database_resource(db_url):
    defs = dg.Definitions(sensors=automation_sensors, resources={"database": database(db_url)})
    dg.Definitions.validate_loadable(defs)
    sensors = {s.name: s for s in defs.get_repository_def().sensor_defs}
    assert set(sensors) == {"automation_event_sensor", "automation_schedule_sensor"}
    assert all(s.default_status == dg.DefaultSensorStatus.RUNNING for s in sensors.values())
