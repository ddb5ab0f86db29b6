"""The code location without its database: it loads, its sensors say what is wrong, and the
retries of a step that fails before it claims jobs follow processing.job_types as it is now."""

from __future__ import annotations

import json

import dagster as dg
import pytest
import sqlalchemy as sa

from assets.retries import RETRY_TAG
from orchestration.definitions import build_definitions
from process_helpers import free_port

SENSORS = [
    "basic_discovery_sensor",
    "xml_parsing_sensor",
    "shareholder_download_sensor",
    "shareholder_parsing_sensor",
    "lease_reaper_sensor",
    "job_archive_sensor",
    "automation_event_sensor",
    "automation_schedule_sensor",
]


@pytest.fixture
def unreachable(settings):
    """The settings with a database URL where no server listens."""
    return settings.model_copy(update={"database_url": f"postgresql+psycopg2://hreg@127.0.0.1:{free_port()}/hreg"})


def tick(defs: dg.Definitions, name: str, instance: dg.DagsterInstance) -> dg.SensorExecutionData:
    with dg.build_sensor_context(instance=instance, resources=defs.resources, definitions=defs) as context:
        return defs.get_sensor_def(name).evaluate_tick(context)


def test_the_location_loads_without_the_database_and_each_sensor_says_so(unreachable):
    defs = build_definitions(unreachable)
    dg.Definitions.validate_loadable(defs)
    with dg.instance_for_test() as instance:
        for name in SENSORS:
            result = tick(defs, name, instance)
            assert not result.run_requests, name
            assert result.skip_message.startswith("database unavailable: cannot reach the database"), name
            assert "HREG_DATABASE_URL" in result.skip_message, name


def retries(result: dg.ExecuteInProcessResult) -> list[float]:
    """The waits of the step's retries in a run."""
    return [
        event.event_specific_data.seconds_to_wait
        for event in result.all_events
        if event.event_type == dg.DagsterEventType.STEP_UP_FOR_RETRY
    ]


def set_retries(conn: sa.Connection, max_retries: int) -> None:
    conn.execute(
        sa.text("""UPDATE processing.job_types SET max_retries = :n, backoff_base_s = 0.05, backoff_cap_s = 0.1
                    WHERE type = 'basic_discovery'"""),
        {"n": max_retries},
    )


def test_a_changed_max_retries_applies_to_the_next_run_without_a_reload(engine, settings, db_url):
    # Claims give up after 200 ms waiting for a lock: a claim the database refuses, before any job
    # is touched, while the job type's row stays readable.
    url = db_url.update_query_dict({"options": "-c lock_timeout=200"}).render_as_string(hide_password=False)
    defs = build_definitions(settings.model_copy(update={"database_url": url}))
    job = defs.resolve_job_def("basic_discovery_job")
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO public.searches (user_id, query) VALUES (gen_random_uuid(), 'Werft')"))
        set_retries(conn, 1)

    with engine.connect() as holder, dg.instance_for_test() as instance:
        holder.execute(sa.text("LOCK TABLE processing.processing_jobs IN ACCESS EXCLUSIVE MODE"))
        first = job.execute_in_process(instance=instance, raise_on_error=False)
        set_retries(holder, 3)  # seen by the next run: the lock holder's transaction is the one
        holder.commit()
        holder.execute(sa.text("LOCK TABLE processing.processing_jobs IN ACCESS EXCLUSIVE MODE"))
        second = job.execute_in_process(instance=instance, raise_on_error=False)
        holder.rollback()

    assert not first.success and not second.success
    assert len(retries(first)) == 1
    assert len(retries(second)) == 3
    # The backoff of the row, capped at its backoff_cap_s, as the database trigger backs off a job.
    assert all(0.025 <= wait <= 0.1 for wait in retries(first) + retries(second))
    with engine.connect() as conn:
        status = conn.execute(sa.text("SELECT status, retry_count FROM processing.processing_jobs")).one()
    assert tuple(status) == ("queued", 0)  # no job was claimed, so none was retried by the database


def test_a_run_that_cannot_read_the_job_types_retries_as_its_sensor_read_them(unreachable):
    job = build_definitions(unreachable).resolve_job_def("xml_parsing_job")
    tags = {RETRY_TAG: json.dumps({"max_retries": 2, "backoff_base_s": 0.01, "backoff_cap_s": 0.02})}
    with dg.instance_for_test() as instance:
        requested = job.execute_in_process(instance=instance, tags=tags, raise_on_error=False)
        from_the_ui = job.execute_in_process(instance=instance, raise_on_error=False)
    assert not requested.success and len(retries(requested)) == 2
    # A run started by hand, with the database down: it fails at once and says why.
    assert not from_the_ui.success and retries(from_the_ui) == []
    [failure] = [e for e in from_the_ui.all_events if e.event_type == dg.DagsterEventType.STEP_FAILURE]
    assert "cannot reach the database" in failure.event_specific_data.error.message
