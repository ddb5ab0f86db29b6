"""Each action: jobs, notifications, signed webhooks with retries, delays, expiry and cancellation."""

from __future__ import annotations

from ipaddress import ip_network

import pytest
import sqlalchemy as sa

from orchestration.automation import (
    SIGNATURE_HEADER,
    FiringOutcome,
    disable_rule,
    evaluate_events,
    fire,
    run_due_actions,
    verify_signature,
)
from orchestration.automation.sources import Event
from orchestration.automation.webhooks import WebhookError, pinned_destinations
from test_automation_support import (  # noqa: F401 - receiver is a fixture
    LOOPBACK_NETWORKS,
    ORGANIZATION,
    USER,
    add_revision,
    change_event,
    company_record,
    log_rows,
    make_entity,
    make_rule,
    notification_titles,
    receiver,
)

SECRET = "s3cret"


def scheduled_actions(conn) -> list[sa.Row]:
    return conn.execute(sa.text("SELECT * FROM automation.scheduled_action ORDER BY id")).all()


def make_due(conn) -> None:
    """Let time pass: every waiting action is due now."""
    conn.execute(sa.text("UPDATE automation.scheduled_action SET execute_at = now() WHERE status = 'pending'"))


def active_jobs(conn, entity_id) -> list[sa.Row]:
    return conn.execute(
        sa.text("""SELECT type, trigger, requested_by, data FROM processing.processing_jobs
                    WHERE entity_id = :e AND status IN ('queued', 'running') ORDER BY created_at"""),
        {"e": entity_id},
    ).all()


def test_rediscovery_of_a_discovered_company_takes_the_application_path(engine):
    with engine.begin() as conn:
        company = make_entity(conn, status="discovered")
        rule = make_rule(conn, "entity_changed", "enqueue_job", action_config={"job": "rediscovery"})
    with engine.connect() as conn:
        assert fire(conn, rule, change_event(company)) is FiringOutcome.SUCCEEDED
        status = conn.execute(
            sa.text("SELECT processing_status FROM content.entities WHERE id = :e"), {"e": company}
        ).scalar_one()
        [job] = active_jobs(conn, company)
    assert status == "basic_discovery_running"
    assert job.type == "basic_discovery" and job.data["trigger_source"] == "user_discovery"


def test_rediscovery_of_a_parsed_company_queues_a_discovery_job_once(engine):
    with engine.begin() as conn:
        company = make_entity(conn, "Parsed GmbH", status="parsed")
        rule = make_rule(conn, "entity_changed", "enqueue_job", action_config={"job": "rediscovery"})
    with engine.connect() as conn:
        fire(conn, rule, change_event(company, "revision:1"))
        fire(conn, rule, change_event(company, "revision:2"))  # the job is still queued
        [job] = active_jobs(conn, company)
    assert job.type == "basic_discovery"
    assert (job.trigger, job.requested_by) == ("manual", USER)
    assert job.data["search_term"] == "Parsed GmbH"


def test_shareholder_research_is_requested(engine):
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(conn, "entity_changed", "enqueue_job", action_config={"job": "shareholder_research"})
    with engine.connect() as conn:
        fire(conn, rule, change_event(company))
        [job] = active_jobs(conn, company)
        status = conn.execute(
            sa.text("SELECT shareholder_research_status FROM content.entities WHERE id = :e"), {"e": company}
        ).scalar_one()
    assert job.type == "shareholder_download"
    assert status == "requested"


def test_failed_action_is_logged_with_its_error(engine):
    with engine.begin() as conn:
        rule = make_rule(conn, "job_failed", "enqueue_job", action_config={"job": "shareholder_research"})
        search_failure = Event(
            source_type="job_failed",
            key="job_failure:1",
            subject_id=USER,
            entity_id=None,
            occurred_at=rule.created_date,
            summary="basic_discovery failed permanently",
        )
    with engine.connect() as conn:
        assert fire(conn, rule, search_failure) is FiringOutcome.FAILED
        [logged] = log_rows(conn, rule.id)
    assert logged.status == "failed"
    assert "no job can be queued" in logged.error_message


def test_notification_for_a_chosen_user(engine):
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(conn, "entity_changed", "notification", action_config={"user_id": str(USER)})
    with engine.connect() as conn:
        fire(conn, rule, change_event(company))
        row = conn.execute(sa.text("SELECT * FROM automation.notifications")).one()
        [logged] = log_rows(conn, rule.id)
    assert (row.organization_id, row.user_id, row.entity_id) == (ORGANIZATION, USER, company)
    assert row.title == "Muster GmbH: capital changed"
    assert row.trigger_log_id == logged.id and logged.status == "success"


def test_webhook_is_delivered_signed_to_a_real_receiver(engine, receiver):
    with engine.begin() as conn:
        company = make_entity(conn)
        add_revision(conn, company, company_record())
        rule = make_rule(
            conn, "entity_changed", "webhook", watched=(company,), action_config={"url": receiver.url, "secret": SECRET}
        )
    cursor = evaluate_events(engine, None).cursor
    with engine.begin() as conn:
        add_revision(conn, company, company_record(capital={"amount": "50000.00", "currency": "EUR"}))

    assert evaluate_events(engine, cursor).outcomes == {FiringOutcome.SCHEDULED: 1}
    assert run_due_actions(engine, allowed_networks=LOOPBACK_NETWORKS).completed == 1

    [delivery] = receiver.deliveries
    assert verify_signature(SECRET, delivery.body, delivery.headers[SIGNATURE_HEADER])
    assert not verify_signature("wrong secret", delivery.body, delivery.headers[SIGNATURE_HEADER])
    assert delivery.json["rule"]["id"] == rule.id
    assert delivery.json["event"]["occurred_at"][10] == "T"  # ISO 8601
    assert delivery.json["event"]["changes"]["capital"]["new"]["amount"] == "50000.00"
    with engine.connect() as conn:
        [logged] = log_rows(conn, rule.id)
        [action] = scheduled_actions(conn)
    assert logged.status == "success"
    assert logged.action_config["url"] == receiver.url and "secret" not in logged.action_config
    assert action.status == "completed" and action.executed_at is not None
    assert run_due_actions(engine, allowed_networks=LOOPBACK_NETWORKS).completed == 0  # delivered once


def test_webhook_is_retried_after_a_server_error(engine, receiver):
    receiver.statuses = [503]
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(conn, "entity_changed", "webhook", action_config={"url": receiver.url, "secret": SECRET})
    with engine.connect() as conn:
        fire(conn, rule, change_event(company))

    assert run_due_actions(engine, allowed_networks=LOOPBACK_NETWORKS).retried == 1
    assert run_due_actions(engine, allowed_networks=LOOPBACK_NETWORKS).completed == 0  # the retry waits for its backoff
    with engine.begin() as conn:
        [action] = scheduled_actions(conn)
        assert (action.status, action.retry_count) == ("pending", 1)
        assert "HTTP 503" in log_rows(conn, rule.id)[0].error_message
        make_due(conn)
    assert run_due_actions(engine, allowed_networks=LOOPBACK_NETWORKS).completed == 1

    assert [d.json["attempt"] for d in receiver.deliveries] == [1, 2]
    assert len({d.headers["X-Hreg-Delivery"] for d in receiver.deliveries}) == 1
    with engine.connect() as conn:
        [logged] = log_rows(conn, rule.id)
        [action] = scheduled_actions(conn)
    assert (logged.status, logged.error_message) == ("success", None)
    assert "HTTP 503" in action.last_error


def test_webhook_fails_for_good_on_a_client_error_or_when_retries_run_out(engine, receiver):
    receiver.statuses = [410, 500, 500]
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(
            conn, "entity_changed", "webhook", action_config={"url": receiver.url, "secret": SECRET, "max_retries": 1}
        )
    with engine.connect() as conn:
        fire(conn, rule, change_event(company, "revision:1"))
    assert (
        run_due_actions(engine, allowed_networks=LOOPBACK_NETWORKS).failed == 1
    )  # 410 Gone: asking again will not help

    with engine.connect() as conn:
        fire(conn, rule, change_event(company, "revision:2"))
    assert run_due_actions(engine, allowed_networks=LOOPBACK_NETWORKS).retried == 1
    with engine.begin() as conn:
        make_due(conn)
    assert run_due_actions(engine, allowed_networks=LOOPBACK_NETWORKS).failed == 1

    with engine.connect() as conn:
        assert [row.status for row in log_rows(conn, rule.id)] == ["failed", "failed"]
        assert [a.status for a in scheduled_actions(conn)] == ["failed", "failed"]
    assert len(receiver.deliveries) == 3


def test_webhook_to_a_private_address_fails_for_good_unless_its_network_is_allowed(engine, receiver):
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(conn, "entity_changed", "webhook", action_config={"url": receiver.url, "secret": SECRET})
    with engine.connect() as conn:
        fire(conn, rule, change_event(company, "revision:1"))

    assert run_due_actions(engine).failed == 1  # no retry: the address will not become public

    with engine.connect() as conn:
        [action] = scheduled_actions(conn)
    assert "127.0.0.1, which is not a public address" in action.last_error
    assert "HREG_WEBHOOK_ALLOWED_NETWORKS" in action.last_error
    assert receiver.deliveries == []


def test_webhook_by_host_name_connects_to_the_checked_address_and_keeps_the_host(engine, receiver):
    url = receiver.url.replace("127.0.0.1", "localhost")
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(conn, "entity_changed", "webhook", action_config={"url": url, "secret": SECRET})
    with engine.connect() as conn:
        fire(conn, rule, change_event(company, "revision:1"))

    assert run_due_actions(engine, allowed_networks=LOOPBACK_NETWORKS).completed == 1

    [delivery] = receiver.deliveries
    assert delivery.headers["Host"] == url.split("/")[2]


def test_webhook_destinations_are_resolved_addresses_checked_against_the_allowed_networks():
    targets, host = pinned_destinations("https://user:pw@127.0.0.1:8443/hook?x=1", [ip_network("127.0.0.0/8")])
    assert (targets, host) == (["https://user:pw@127.0.0.1:8443/hook?x=1"], "127.0.0.1")
    for private in ("http://10.1.2.3/", "http://169.254.169.254/latest/meta-data/", "http://[::1]:3000/graphql"):
        with pytest.raises(WebhookError, match="not a public address") as raised:
            pinned_destinations(private, [ip_network("127.0.0.0/8")])
        assert not raised.value.retryable
    with pytest.raises(WebhookError, match="cannot resolve") as raised:
        pinned_destinations("http://no-such-host.invalid/hook", [])
    assert raised.value.retryable


def test_delayed_action_waits_until_it_is_due(engine):
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(conn, "entity_changed", "notification", action_config={"delay_seconds": 3600})
    with engine.connect() as conn:
        assert fire(conn, rule, change_event(company)) is FiringOutcome.SCHEDULED

    run_due_actions(engine)
    with engine.begin() as conn:
        assert notification_titles(conn) == []
        make_due(conn)
    assert run_due_actions(engine).completed == 1
    with engine.connect() as conn:
        assert notification_titles(conn) == ["Muster GmbH: capital changed"]
        assert log_rows(conn, rule.id)[0].status == "success"


def test_expired_action_never_runs(engine, receiver):
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(
            conn,
            "entity_changed",
            "webhook",
            action_config={"url": receiver.url, "secret": SECRET, "delay_seconds": 60, "expires_after_seconds": 60},
        )
    with engine.connect() as conn:
        fire(conn, rule, change_event(company))
    with engine.begin() as conn:
        # The evaluators were down until after the expiry.
        conn.execute(
            sa.text(
                "UPDATE automation.scheduled_action SET execute_at = now() - interval '3 minutes', "
                "expires_at = now() - interval '2 minutes'"
            )
        )

    summary = run_due_actions(engine, allowed_networks=LOOPBACK_NETWORKS)

    assert (summary.expired, summary.completed) == (1, 0)
    assert receiver.deliveries == []
    with engine.connect() as conn:
        assert scheduled_actions(conn)[0].status == "expired"
        assert log_rows(conn, rule.id)[0].status == "expired"


def test_retry_that_would_land_after_the_expiry_expires_instead(engine, receiver):
    receiver.statuses = [502]
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(
            conn,
            "entity_changed",
            "webhook",
            action_config={"url": receiver.url, "secret": SECRET, "expires_after_seconds": 10},
        )
    with engine.connect() as conn:
        fire(conn, rule, change_event(company))

    assert run_due_actions(engine, allowed_networks=LOOPBACK_NETWORKS).expired == 1
    with engine.connect() as conn:
        [logged] = log_rows(conn, rule.id)
    assert logged.status == "expired" and "HTTP 502" in logged.error_message


def test_disabling_a_rule_cancels_its_waiting_actions(engine, receiver):
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(conn, "entity_changed", "webhook", action_config={"url": receiver.url, "secret": SECRET})
    with engine.connect() as conn:
        fire(conn, rule, change_event(company))
    with engine.begin() as conn:
        assert disable_rule(conn, rule.id, updated_by=USER)

    assert run_due_actions(engine, allowed_networks=LOOPBACK_NETWORKS).cancelled == 1
    assert receiver.deliveries == []
    with engine.connect() as conn:
        assert log_rows(conn, rule.id)[0].status == "cancelled"
