"""Frequency per company and cooldown per rule."""

from __future__ import annotations

import sqlalchemy as sa

from orchestration.automation import FiringOutcome, fire
from test_automation_support import change_event, log_rows, make_entity, make_rule


def backdate_firings(conn, rule_id: int, seconds: int) -> None:
    """Let time pass: the rule's firings happened ``seconds`` earlier."""
    conn.execute(
        sa.text(
            "UPDATE automation.trigger_log SET created_date = created_date - make_interval(secs => :s) "
            "WHERE trigger_rule_id = :r"
        ),
        {"s": seconds, "r": rule_id},
    )


def test_once_per_hour_holds_back_the_same_company_until_the_hour_is_over(engine):
    with engine.begin() as conn:
        first, second = make_entity(conn, "Eins GmbH"), make_entity(conn, "Zwei GmbH")
        rule = make_rule(conn, "entity_changed", frequency="once_per_hour")
    with engine.connect() as conn:
        assert fire(conn, rule, change_event(first, "revision:1")) is FiringOutcome.SUCCEEDED
        assert fire(conn, rule, change_event(first, "revision:2")) is FiringOutcome.HELD_BACK
        assert fire(conn, rule, change_event(second, "revision:3")) is FiringOutcome.SUCCEEDED  # per company
    with engine.begin() as conn:
        backdate_firings(conn, rule.id, 3601)
    with engine.connect() as conn:
        assert fire(conn, rule, change_event(first, "revision:4")) is FiringOutcome.SUCCEEDED
        assert [row.event_key for row in log_rows(conn, rule.id)] == ["revision:1", "revision:3", "revision:4"]


def test_once_fires_once_per_company_ever(engine):
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(conn, "entity_changed", frequency="once")
    with engine.connect() as conn:
        assert fire(conn, rule, change_event(company, "revision:1")) is FiringOutcome.SUCCEEDED
    with engine.begin() as conn:
        backdate_firings(conn, rule.id, 400 * 86400)
    with engine.connect() as conn:
        assert fire(conn, rule, change_event(company, "revision:2")) is FiringOutcome.HELD_BACK
        assert [row.event_key for row in log_rows(conn, rule.id)] == ["revision:1"]


def test_always_fires_for_every_event(engine):
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(conn, "entity_changed", frequency="always")
    with engine.connect() as conn:
        outcomes = [fire(conn, rule, change_event(company, f"revision:{n}")) for n in range(3)]
    assert outcomes == [FiringOutcome.SUCCEEDED] * 3


def test_cooldown_silences_the_whole_rule_until_it_is_over(engine):
    with engine.begin() as conn:
        first, second = make_entity(conn, "Eins GmbH"), make_entity(conn, "Zwei GmbH")
        rule = make_rule(conn, "entity_changed", frequency="always", cooldown_seconds=600)
    with engine.connect() as conn:
        assert fire(conn, rule, change_event(first, "revision:1")) is FiringOutcome.SUCCEEDED
        assert fire(conn, rule, change_event(second, "revision:2")) is FiringOutcome.HELD_BACK
    with engine.begin() as conn:
        backdate_firings(conn, rule.id, 601)
    with engine.connect() as conn:
        assert fire(conn, rule, change_event(second, "revision:2")) is FiringOutcome.SUCCEEDED
        assert len(log_rows(conn, rule.id)) == 2
