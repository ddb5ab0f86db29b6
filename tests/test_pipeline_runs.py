"""Runs executed in process against the real database: batches, per-job outcomes, history, checks."""

from __future__ import annotations

import dagster as dg
import sqlalchemy as sa

from orchestration.definitions import build_definitions
from orchestration.records.documents import DocumentStore
from orchestration.settings import Settings
from pipeline_helpers import (
    add_entity_with_si,
    history_rows,
    job_rows,
    materializations_of,
    observations_of,
    sample_si_files,
)


def run_job(settings: Settings, job_name: str, instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    return (
        build_definitions(settings)
        .resolve_job_def(job_name)
        .execute_in_process(instance=instance, raise_on_error=False)
    )


def test_parse_run_completes_good_documents_and_fails_only_the_bad_one(engine, settings, samples_dir):
    store = DocumentStore(settings.documents_dir)
    files = sample_si_files(samples_dir)[:4]
    good = [add_entity_with_si(engine, store, f.read_bytes(), number=str(100 + i)) for i, f in enumerate(files)]
    bad = add_entity_with_si(engine, store, b"<?xml version='1.0'?><invoice/>", number="999")

    with dg.instance_for_test() as instance:
        result = run_job(settings, "xml_parsing_job", instance)
        assert result.success
        # All five are Munich's, and one of its documents is not parsed: the court partition is
        # not materialized (it stays unsynced); an observation says what the batch did there.
        assert not materializations_of(result, "company_records")
        (observation,) = observations_of(result, "company_records")
        assert observation.partition == "D2601"
        metadata = {k: v.value for k, v in observation.metadata.items()}
        assert metadata["records"] == 4 and metadata["revisions_written"] == 4 and metadata["failed"] == 1
        assert metadata["unfinished"] == 1
        assert metadata["failures_by_class"] == {"invalid_file": 1}
        checks = {c.check_name: c for c in result.get_asset_check_evaluations()}
        assert checks["records_have_name_and_register"].passed
        # The test filed real documents under made-up register numbers: the check notices all four.
        mismatch = checks["record_register_matches_entity"]
        assert not mismatch.passed and mismatch.metadata["violations"].value == 4
        run_id = result.run_id

    with engine.connect() as conn:
        statuses = dict(conn.execute(sa.text("SELECT id::text, processing_status FROM content.entities")).all())
        revisions = conn.execute(sa.text("SELECT count(*) FROM content.entity_revisions")).scalar_one()
    assert {statuses[e] for e in good} == {"parsed"}
    assert statuses[bad] == "xml_parsing_failed"  # permanent class: no retry
    assert revisions == 4

    bad_job = next(j for j in job_rows(engine, "xml_parsing") if str(j.entity_id) == bad)
    assert bad_job.status == "failed" and bad_job.failure_class == "invalid_file" and bad_job.retry_count == 0
    steps = [(h.status, h.attempt_number, h.dagster_run_id, h.error_type) for h in history_rows(engine, bad_job.id)]
    assert steps == [("running", 1, run_id, None), ("failed", 1, run_id, "invalid_file")]
    failed_step = history_rows(engine, bad_job.id)[-1]
    assert "XJustiz" in failed_step.error_message and failed_step.duration_ms is not None
