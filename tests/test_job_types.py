"""The job types are declared once, in orchestration.jobs.specs: the rows of processing.job_types
in a migrated database are exactly the specs' types, in the same pipeline order, with the same
people-first budget and the versions the specs stamp, and the code location's jobs and sensors
are made from the specs; what a type's row says its jobs show on their entity is a status the
entity's column takes."""

from __future__ import annotations

import dataclasses

import sqlalchemy as sa

from orchestration.definitions import build_definitions
from orchestration.jobs.specs import JOB_TYPES, JobTypes
from queue_helpers import insert_entity


def job_type_rows(engine) -> dict[str, sa.Row]:
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text("SELECT type, stage, background_slots, current_version FROM processing.job_types")
        ).all()
    return {row.type: row for row in rows}


def test_the_specs_and_the_rows_of_processing_job_types_agree(engine):
    rows = job_type_rows(engine)

    # The pipeline's stages in order, then the requests beside it.
    in_order = sorted(rows, key=lambda name: (rows[name].stage is None, rows[name].stage or 0))
    assert in_order == [spec.name for spec in JOB_TYPES]
    for spec in JOB_TYPES:
        row = rows[spec.name]
        assert (row.stage, row.background_slots is not None, row.current_version) == (
            spec.step,
            spec.people_first,
            spec.version,
        ), spec.name
    # The deployment's fields are named as the types they hold.
    assert [field.name for field in dataclasses.fields(JobTypes)] == [spec.name for spec in JOB_TYPES]


def test_every_status_a_job_types_row_names_is_one_its_entity_column_takes(engine):
    # The triggers write these values when a job runs, completes or fails for good; a value the
    # column refuses would fail the job's own update instead.
    with engine.begin() as conn:
        named = conn.execute(
            sa.text("""
            SELECT jt.type, jt.entity_status_column AS status_column, effect.status
              FROM processing.job_types jt,
                   LATERAL (VALUES (jt.entity_status_running), (jt.entity_status_completed),
                                   (jt.entity_status_failed)) AS effect (status)
             WHERE effect.status IS NOT NULL
        """)
        ).all()
        entity_id = insert_entity(conn)
        refused = []
        for row in named:
            with conn.begin_nested() as attempt:
                try:
                    conn.execute(
                        sa.text(f"UPDATE content.entities SET {row.status_column} = :status WHERE id = :id"),
                        {"status": row.status, "id": entity_id},
                    )
                except sa.exc.IntegrityError:
                    refused.append((row.type, row.status_column, row.status))
                attempt.rollback()
    # Every pipeline type moves its entity; a request beside it (a printout) may show nothing there.
    assert {row.type for row in named} >= {spec.name for spec in JOB_TYPES if spec.name != "printout_download"}
    assert refused == []


def test_the_code_location_has_a_job_and_a_sensor_per_spec_polling_as_the_spec_says():
    defs = build_definitions()

    for spec in JOB_TYPES:
        job = defs.resolve_job_def(f"{spec.name}_job")
        sensor = defs.resolve_sensor_def(f"{spec.name}_sensor")
        assert job.tags["hreg/job_type"] == spec.name
        assert (sensor.job_name, sensor.minimum_interval_seconds) == (job.name, spec.sensor_interval_seconds)
