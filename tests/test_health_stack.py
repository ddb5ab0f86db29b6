"""Health on a running stack (sample register, Dagster daemon, `hreg metrics`): a run that hangs
fails at its maximum run time, the failure is posted to the alert webhook and its job comes back
through the failure path and completes; a job that fails for good grows the dead letter, which is
posted too; and /metrics, scraped while the jobs move, says what the job table says."""

from __future__ import annotations

import httpx
import pytest
import sqlalchemy as sa

from database_helpers import fresh_database
from orchestration.automation.webhooks import verify_signature
from orchestration.settings import Settings
from orchestration.stacks import devstack
from process_helpers import WaitBudget, free_port
from queue_helpers import insert_entity, insert_search
from test_automation_support import LOOPBACK, receiver  # noqa: F401 - receiver is a fixture
from test_health import scrape

pytestmark = pytest.mark.slow

SECRET = "stack alert secret"
MAX_RUNTIME_S = 45
ACTIVE_JOBS = sa.text(
    "SELECT type, priority::text, status, count(*) AS jobs FROM processing.processing_jobs "
    "WHERE status IN ('queued', 'running') GROUP BY 1, 2, 3"
)


@pytest.fixture
def stack(server_url, template_url, tmp_path, receiver):
    with fresh_database(server_url) as url, pytest.MonkeyPatch.context() as mp:
        for name, value in {
            "HREG_DATABASE_URL": url.render_as_string(hide_password=False),
            "HREG_DATA_DIR": str(tmp_path),
            "HREG_REGISTER": "sample",
            "HREG_SAMPLE_REGISTER_PORT": str(free_port()),
            "HREG_METRICS_PORT": str(free_port()),
            "HREG_SEARCH_OPENS": "none",  # a search lists its results: fewer runs on a busy machine
            "HREG_ALERT_WEBHOOK_URL": receiver.url,
            "HREG_ALERT_WEBHOOK_SECRET": SECRET,
            "HREG_WEBHOOK_ALLOWED_NETWORKS": LOOPBACK,
            "HREG_RUN_MAX_RUNTIME_SECONDS": str(MAX_RUNTIME_S),
        }.items():
            mp.setenv(name, value)
        stack = devstack.prepare(Settings())
        log_dir = tmp_path / "logs"
        try:
            devstack.start_sample_register(stack, log_dir)
            devstack.start_dagster(stack, webserver=False, log_dir=log_dir)
            devstack.start_metrics(stack, log_dir)
            yield stack
        finally:
            devstack.stop(stack)
            for log_file in sorted(log_dir.glob("*.log")):
                print(f"--- {log_file.name} (tail)\n{log_file.read_text(errors='replace')[-3000:]}")


def deliveries(receiver, event: str) -> list:
    return [d for d in receiver.deliveries if d.headers["X-Hreg-Event"] == event]


def test_a_hung_run_fails_is_alerted_and_its_job_completes_and_metrics_match_the_job_table(stack, receiver):
    budget = WaitBudget(540)  # the test's waits, inside its 600 s
    engine = sa.create_engine(stack.app_url)
    hold = engine.connect()
    try:
        # The search's run hangs where it writes its results, until this transaction ends.
        hold.execute(sa.text("LOCK TABLE public.search_results IN EXCLUSIVE MODE"))
        with engine.begin() as conn:
            search_id = insert_search(conn, "Bau GmbH")
            job_id = conn.execute(
                sa.text("SELECT id FROM processing.processing_jobs WHERE search_id = :s"), {"s": search_id}
            ).scalar_one()

        def hung_job():
            with engine.connect() as conn:
                return conn.execute(
                    sa.text("SELECT worker_id FROM processing.processing_jobs WHERE id = :j AND status = 'running'"),
                    {"j": job_id},
                ).scalar()

        hung_run = budget.wait_until(hung_job, "a run to claim the search's job")
        # While it hangs, the endpoint counts the running job, as the job table does.
        samples = scrape(stack.metrics_url)
        key = ("hreg_queue_jobs", (("priority", "interactive"), ("status", "running"), ("type", "basic_discovery")))
        assert samples[key] == 1

        # Run monitoring fails it at its maximum run time; the alert says so.
        [failed] = budget.wait_until(lambda: deliveries(receiver, "run_failed"), "the failed run's alert")
        assert verify_signature(SECRET, failed.body, failed.headers["X-Hreg-Signature-256"])
        assert failed.json["run_id"] == hung_run
        assert failed.json["job_name"] == "basic_discovery_job"
        assert f"maximum runtime of {MAX_RUNTIME_S} seconds" in failed.json["message"]

        def released():
            with engine.connect() as conn:
                return conn.execute(
                    sa.text("""SELECT dagster_run_id FROM processing.job_step_history
                                WHERE job_id = :j AND status = 'failed' AND error_type = 'lease_expired'
                                  AND error_source = 'run_status_sensor'"""),
                    {"j": job_id},
                ).scalar()

        assert budget.wait_until(released, "the failed run's job to be given back") == hung_run
    finally:
        hold.rollback()
        hold.close()

    # A parse of a file that is no SI document fails for good: the dead letter grows.
    with engine.begin() as conn:
        insert_entity(conn, "xml_ready")

    def search_status():
        with engine.connect() as conn:
            status = conn.execute(
                sa.text("SELECT status FROM public.searches WHERE id = :s"), {"s": search_id}
            ).scalar_one()
        return status if status in ("completed", "failed") else None

    assert budget.wait_until(search_status, "the search's retry to finish") == "completed"
    [grew] = budget.wait_until(lambda: deliveries(receiver, "dead_letter_grew"), "the dead letter's alert")
    assert (grew.json["previous_size"], grew.json["size"]) == (0, 1)
    [(failure_class, dead_count)] = [
        (row["failure_class"], row["jobs"]) for row in grew.json["by_type_and_failure_class"]
    ]

    def quiet():
        with engine.connect() as conn:
            return not conn.execute(ACTIVE_JOBS).all()

    budget.wait_until(quiet, "every job to be done")
    # The parse's run ends after its jobs do, and its failure is posted on the sensor's next tick.
    budget.wait_until(lambda: len(deliveries(receiver, "run_failed")) >= 2, "the parse run's failure alert")
    samples = scrape(stack.metrics_url)
    with engine.connect() as conn:
        dead_letter = conn.execute(
            sa.text("SELECT type, failure_class, count(*) FROM processing.dead_letter GROUP BY 1, 2")
        ).all()
        reaps = conn.execute(
            sa.text("""SELECT count(*) FROM processing.job_step_history
                        WHERE status = 'failed' AND error_type = 'lease_expired'
                          AND error_source = 'run_status_sensor'""")
        ).scalar_one()
    assert dead_letter == [("xml_parsing", failure_class, dead_count)]
    assert samples[("hreg_dead_letter_jobs", (("failure_class", failure_class), ("type", "xml_parsing")))] == 1
    assert reaps == 1
    assert samples[("hreg_lease_reaps_total", (("source", "run_status_sensor"),))] == 1
    # The parse's run failed too (every job of its batch failed): both runs were posted, and counted.
    assert sorted(d.json["job_name"] for d in deliveries(receiver, "run_failed")) == [
        "basic_discovery_job",
        "xml_parsing_job",
    ]
    assert samples[("hreg_dagster_failed_runs", (("job", "basic_discovery_job"),))] == 1
    assert samples[("hreg_dagster_failed_runs", (("job", "xml_parsing_job"),))] == 1
    assert not [value for (name, _), value in samples.items() if name == "hreg_queue_jobs" and value]
    # Every retrieval the register served took a token: the hung attempt's and the retry's.
    served = httpx.get(f"{stack.settings.register_base_url}/_sample/retrievals", timeout=10).json()
    bucket = f"register {stack.settings.register_base_url}"
    taken = sum(
        value
        for (name, labels), value in samples.items()
        if name == "hreg_rate_limit_taken_last_hour" and dict(labels)["bucket"] == bucket
    )
    assert taken == len(served) >= 2
    engine.dispose()
