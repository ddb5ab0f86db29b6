"""Asking for an entity's shareholders: the SQL function the application calls, and the CLI."""

import uuid

import sqlalchemy as sa
from click.testing import CliRunner

from orchestration.cli import main


def add_entity(engine) -> str:
    with engine.begin() as conn:
        return str(
            conn.execute(
                sa.text("""
            INSERT INTO content.entities (court_code, register_type, register_number, name, processing_status)
            VALUES ('D2601', 'HRB', '4711', 'Kölnisch Wasser GmbH', 'parsed') RETURNING id""")
            ).scalar_one()
        )


def test_cli_request_sets_the_status_and_queues_one_download(engine):
    entity = add_entity(engine)
    user = str(uuid.uuid4())
    runner = CliRunner()
    first = runner.invoke(main, ["shareholders", "request", entity, "--user", user])
    again = runner.invoke(main, ["shareholders", "request", entity, "--user", user])
    assert first.exit_code == 0, first.output
    assert again.exit_code == 0, again.output
    with engine.connect() as conn:
        status = conn.execute(sa.text("SELECT shareholder_research_status FROM content.entities")).scalar_one()
        jobs = conn.execute(
            sa.text("SELECT id::text, type, trigger, requested_by::text, status FROM processing.processing_jobs")
        ).all()
    assert status == "requested"
    assert len(jobs) == 1  # asking twice while the first is queued is the same work
    (job,) = jobs
    assert (job.type, job.trigger, job.requested_by, job.status) == ("shareholder_download", "manual", user, "queued")
    assert job.id in first.output and job.id in again.output


def test_cli_request_for_an_unknown_entity_says_so(engine):
    result = CliRunner().invoke(main, ["shareholders", "request", str(uuid.uuid4())])
    assert result.exit_code != 0
    assert "does not exist" in result.output


def test_application_role_may_request_through_the_function(engine):
    entity = add_entity(engine)
    with engine.begin() as conn:
        conn.execute(sa.text("SET LOCAL ROLE hreg_app"))
        job_id = conn.execute(sa.text("SELECT processing.request_shareholder_research(:e)"), {"e": entity}).scalar_one()
    with engine.connect() as conn:
        assert (
            conn.execute(
                sa.text("SELECT type FROM processing.processing_jobs WHERE id = :j"), {"j": job_id}
            ).scalar_one()
            == "shareholder_download"
        )
