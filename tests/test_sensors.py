"""Job sensors evaluated with build_sensor_context against the real database."""

import json

import dagster as dg
import sqlalchemy as sa

from orchestration.definitions import build_definitions
from orchestration.records.documents import DocumentStore
from pipeline_helpers import add_entity_with_si, sample_si_files


def set_batch_size(engine, job_type: str, size: int) -> None:
    with engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE processing.job_types SET batch_size = :s WHERE type = :t"), {"s": size, "t": job_type}
        )


def queue_xml_parsing(engine, settings, samples_dir, count: int, first_number: int, batch_size: int) -> None:
    """``count`` entities with an SI document each (so a due xml_parsing job each), parsed in batches of ``batch_size``."""
    store = DocumentStore(settings.documents_dir)
    content = sample_si_files(samples_dir)[0].read_bytes()
    for i in range(count):
        add_entity_with_si(engine, store, content + b" " * i, number=str(first_number + i))
    set_batch_size(engine, "xml_parsing", batch_size)


def tick(defs: dg.Definitions, name: str, instance: dg.DagsterInstance, cursor: str | None):
    with dg.build_sensor_context(
        instance=instance, cursor=cursor, resources=defs.resources, definitions=defs
    ) as context:
        return defs.get_sensor_def(name).evaluate_tick(context)


def test_sensor_requests_one_run_per_batch_and_a_duplicated_tick_requests_nothing_new(engine, settings, samples_dir):
    queue_xml_parsing(engine, settings, samples_dir, count=5, first_number=500, batch_size=2)
    defs = build_definitions(settings)

    with dg.instance_for_test() as instance:
        first = tick(defs, "xml_parsing_sensor", instance, cursor=None)
        keys = [r.run_key for r in first.run_requests]
        assert len(keys) == 3  # 5 due jobs in batches of 2
        assert all(r.tags["hreg/job_type"] == "xml_parsing" for r in first.run_requests)

        # The same tick evaluated again (its cursor was not stored): the same run keys, which
        # Dagster deduplicates.
        again = tick(defs, "xml_parsing_sensor", instance, cursor=None)
        assert [r.run_key for r in again.run_requests] == keys

        # The next tick, before any run claimed its batch: nothing new.
        later = tick(defs, "xml_parsing_sensor", instance, cursor=first.cursor)
        assert not later.run_requests
        assert "already requested" in later.skip_message
        assert set(json.loads(first.cursor)["run_keys"]) == set(keys)


def test_sensor_skips_with_a_reason_when_the_queue_is_empty(engine, settings):
    defs = build_definitions(settings)
    with dg.instance_for_test() as instance:
        result = tick(defs, "basic_discovery_sensor", instance, cursor=None)
    assert not result.run_requests
    assert result.skip_message == "no due basic_discovery jobs"


def test_sensor_does_not_flood_the_daemon_while_runs_are_in_flight(engine, settings, samples_dir):
    queue_xml_parsing(engine, settings, samples_dir, count=10, first_number=700, batch_size=1)
    defs = build_definitions(settings.model_copy(update={"max_runs_in_flight": 2}))
    with dg.instance_for_test() as instance:
        first = tick(defs, "xml_parsing_sensor", instance, cursor=None)
        assert len(first.run_requests) == 2  # at most 2 in flight, though 10 batches are due
        for request in first.run_requests:
            instance.create_run_for_job(
                defs.resolve_job_def("xml_parsing_job"), run_config={}, tags=request.tags
            )  # queued, not started: in flight
        blocked = tick(defs, "xml_parsing_sensor", instance, cursor=first.cursor)
    assert not blocked.run_requests
    assert "in flight" in blocked.skip_message


def test_lease_reaper_sensor_requeues_jobs_of_a_dead_run(engine, settings):
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO public.searches (user_id, query) VALUES (gen_random_uuid(), 'Werft')"))
        conn.execute(
            sa.text("""UPDATE processing.processing_jobs
                                   SET status = 'running', worker_id = 'gone', started_at = now() - interval '1 hour',
                                       lease_until = now() - interval '1 second'""")
        )
    defs = build_definitions(settings)
    with dg.instance_for_test() as instance:
        result = tick(defs, "lease_reaper_sensor", instance, cursor=None)
    assert "reaped 1" in result.skip_message
    with engine.connect() as conn:
        job = conn.execute(sa.text("SELECT status, retry_count FROM processing.processing_jobs")).one()
        step = conn.execute(
            sa.text("""SELECT error_type, error_source FROM processing.job_step_history
                                        WHERE status = 'failed'""")
        ).one()
    assert (job.status, job.retry_count) == ("queued", 1)
    assert (step.error_type, step.error_source) == ("lease_expired", "lease_reaper")


def test_a_requested_run_claims_the_batch_its_sensor_requested_it_for(engine, settings, samples_dir):
    queue_xml_parsing(engine, settings, samples_dir, count=3, first_number=800, batch_size=1)
    defs = build_definitions(settings.model_copy(update={"max_batches_per_run": 1}))
    with dg.instance_for_test() as instance:
        requests = tick(defs, "xml_parsing_sensor", instance, cursor=None).run_requests
        assert len(requests) == 3
        last = requests[-1]  # the batch at the back of the queue
        result = defs.resolve_job_def("xml_parsing_job").execute_in_process(instance=instance, tags=last.tags)
    assert result.success
    head_id = last.run_key.split(":")[1]
    with engine.connect() as conn:
        statuses = dict(
            conn.execute(
                sa.text("SELECT id::text, status FROM processing.processing_jobs WHERE type = 'xml_parsing'")
            ).all()
        )
    assert statuses.pop(head_id) == "completed"
    assert list(statuses.values()) == ["queued", "queued"]


def test_a_batch_still_due_after_its_run_ended_is_requested_again_under_a_new_key(engine, settings, samples_dir):
    queue_xml_parsing(engine, settings, samples_dir, count=1, first_number=900, batch_size=1)
    defs = build_definitions(settings)
    job = defs.resolve_job_def("xml_parsing_job")

    def run_of(request: dg.RunRequest) -> dg.DagsterRun:
        """The run the daemon creates for ``request``, as yet not started."""
        return instance.create_run_for_job(
            job, run_config={}, tags={**request.tags, "dagster/run_key": request.run_key}
        )

    with dg.instance_for_test() as instance:
        first = tick(defs, "xml_parsing_sensor", instance, cursor=None)
        (request,) = first.run_requests
        run = run_of(request)
        # Its run has not started yet: it may still take the batch.
        assert not tick(defs, "xml_parsing_sensor", instance, cursor=first.cursor).run_requests

        # The launch fails (a code server that did not answer): the batch is still due, under a
        # run key Dagster has already used.
        instance.report_run_failed(run)
        second = tick(defs, "xml_parsing_sensor", instance, cursor=first.cursor)
        (retry,) = second.run_requests
        assert retry.run_key != request.run_key
        assert retry.tags["hreg/batch_head"] == request.tags["hreg/batch_head"]

        instance.report_run_failed(run_of(retry))
        (third,) = tick(defs, "xml_parsing_sensor", instance, cursor=second.cursor).run_requests
    assert third.run_key not in (request.run_key, retry.run_key)
