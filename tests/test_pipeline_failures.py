"""Failure paths of runs: a transient error then success, and a worker killed mid-batch."""

import os
import signal
import subprocess
import sys
import textwrap

import dagster as dg
import httpx
import pytest
import sqlalchemy as sa

from orchestration.definitions import build_definitions
from orchestration.jobs.specs import JOB_TYPES
from orchestration.records.documents import DocumentStore
from orchestration.runtime import queue
from orchestration.runtime.worker import run_batch
from orchestration.stages.parsing import XmlParsingStage
from pipeline_helpers import add_entity_with_si, history_rows, job_rows, sample_si_files
from queue_helpers import expire_lease
from sample_register import start_sample_register_in_thread


@pytest.fixture(scope="module")
def sample_register(samples_dir):
    with start_sample_register_in_thread(samples_dir=samples_dir) as server:
        yield server


@pytest.fixture
def register_settings(sample_register, settings):
    """The test's settings with the register at the sample register, whose faults are reset afterwards."""
    yield settings.model_copy(update={"register_kind": "sample", "register_url": sample_register.url})
    httpx.delete(sample_register.url + "/_sample/faults").raise_for_status()


def make_due(engine) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE processing.processing_jobs SET next_attempt_at = now() WHERE status = 'queued'"))


def test_transient_register_error_is_retried_by_the_database_then_succeeds(engine, register_settings):
    with engine.begin() as conn:
        search_id = conn.execute(
            sa.text(
                "INSERT INTO public.searches (user_id, query, mode) VALUES (gen_random_uuid(), 'Apple GmbH', 'exact') RETURNING id"
            )
        ).scalar_one()
    httpx.post(
        register_settings.register_url + "/_sample/faults", json={"kind": "server_error", "status": 503}
    ).raise_for_status()

    with dg.instance_for_test() as instance:
        job_def = build_definitions(register_settings).resolve_job_def("basic_discovery_job")
        failed_run = job_def.execute_in_process(instance=instance, raise_on_error=False)
        # Every job of the batch failed: the step fails, and is not retried by Dagster, since
        # the database already re-queued the job.
        assert not failed_run.success
        assert len(instance.get_runs()) == 1
        (job,) = job_rows(engine, "basic_discovery")
        assert (job.status, job.retry_count) == ("queued", 1)
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT next_attempt_at > now() FROM processing.processing_jobs")).scalar()
            assert queue.count_due(conn, "basic_discovery") == 0  # backing off

        make_due(engine)
        good_run = job_def.execute_in_process(instance=instance, raise_on_error=False)
        assert good_run.success

    with engine.connect() as conn:
        search = conn.execute(
            sa.text("SELECT status, result_count FROM public.searches WHERE id = :s"), {"s": search_id}
        ).one()
        entity = conn.execute(sa.text("SELECT name, processing_status FROM content.entities")).one()
    assert (search.status, search.result_count) == ("completed", 1)
    # The search opened its one result for its person: the run that fetched the SI parsed it too.
    assert (entity.name, entity.processing_status) == ("Apple GmbH", "parsed")
    steps = [(h.status, h.attempt_number, h.error_type, h.error_code) for h in history_rows(engine, job.id)]
    assert steps == [
        ("queued", 1, None, None),
        ("running", 1, None, None),
        ("failed", 1, "dependency_unavailable", "503"),
        ("queued", 2, None, None),
        ("running", 2, None, None),
        ("completed", 2, None, None),
    ]
    assert {h.dagster_run_id for h in history_rows(engine, job.id) if h.status != "queued"} == {
        failed_run.run_id,
        good_run.run_id,
    }


# A worker process that claims the batch, reports nothing and hangs, as a run whose process
# dies mid-batch does.
HANGING_WORKER = textwrap.dedent("""
    import sys, time
    from orchestration.db.engine import create_app_engine
    from orchestration.jobs.specs import JOB_TYPES
    from orchestration.runtime.worker import Stage, run_batch

    class Hang(Stage):
        def process_chunk(self, conn, jobs):
            print("claimed", len(jobs), flush=True)
            time.sleep(600)

    run_batch(create_app_engine(sys.argv[1]), Hang(JOB_TYPES.xml_parsing), "doomed-worker", lease_seconds=60)
""")


def test_a_killed_worker_leaves_its_jobs_to_the_reaper_and_they_are_retried(engine, db_url, settings, samples_dir):
    store = DocumentStore(settings.documents_dir)
    files = sample_si_files(samples_dir)[:3]
    for i, path in enumerate(files):
        add_entity_with_si(engine, store, path.read_bytes(), number=str(300 + i))

    worker = subprocess.Popen(
        [sys.executable, "-c", HANGING_WORKER, db_url.render_as_string(hide_password=False)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert worker.stdout.readline().strip() == "claimed 3"
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()

    with engine.begin() as conn:
        for job in job_rows(engine, "xml_parsing"):
            expire_lease(conn, job.id)  # the lease runs out: nobody extends it any more
        assert len(queue.reap_expired(conn)) == 3
    make_due(engine)
    report = run_batch(engine, XmlParsingStage(JOB_TYPES.xml_parsing, store), "rescuer")
    assert (report.claimed, report.completed) == (3, 3)

    for job in job_rows(engine, "xml_parsing"):
        assert (job.status, job.retry_count) == ("completed", 1)
        steps = [(h.status, h.worker_id, h.error_type) for h in history_rows(engine, job.id)]
        assert steps == [
            ("running", "doomed-worker", None),
            ("failed", "doomed-worker", "lease_expired"),
            ("queued", None, None),
            ("running", "rescuer", None),
            ("completed", "rescuer", None),
        ]
