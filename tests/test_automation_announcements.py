"""Monitoring rules on register announcements: a poll reads one results page per watched court and
ended day from the sample register, and the rule refreshes exactly the watched companies that
changed, through the real event sensor and the database."""

from __future__ import annotations

from datetime import date, timedelta

import dagster as dg
import httpx
import pytest
import sqlalchemy as sa

from orchestration.automation.announcements import poll_announcements
from orchestration.automation.monitoring_rules import RuleConfigError
from orchestration.definitions import build_resources
from orchestration.register import PortalClient
from resources.database import DatabaseResource
from resources.webhooks import WebhookResource
from sample_register import start_sample_register_in_thread
from sensors.announcements import register_announcements
from sensors.automation import automation_event_sensor
from test_automation_support import make_rule


@pytest.fixture(scope="module")
def sample_register(samples_dir):
    with start_sample_register_in_thread(samples_dir=samples_dir, generated=400) as server:
        yield server


def add_entity(conn: sa.Connection, company) -> object:
    return conn.execute(
        sa.text("""INSERT INTO content.entities
                   (court_code, court_name, register_type, register_number, register_suffix, name, processing_status)
                   VALUES (:court, :court_name, :type, :number, :suffix, :name, 'parsed') RETURNING id"""),
        {
            "court": company.court.code,
            "court_name": company.court.name,
            "type": company.register_type,
            "number": company.register_number,
            "suffix": company.register_suffix or "",
            "name": company.name,
        },
    ).scalar_one()


def file_document(sample_register, company) -> str:
    key = f"{company.court.code}/{company.register_type}/{company.register_number}"
    url = f"{sample_register.url}/_sample/companies/{key}/documents"
    return httpx.post(url).json()["announcement_id"]


def tick(db_url, cursor: str | None):
    database = DatabaseResource(url=db_url.render_as_string(hide_password=False), pgdata_dir="", worker_role="")
    resources = {"database": database, "webhooks": WebhookResource(allowed_networks="")}
    return automation_event_sensor(dg.build_sensor_context(cursor=cursor, resources=resources))


def rediscovered(conn: sa.Connection) -> set:
    rows = conn.execute(sa.text("SELECT entity_id FROM processing.processing_jobs WHERE type = 'basic_discovery'"))
    return {row.entity_id for row in rows}


def test_a_rule_on_announcements_refreshes_exactly_the_watched_companies_that_changed(
    engine, db_url, sample_register, tmp_path
):
    companies = [c for c in sample_register.corpus.companies if not c.deleted]
    court = companies[0].court
    same_court = [c for c in companies if c.court == court][:3]
    elsewhere = next(c for c in companies if c.court != court)
    changed, unchanged, unwatched = same_court
    with engine.begin() as conn:
        ids = {c.name: add_entity(conn, c) for c in (*same_court, elsewhere)}
        make_rule(
            conn,
            "announcement_for_watched_company",
            "enqueue_job",
            action_config={"job": "rediscovery"},
            watched=(ids[changed.name], ids[unchanged.name], ids[elsewhere.name]),
        )
    start = tick(db_url, None)  # monitoring starts from the present

    file_document(sample_register, changed)
    file_document(sample_register, unwatched)
    # The poll the morning after: the register's day is complete.
    tomorrow = sample_register.register.today + timedelta(days=1)
    with PortalClient(sample_register.url, diagnostics_dir=tmp_path) as client:
        first = poll_announcements(engine, client, today=tomorrow)
        again = poll_announcements(engine, client, today=tomorrow)
    after = tick(db_url, start.cursor)

    # One page per watched court and day, and a day is read once.
    assert (first.pages, again.pages) == (2, 0) and not first.errors
    with engine.connect() as conn:
        assert rediscovered(conn) == {ids[changed.name]}
        stored = conn.execute(
            sa.text("SELECT name, entity_id, category_code FROM content.register_announcements")
        ).all()
    # The announcement of the unwatched company is stored (it is a known company), but fires nothing.
    assert {(r.name, r.category_code) for r in stored} >= {(changed.name, "3"), (unwatched.name, "3")}
    assert "1 succeeded" in after.skip_reason.skip_message


def test_categories_narrow_the_rule_and_are_checked(engine, db_url, sample_register, tmp_path):
    # A company that has filed nothing while the server runs.
    company = next(
        c for c in sample_register.corpus.companies if not c.deleted and c.key not in sample_register.register.added
    )
    with engine.begin() as conn:
        entity = add_entity(conn, company)
        make_rule(
            conn,
            "announcement_for_watched_company",
            "enqueue_job",
            source_config={"categories": ["1"]},
            action_config={"job": "rediscovery"},
            watched=(entity,),
        )
        with pytest.raises(RuleConfigError):
            make_rule(conn, "announcement_for_watched_company", source_config={"categories": ["9"]})
    start = tick(db_url, None)
    file_document(sample_register, company)  # category 3: not what the rule asks for
    with PortalClient(sample_register.url, diagnostics_dir=tmp_path) as client:
        poll_announcements(engine, client, today=sample_register.register.today + timedelta(days=1))
    tick(db_url, start.cursor)
    with engine.connect() as conn:
        read = (
            conn.execute(
                sa.text("SELECT category_code FROM content.register_announcements WHERE entity_id = :e"), {"e": entity}
            )
            .scalars()
            .all()
        )
        assert read == ["3"] and entity not in rediscovered(conn)


def test_the_daily_job_polls_the_watched_courts(engine, settings, sample_register):
    company = next(c for c in sample_register.corpus.companies if not c.deleted)
    with engine.begin() as conn:
        make_rule(conn, "announcement_for_watched_company", "notification", watched=(add_entity(conn, company),))
    resources = build_resources(
        settings.model_copy(update={"register_kind": "sample", "register_url": sample_register.url})
    )

    bucket_name = f"register {sample_register.url.rstrip('/')}"
    with engine.begin() as conn:
        # The shared bucket exists already, as it does once anything has been retrieved.
        conn.execute(
            sa.text("INSERT INTO processing.rate_limits (name, capacity, refill_per_s, tokens) VALUES (:n, 5, 1, 5)"),
            {"n": bucket_name},
        )
        started = conn.execute(sa.text("SELECT clock_timestamp()")).scalar_one()

    result = dg.materialize([register_announcements], resources=resources)

    assert result.success
    with engine.connect() as conn:
        polls = conn.execute(sa.text("SELECT court_code, day FROM content.announcement_polls")).all()
        bucket = conn.execute(
            sa.text("SELECT background_taken_at FROM processing.rate_limits WHERE name = :name"),
            {"name": bucket_name},
        ).one()
    # Monitoring is background work at the shared rate limit: its page took a background token.
    assert bucket.background_taken_at > started
    # The first poll of a court reads the day before.
    assert [(p.court_code, p.day) for p in polls] == [(company.court.code, date.today() - timedelta(days=1))]
