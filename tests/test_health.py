"""What an operator scrapes and is alerted on, against a real database: the /metrics endpoint
served over HTTP and parsed with Prometheus' own parser, and the dead letter's alert posted to a
real HTTP receiver through the monitoring rules' guarded webhook path."""

from __future__ import annotations

import json

import dagster as dg
import httpx
import pytest
import sqlalchemy as sa
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.parser import text_string_to_metric_families

from orchestration.automation.webhooks import verify_signature
from orchestration.definitions import build_definitions
from orchestration.health.metrics import QueueCollector
from orchestration.jobs.specs import JOB_TYPES
from orchestration.register import SharedRateLimiter
from orchestration.runtime import queue
from orchestration.runtime.failures import JobError
from process_helpers import free_port
from queue_helpers import claim_and_fail, claim_one, expire_lease, insert_entity, insert_search
from test_automation_support import LOOPBACK, receiver  # noqa: F401 - receiver is a fixture

SECRET = "alert secret"
ACTIVE_JOBS_BY_TYPE_PRIORITY_STATUS = sa.text(
    "SELECT type, priority::text, status, count(*) AS jobs FROM processing.processing_jobs "
    "WHERE status IN ('queued', 'running') GROUP BY 1, 2, 3"
)


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the endpoint by (name, sorted labels), as Prometheus reads the text."""
    text = httpx.get(url, timeout=10).text
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


@pytest.fixture
def metrics_url(engine):
    registry = CollectorRegistry(auto_describe=False)
    registry.register(QueueCollector(engine))
    server, thread = start_http_server(free_port(), addr="127.0.0.1", registry=registry)
    yield f"http://127.0.0.1:{server.server_port}/metrics"
    server.shutdown()
    server.server_close()
    thread.join()


def labels(**values: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(values.items()))


def test_a_scrape_shows_the_queue_the_dead_letter_the_reaps_and_the_rate_limit(engine, metrics_url):
    with engine.begin() as conn:
        for query in ("Bäckerei", "Bau GmbH", "Muster AG"):
            insert_search(conn, query)
        # Due ten minutes ago: the oldest due job has waited that long.
        conn.execute(sa.text("UPDATE processing.processing_jobs SET next_attempt_at = now() - interval '10 minutes'"))
        running = claim_one(conn, "basic_discovery", worker_id="worker-1")
        for _ in range(2):
            insert_entity(conn, "xml_ready")
    with engine.begin() as conn:
        # One parse fails for good (a permanent class), the other's worker dies: the reaper fails it.
        claim_and_fail(conn, "xml_parsing", JobError("invalid_file", "not XJustiz"))
        lost = claim_one(conn, "xml_parsing", worker_id="worker-2")
        expire_lease(conn, lost.id)
    with engine.begin() as conn:
        assert queue.reap_expired(conn) == [lost.id]
    limiter = SharedRateLimiter(engine, "register http://portal.test", 60, burst=5, reserve=2)
    limiter.acquire(priority="interactive")
    limiter.acquire(priority="interactive")
    limiter.acquire(priority="background")

    samples = scrape(metrics_url)

    assert samples[("hreg_database_up", ())] == 1
    # What a user reads in the job table.
    with engine.connect() as conn:
        table = {
            (row.type, row.priority, row.status): row.jobs for row in conn.execute(ACTIVE_JOBS_BY_TYPE_PRIORITY_STATUS)
        }
    assert table == {
        ("basic_discovery", "interactive", "queued"): 2,
        ("basic_discovery", "interactive", "running"): 1,
        ("xml_parsing", "interactive", "queued"): 1,  # the reaped job, back in the queue
    }
    queue_samples = {
        (dict(key)["type"], dict(key)["priority"], dict(key)["status"]): value
        for (name, key), value in samples.items()
        if name == "hreg_queue_jobs"
    }
    assert {key: value for key, value in queue_samples.items() if value} == table
    # Every job type and priority is there, at 0 when empty, so that an alert rule finds it.
    assert queue_samples[("shareholder_parsing", "background", "queued")] == 0
    assert len(queue_samples) == len(list(JOB_TYPES)) * 2 * 2  # each type, priority and status

    oldest = samples[("hreg_oldest_due_job_age_seconds", labels(type="basic_discovery", priority="interactive"))]
    assert 600 <= oldest < 900
    # The reaped parse is in its backoff, not due.
    assert samples[("hreg_oldest_due_job_age_seconds", labels(type="xml_parsing", priority="interactive"))] == 0

    assert samples[("hreg_lease_reaps_total", labels(source="lease_reaper"))] == 1
    assert samples[("hreg_lease_reaps_total", labels(source="run_status_sensor"))] == 0
    assert samples[("hreg_dead_letter_jobs", labels(type="xml_parsing", failure_class="invalid_file"))] == 1
    assert samples[("hreg_failed_jobs", labels(type="xml_parsing", failure_class="invalid_file"))] == 1
    assert running.type == "basic_discovery"

    bucket = "register http://portal.test"
    assert samples[("hreg_rate_limit_per_hour", labels(bucket=bucket))] == 60
    # A burst of 5, three taken; the refill adds 55 an hour (0.015 a second) meanwhile.
    assert 2 <= samples[("hreg_rate_limit_tokens", labels(bucket=bucket))] < 2.5
    assert samples[("hreg_rate_limit_taken_last_hour", labels(bucket=bucket, priority="interactive"))] == 2
    assert samples[("hreg_rate_limit_taken_last_hour", labels(bucket=bucket, priority="background"))] == 1


def test_the_current_hour_window_forgets_retrievals_older_than_an_hour(engine, metrics_url):
    limiter = SharedRateLimiter(engine, "register http://portal.test", 60, burst=5)
    limiter.acquire()
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE processing.rate_limit_takes SET taken_at = taken_at - interval '61 minutes'"))
    limiter.acquire()
    taken = ("hreg_rate_limit_taken_last_hour", labels(bucket="register http://portal.test", priority="interactive"))
    assert scrape(metrics_url)[taken] == 1
    with engine.connect() as conn:
        # The take function deleted the old row: the table holds an hour at most.
        assert conn.execute(sa.text("SELECT count(*) FROM processing.rate_limit_takes")).scalar_one() == 1


def test_a_scrape_without_the_database_says_so(settings):
    from orchestration.db.engine import create_app_engine

    unreachable = create_app_engine(f"postgresql+psycopg2://hreg@127.0.0.1:{free_port()}/hreg")
    registry = CollectorRegistry(auto_describe=False)
    registry.register(QueueCollector(unreachable))
    from prometheus_client import generate_latest

    families = {family.name: family for family in text_string_to_metric_families(generate_latest(registry).decode())}
    assert list(families) == ["hreg_database_up"]
    assert families["hreg_database_up"].samples[0].value == 0


def dead_letter_tick(defs: dg.Definitions, instance: dg.DagsterInstance, cursor: str | None):
    with dg.build_sensor_context(
        instance=instance, resources=defs.resources, definitions=defs, cursor=cursor
    ) as context:
        return defs.get_sensor_def("dead_letter_alert_sensor").evaluate_tick(context)


def fail_for_good(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        insert_entity(conn, "xml_ready")
        claim_and_fail(conn, "xml_parsing", JobError("parser_error", "cannot read"))


def test_a_growing_dead_letter_is_posted_once_signed_and_again_after_the_receiver_failed(engine, settings, receiver):
    defs = build_definitions(
        settings.model_copy(
            update={
                "alert_webhook_url": receiver.url,
                "alert_webhook_secret": SECRET,
                "webhook_allowed_networks": LOOPBACK,
            }
        )
    )
    with dg.instance_for_test() as instance:
        first = dead_letter_tick(defs, instance, None)
        assert receiver.deliveries == []
        fail_for_good(engine)
        grown = dead_letter_tick(defs, instance, first.cursor)
        [delivery] = receiver.deliveries
        assert delivery.headers["X-Hreg-Event"] == "dead_letter_grew"
        assert verify_signature(SECRET, delivery.body, delivery.headers["X-Hreg-Signature-256"])
        assert delivery.json["size"] == 1 and delivery.json["previous_size"] == 0
        assert delivery.json["by_type_and_failure_class"] == [
            {"type": "xml_parsing", "failure_class": "parser_error", "jobs": 1}
        ]
        # Unchanged: nothing new is posted.
        unchanged = dead_letter_tick(defs, instance, grown.cursor)
        assert len(receiver.deliveries) == 1

        # The receiver is down for every attempt of a tick: the next tick posts the growth again.
        fail_for_good(engine)
        receiver.statuses = [503, 503, 503]
        with pytest.raises(Exception, match="HTTP 503"):
            dead_letter_tick(defs, instance, unchanged.cursor)
        assert len(receiver.deliveries) == 4
        dead_letter_tick(defs, instance, unchanged.cursor)
        assert len(receiver.deliveries) == 5
        assert (receiver.deliveries[-1].json["previous_size"], receiver.deliveries[-1].json["size"]) == (1, 2)


def test_alerts_reach_a_private_address_only_where_its_network_is_allowed(engine, settings, receiver):
    defs = build_definitions(settings.model_copy(update={"alert_webhook_url": receiver.url}))
    fail_for_good(engine)
    with dg.instance_for_test() as instance, pytest.raises(Exception, match="not a public address"):
        dead_letter_tick(defs, instance, json.dumps({"size": 0}))
    assert receiver.deliveries == []
