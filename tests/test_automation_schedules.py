"""Scheduled rules: periodic re-checks of watched companies, once per scheduled time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from orchestration.automation import run_scheduled_rules
from orchestration.automation.schedules import latest_due_time
from test_automation_support import make_entity, make_rule

DAILY_AT_SIX = {"cron": "0 6 * * *", "timezone": "Europe/Berlin"}


def executions(conn) -> list[sa.Row]:
    return conn.execute(sa.text("SELECT * FROM automation.scheduled_trigger_execution ORDER BY id")).all()


def discovery_jobs(conn) -> list[sa.Row]:
    return conn.execute(
        sa.text("SELECT entity_id FROM processing.processing_jobs WHERE type = 'basic_discovery' ORDER BY entity_id")
    ).all()


def test_latest_due_time_is_in_the_rule_timezone_and_includes_the_exact_minute():
    summer = datetime(2026, 7, 1, 4, 0, tzinfo=UTC)  # 06:00 in Berlin
    assert latest_due_time("0 6 * * *", "Europe/Berlin", summer) == summer
    assert latest_due_time("0 6 * * *", "Europe/Berlin", summer - timedelta(minutes=1)) == summer - timedelta(days=1)
    assert latest_due_time("0 6 * * *", "UTC", summer) == datetime(2026, 6, 30, 6, 0, tzinfo=UTC)


def test_due_rule_rediscovers_every_watched_company_once(engine):
    with engine.begin() as conn:
        watched = sorted([make_entity(conn, "Eins GmbH"), make_entity(conn, "Zwei GmbH", status="discovered")])
        make_entity(conn, "Nicht beobachtet GmbH")
        rule = make_rule(
            conn,
            "schedule",
            "enqueue_job",
            source_config=DAILY_AT_SIX,
            action_config={"job": "rediscovery"},
            watched=tuple(watched),
        )
    tomorrow_at_six = latest_due_time("0 6 * * *", "Europe/Berlin", rule.created_date + timedelta(days=1))

    [run] = run_scheduled_rules(engine, now=tomorrow_at_six + timedelta(minutes=3))
    assert run_scheduled_rules(engine, now=tomorrow_at_six + timedelta(minutes=4)) == []

    assert (run.rule_id, run.scheduled_at, run.status) == (rule.id, tomorrow_at_six, "completed")
    assert (run.total, run.processed, run.failed) == (2, 2, 0)
    with engine.connect() as conn:
        assert [row.entity_id for row in discovery_jobs(conn)] == watched
        [execution] = executions(conn)
    assert (execution.status, execution.total_entities, execution.processed_entities) == ("completed", 2, 2)


def test_nothing_runs_before_the_first_due_time_after_the_rule_was_made(engine):
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(
            conn,
            "schedule",
            "enqueue_job",
            source_config={"cron": "0 6 * * *"},
            action_config={"job": "rediscovery"},
            watched=(company,),
        )
    next_six = latest_due_time("0 6 * * *", "UTC", rule.created_date + timedelta(days=1))

    assert run_scheduled_rules(engine, now=next_six - timedelta(minutes=1)) == []
    assert len(run_scheduled_rules(engine, now=next_six)) == 1


def test_missed_times_run_once_at_the_latest(engine):
    with engine.begin() as conn:
        company = make_entity(conn)
        make_rule(conn, "schedule", "notification", source_config={"cron": "0 * * * *"}, watched=(company,))
    later = datetime.now(UTC) + timedelta(hours=5)

    [run] = run_scheduled_rules(engine, now=later)

    assert run.scheduled_at == later.replace(minute=0, second=0, microsecond=0)


def test_run_inside_the_cooldown_is_skipped(engine):
    with engine.begin() as conn:
        company = make_entity(conn)
        make_rule(
            conn,
            "schedule",
            "notification",
            source_config={"cron": "*/5 * * * *"},
            watched=(company,),
            cooldown_seconds=3600,
        )
    now = datetime.now(UTC)

    first = run_scheduled_rules(engine, now=now + timedelta(minutes=5))
    second = run_scheduled_rules(engine, now=now + timedelta(minutes=10))

    assert [(r.status, r.processed) for r in first + second] == [("completed", 1), ("skipped", 0)]
    with engine.connect() as conn:
        assert [row.status for row in executions(conn)] == ["completed", "skipped"]
        assert conn.execute(sa.text("SELECT count(*) FROM automation.notifications")).scalar_one() == 1


def test_frequency_holds_back_companies_within_a_run(engine):
    with engine.begin() as conn:
        company = make_entity(conn)
        make_rule(
            conn,
            "schedule",
            "notification",
            source_config={"cron": "*/5 * * * *"},
            watched=(company,),
            frequency="once_per_day",
        )
    now = datetime.now(UTC)

    first = run_scheduled_rules(engine, now=now + timedelta(minutes=5))
    second = run_scheduled_rules(engine, now=now + timedelta(minutes=10))

    assert [(r.total, r.processed) for r in first + second] == [(1, 1), (1, 0)]
