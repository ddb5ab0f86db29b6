"""The job types are declared once, in orchestration.jobs.specs: the rows of processing.job_types
in a migrated database are exactly the specs' types, in the same pipeline order, with the same
people-first budget and the versions the specs stamp, and the code location's jobs and sensors
are made from the specs."""

from __future__ import annotations

import dataclasses

import sqlalchemy as sa

from orchestration.definitions import build_definitions
from orchestration.jobs.specs import JOB_TYPES, JobTypes


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


def test_the_code_location_has_a_job_and_a_sensor_per_spec_polling_as_the_spec_says():
    defs = build_definitions()

    for spec in JOB_TYPES:
        job = defs.resolve_job_def(f"{spec.name}_job")
        sensor = defs.resolve_sensor_def(f"{spec.name}_sensor")
        assert job.tags["hreg/job_type"] == spec.name
        assert (sensor.job_name, sensor.minimum_interval_seconds) == (job.name, spec.sensor_interval_seconds)
