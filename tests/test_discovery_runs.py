"""People first in a real Dagster run: a run of basic_discovery_job serves a person's open before
the background re-checks that were queued earlier, and the parse of the person's document is
interactive too. Real PostgreSQL, the sample register over real HTTP."""

from __future__ import annotations

import dagster as dg
import sqlalchemy as sa

from orchestration.definitions import build_definitions
from sample_register.entities import insert_known_entities


def test_a_run_serves_a_persons_open_before_earlier_background_rechecks(
    engine, configured_sample_register, sample_register_settings
):
    companies = [c for c in configured_sample_register.corpus.companies if c.seed is not None and not c.deleted][:4]
    with engine.begin() as conn:
        ids = insert_known_entities(conn, companies)
        watched, opened = ids[:3], ids[3]
        for entity_id in watched:  # a monitoring rule's re-checks, queued first
            conn.execute(sa.text("SELECT automation.request_rediscovery(:e)"), {"e": entity_id})
    with engine.begin() as conn:  # then a person opens a company, as the application does
        conn.execute(
            sa.text("UPDATE content.entities SET processing_status = 'basic_discovery_running' WHERE id = :e"),
            {"e": opened},
        )

    defs = build_definitions(sample_register_settings)
    with dg.instance_for_test() as instance:
        result = defs.resolve_job_def("basic_discovery_job").execute_in_process(instance=instance, raise_on_error=False)
        assert result.success
        run_id = result.run_id

    with engine.connect() as conn:
        jobs = conn.execute(
            sa.text("""
            SELECT entity_id::text, priority::text, status, started_at FROM processing.processing_jobs
             WHERE type = 'basic_discovery' ORDER BY started_at""")
        ).all()
        parse_rows = conn.execute(
            sa.text(
                "SELECT entity_id::text, priority::text, status, worker_id FROM processing.processing_jobs "
                "WHERE type = 'xml_parsing'"
            )
        ).all()
        opened_status = conn.execute(
            sa.text("SELECT processing_status FROM content.entities WHERE id = :e"), {"e": opened}
        ).scalar_one()
    parses = {row.entity_id: row.priority for row in parse_rows}
    assert [j.status for j in jobs] == ["completed"] * 4
    # The person's job was claimed first, one job at a time, though queued last.
    assert (jobs[0].entity_id, jobs[0].priority) == (opened, "interactive")
    assert {j.entity_id for j in jobs[1:]} == set(watched) and {j.priority for j in jobs[1:]} == {"background"}
    assert parses == {opened: "interactive", **{e: "background" for e in watched}}
    # The person's document was parsed by the run that fetched it: one run from open to parsed.
    # The background documents wait for the xml_parsing sensor's runs.
    by_entity = {row.entity_id: (row.status, row.worker_id) for row in parse_rows}
    assert by_entity[opened] == ("completed", run_id) and opened_status == "parsed"
    assert {by_entity[e][0] for e in watched} == {"queued"}
