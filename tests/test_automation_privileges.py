"""The roles: workers evaluate rules with hreg_worker's privileges, the application manages them."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa

from orchestration.automation import create_rule, evaluate_events, run_due_actions, run_scheduled_rules, watch
from orchestration.automation.schedules import latest_due_time
from test_automation_support import (  # noqa: F401 - receiver is a fixture
    LOOPBACK_NETWORKS,
    ORGANIZATION,
    USER,
    add_revision,
    company_record,
    make_entity,
    make_rule,
    notification_titles,
    receiver,
)


@pytest.fixture
def as_role(db_url):
    """Engines whose connections hold only the privileges of a role."""
    engines = []

    def engine_for(role: str) -> sa.Engine:
        engine = sa.create_engine(db_url)

        @sa.event.listens_for(engine, "connect")
        def set_role(dbapi_connection, _record):
            with dbapi_connection.cursor() as cursor:
                cursor.execute(f"SET ROLE {role}")

        engines.append(engine)
        return engine

    yield engine_for
    for engine in engines:
        engine.dispose()


def test_worker_role_evaluates_rules_and_runs_every_action(engine, as_role, receiver):
    with engine.begin() as conn:
        changing, rechecked = make_entity(conn, "Wandel GmbH"), make_entity(conn, "Prüf GmbH")
        add_revision(conn, changing, company_record())
        make_rule(conn, "entity_changed", "notification", watched=(changing,))
        make_rule(conn, "entity_changed", "enqueue_job", action_config={"job": "shareholder_research"})
        make_rule(conn, "entity_changed", "webhook", action_config={"url": receiver.url, "secret": "k"})
        schedule = make_rule(
            conn,
            "schedule",
            "enqueue_job",
            source_config={"cron": "0 6 * * *", "watch": "rule"},
            action_config={"job": "rediscovery"},
        )
        watch(conn, ORGANIZATION, [rechecked], rule_id=schedule.id)
    worker = as_role("hreg_worker")
    cursor = evaluate_events(worker, None).cursor
    with engine.begin() as conn:
        add_revision(conn, changing, company_record(name="Wandel Neu GmbH"))

    evaluate_events(worker, cursor)
    assert run_due_actions(worker, allowed_networks=LOOPBACK_NETWORKS).completed == 1
    [run] = run_scheduled_rules(
        worker, now=latest_due_time("0 6 * * *", "UTC", schedule.created_date + timedelta(days=1))
    )

    assert (run.processed, run.failed) == (1, 0)
    assert len(receiver.deliveries) == 1
    with engine.connect() as conn:
        assert notification_titles(conn) == ["Wandel GmbH: name changed"]
        jobs = conn.execute(sa.text("SELECT type, entity_id FROM processing.processing_jobs ORDER BY type")).all()
        failures = conn.execute(sa.text("SELECT count(*) FROM automation.trigger_log WHERE status = 'failed'")).scalar()
    assert [(j.type, j.entity_id) for j in jobs] == [("basic_discovery", rechecked), ("shareholder_download", changing)]
    assert failures == 0


def test_application_manages_rules_and_workers_cannot(engine, as_role):
    with as_role("hreg_app").begin() as app:
        rule = create_rule(
            app,
            name="Kapital",
            organization_id=ORGANIZATION,
            source_type="entity_changed",
            source_config={"fields": ["capital"]},
            action_type="notification",
            action_config={},
            created_by=USER,
        )
    with (
        pytest.raises(sa.exc.ProgrammingError, match="permission denied"),
        as_role("hreg_worker").begin() as worker,
    ):
        worker.execute(sa.text("UPDATE automation.trigger_rule SET enabled = false WHERE id = :id"), {"id": rule.id})
    with (
        pytest.raises(sa.exc.ProgrammingError, match="permission denied"),
        as_role("hreg_app").begin() as app,
    ):
        app.execute(sa.text("DELETE FROM automation.trigger_log"))
