"""Two evaluators at once, each with its own connections: every firing and every action happens once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa

from orchestration.automation import FiringOutcome, evaluate_events, fire, run_due_actions, run_scheduled_rules
from orchestration.db.engine import create_app_engine
from test_automation_support import (  # noqa: F401 - receiver is a fixture
    LOOPBACK_NETWORKS,
    add_revision,
    change_event,
    company_record,
    make_entity,
    make_rule,
    receiver,
)


def side_by_side(db_url, work):
    """Run ``work(engine)`` in two threads that start together, each with its own engine."""
    engines = [create_app_engine(db_url) for _ in range(2)]
    barrier = threading.Barrier(2)

    def evaluator(engine):
        barrier.wait()
        return work(engine)

    try:
        with ThreadPoolExecutor(2) as pool:
            return list(pool.map(evaluator, engines))
    finally:
        for engine in engines:
            engine.dispose()


def count(engine, table: str) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one()


def test_each_scheduled_time_runs_once(engine, db_url):
    with engine.begin() as conn:
        companies = tuple(make_entity(conn, f"Firma {n} GmbH") for n in range(3))
        make_rule(conn, "schedule", "notification", source_config={"cron": "* * * * *"}, watched=companies)
    start = datetime.now(UTC) + timedelta(minutes=1)

    runs = []
    for minute in range(5):
        now = start + timedelta(minutes=minute)
        results = side_by_side(db_url, lambda e, now=now: run_scheduled_rules(e, now=now))
        runs.append(sorted(len(r) for r in results))

    assert runs == [[0, 1]] * 5
    assert count(engine, "automation.scheduled_trigger_execution") == 5
    assert count(engine, "automation.notifications") == 15


def test_each_due_action_runs_once(engine, db_url, receiver):
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(conn, "entity_changed", "webhook", action_config={"url": receiver.url, "secret": "k"})
    with engine.connect() as conn:
        for n in range(20):
            fire(conn, rule, change_event(company, f"revision:{n}"))

    summaries = side_by_side(db_url, lambda e: run_due_actions(e, allowed_networks=LOOPBACK_NETWORKS))

    assert sum(s.completed for s in summaries) == 20
    assert sorted(int(d.headers["X-Hreg-Delivery"]) for d in receiver.deliveries) == list(range(1, 21))


def test_events_fire_once_and_frequency_holds_across_evaluators(engine, db_url):
    with engine.begin() as conn:
        companies = [make_entity(conn, f"Firma {n} GmbH") for n in range(10)]
        for company in companies:
            add_revision(conn, company, company_record())
        rule = make_rule(conn, "entity_changed", frequency="once_per_hour", watched=tuple(companies))
    cursor = evaluate_events(engine, None).cursor
    with engine.begin() as conn:
        for company in companies:  # two changes each; once_per_hour lets one through
            add_revision(conn, company, company_record(seat="Kiel"))
            add_revision(conn, company, company_record(seat="Lübeck"))

    summaries = side_by_side(db_url, lambda e: evaluate_events(e, cursor))

    fired = sum(s.outcomes[FiringOutcome.SUCCEEDED] for s in summaries)
    assert fired == 10
    assert sum(sum(s.outcomes.values()) for s in summaries) == 40  # 20 events, seen by both
    with engine.connect() as conn:
        subjects = (
            conn.execute(
                sa.text("SELECT subject_id FROM automation.trigger_log WHERE trigger_rule_id = :r"), {"r": rule.id}
            )
            .scalars()
            .all()
        )
    assert sorted(subjects) == sorted(companies)
