"""Each event source fires the rules it should, and only those."""

from __future__ import annotations

import sqlalchemy as sa

from orchestration.automation import EventCursor, FiringOutcome, evaluate_events, watch
from test_automation_support import (
    OTHER_ORGANIZATION,
    add_revision,
    add_shareholder_list,
    company_record,
    fail_job,
    log_rows,
    make_entity,
    make_rule,
    notification_titles,
    save_search,
)


def start(engine) -> EventCursor:
    return evaluate_events(engine, None).cursor


def test_watched_company_change_fires_rules_for_the_changed_fields_only(engine):
    with engine.begin() as conn:
        company = make_entity(conn, "Muster GmbH")
        add_revision(conn, company, company_record())
        officers_rule = make_rule(conn, "entity_changed", source_config={"fields": ["officers"]}, watched=(company,))
        capital_rule = make_rule(conn, "entity_changed", source_config={"fields": ["capital", "seat"]})
        any_rule = make_rule(conn, "entity_changed")
    cursor = start(engine)
    with engine.begin() as conn:
        add_revision(conn, company, company_record(officers=[{"role": "Geschäftsführer", "name": "Max Neu"}]))

    summary = evaluate_events(engine, cursor)

    with engine.connect() as conn:
        assert len(log_rows(conn, officers_rule.id)) == 1
        assert len(log_rows(conn, capital_rule.id)) == 0
        [fired] = log_rows(conn, any_rule.id)
        assert fired.event["changed_fields"] == ["officers"]
        assert fired.event["changes"]["officers"]["new"] == [{"role": "Geschäftsführer", "name": "Max Neu"}]
        assert notification_titles(conn) == ["Muster GmbH: officers changed"] * 2
    assert summary.outcomes == {FiringOutcome.SUCCEEDED: 2}
    assert summary.cursor.revision > cursor.revision


def test_first_revision_and_parser_only_changes_are_no_change(engine):
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(conn, "entity_changed", watched=(company,))
    cursor = start(engine)
    with engine.begin() as conn:
        add_revision(conn, company, company_record())
        add_revision(conn, company, company_record(parser_version="2"))

    summary = evaluate_events(engine, cursor)

    # The evaluation read past both revisions, and found no change among them.
    assert (summary.events, summary.cursor.revision > cursor.revision) == (0, True)
    assert not summary.outcomes
    with engine.connect() as conn:
        assert log_rows(conn, rule.id) == []


def test_unwatched_company_fires_only_rules_watching_everything(engine):
    with engine.begin() as conn:
        company = make_entity(conn)
        add_revision(conn, company, company_record())
        watch(conn, OTHER_ORGANIZATION, [company])  # another organization's list does not count
        organization_rule = make_rule(conn, "entity_changed")
        everything_rule = make_rule(conn, "entity_changed", source_config={"watch": "all"})
    cursor = start(engine)
    with engine.begin() as conn:
        add_revision(conn, company, company_record(seat="Berlin"))

    evaluate_events(engine, cursor)

    with engine.connect() as conn:
        assert log_rows(conn, organization_rule.id) == []
        assert len(log_rows(conn, everything_rule.id)) == 1


def test_rule_watch_list_is_separate_from_the_organization_list(engine):
    with engine.begin() as conn:
        listed, other = make_entity(conn, "Listed AG"), make_entity(conn, "Other AG")
        for company in (listed, other):
            add_revision(conn, company, company_record())
        rule = make_rule(conn, "entity_changed", source_config={"watch": "rule"}, watched=(other,))
        watch(conn, rule.organization_id, [listed], rule_id=rule.id)
    cursor = start(engine)
    with engine.begin() as conn:
        for company in (listed, other):
            add_revision(conn, company, company_record(seat="Köln"))

    evaluate_events(engine, cursor)

    with engine.connect() as conn:
        assert [row.subject_id for row in log_rows(conn, rule.id)] == [listed]


def test_changed_shareholder_list_is_a_shareholders_change(engine):
    with engine.begin() as conn:
        company = make_entity(conn, "Anteil GmbH")
        add_shareholder_list(conn, company, "a" * 64)
        rule = make_rule(conn, "entity_changed", source_config={"fields": ["shareholders"]}, watched=(company,))
    cursor = start(engine)
    with engine.begin() as conn:
        add_shareholder_list(conn, company, "a" * 64)  # same content again: no change
        add_shareholder_list(conn, company, "b" * 64, valid=False)  # an extraction that failed its checks
        changed = add_shareholder_list(conn, company, "c" * 64)

    evaluate_events(engine, cursor)

    with engine.connect() as conn:
        [fired] = log_rows(conn, rule.id)
        assert fired.event["shareholder_list_id"] == changed
        assert notification_titles(conn) == ["Anteil GmbH: shareholders changed"]


def test_new_company_matching_a_saved_search(engine):
    with engine.begin() as conn:
        search = save_search(conn, "solar energie", mode="all", register_type="HRB")
        make_entity(conn, "Solar Energie Alt GmbH")  # found before the rule existed
        rule = make_rule(conn, "search_match", source_config={"search_id": str(search)})
    cursor = start(engine)
    with engine.begin() as conn:
        make_entity(conn, "Solar Energie Nord GmbH")
        make_entity(conn, "Solar Wind GmbH")  # lacks a word
        make_entity(conn, "Energie Solar eG", register_type="GnR")  # other register type

    evaluate_events(engine, cursor)

    with engine.connect() as conn:
        assert [row.event["name"] for row in log_rows(conn, rule.id)] == ["Solar Energie Nord GmbH"]


def test_company_created_before_the_rule_does_not_match(engine):
    with engine.begin() as conn:
        search = save_search(conn, "Kontor", mode="any")
    cursor = start(engine)
    with engine.begin() as conn:
        make_entity(conn, "Kontor Hamburg GmbH")
    with engine.begin() as conn:
        rule = make_rule(conn, "search_match", source_config={"search_id": str(search)})

    summary = evaluate_events(engine, cursor)

    # The new company was read, and matched no rule of its time.
    assert (summary.events, summary.cursor.entity > cursor.entity) == (1, True)
    assert not summary.outcomes
    with engine.connect() as conn:
        assert log_rows(conn, rule.id) == []


def test_a_change_that_commits_late_is_read_late_not_skipped(engine):
    with engine.begin() as conn:
        early, late = make_entity(conn, "Frueh GmbH"), make_entity(conn, "Spaet GmbH")
        add_revision(conn, early, company_record())
        add_revision(conn, late, company_record())
        rule = make_rule(conn, "entity_changed", watched=(early, late))
    cursor = start(engine)
    with engine.connect() as slow:
        # The slow writer takes the lower revision id, then a quick one commits a higher id.
        slow_transaction = slow.begin()
        add_revision(slow, early, company_record(seat="Bremen"))
        with engine.begin() as conn:
            add_revision(conn, late, company_record(seat="Kiel"))

        while_open = evaluate_events(engine, cursor)
        slow_transaction.commit()
    after_commit = evaluate_events(engine, while_open.cursor)

    # Nothing at or above the running transaction is read while it runs; both changes come after.
    assert while_open.events == 0 and while_open.cursor == cursor
    assert after_commit.outcomes == {FiringOutcome.SUCCEEDED: 2}
    with engine.connect() as conn:
        assert sorted(row.event["changes"]["seat"]["new"] for row in log_rows(conn, rule.id)) == ["Bremen", "Kiel"]
    assert evaluate_events(engine, after_commit.cursor).events == 0


def test_a_company_inserted_by_a_long_transaction_still_matches(engine):
    with engine.begin() as conn:
        search = save_search(conn, "Werft", mode="any")
        rule = make_rule(conn, "search_match", source_config={"search_id": str(search)})
    cursor = start(engine)
    with engine.connect() as slow:
        slow_transaction = slow.begin()
        make_entity(slow, "Werft Kiel GmbH")
        with engine.begin() as conn:
            make_entity(conn, "Werft Rostock GmbH")
        while_open = evaluate_events(engine, cursor)
        slow_transaction.commit()
    evaluate_events(engine, while_open.cursor)

    with engine.connect() as conn:
        assert sorted(row.event["name"] for row in log_rows(conn, rule.id)) == ["Werft Kiel GmbH", "Werft Rostock GmbH"]


def test_permanent_job_failure_fires_and_a_retried_one_does_not(engine):
    with engine.begin() as conn:
        broken, flaky = make_entity(conn, "Kaputt GmbH"), make_entity(conn, "Wackel GmbH")
        rule = make_rule(conn, "job_failed", source_config={"job_types": ["xml_parsing"]}, watched=(broken, flaky))
    cursor = start(engine)
    with engine.begin() as conn:
        job = fail_job(conn, broken, "parser_error")
        fail_job(conn, flaky, "timeout")  # transient: the database queues it again
        retried = conn.execute(
            sa.text("SELECT status FROM processing.processing_jobs WHERE entity_id = :e"), {"e": flaky}
        ).scalar_one()
    assert retried == "queued"

    evaluate_events(engine, cursor)

    with engine.connect() as conn:
        [fired] = log_rows(conn, rule.id)
        assert fired.subject_id == broken
        assert fired.event["job_id"] == str(job)
        assert fired.event["failure_class"] == "parser_error"
        assert fired.event["error_message"] == "unreadable SI document"


def test_a_job_that_fails_again_until_it_fails_for_good_fires_once(engine):
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(conn, "job_failed", watched=(company,))
    cursor = start(engine)
    with engine.begin() as conn:
        job = fail_job(conn, company, "timeout")  # re-queued by the database
        conn.execute(
            sa.text("""UPDATE processing.processing_jobs
                                   SET status = 'failed', failure_class = 'parser_error'
                                 WHERE id = :id"""),
            {"id": job},
        )  # its retry fails for good

    evaluate_events(engine, cursor)

    with engine.connect() as conn:
        [fired] = log_rows(conn, rule.id)
    assert (fired.event["job_id"], fired.event["failure_class"], fired.event["attempts"]) == (
        str(job),
        "parser_error",
        2,
    )


def test_job_failure_filters_by_failure_class(engine):
    with engine.begin() as conn:
        company = make_entity(conn)
        rule = make_rule(conn, "job_failed", source_config={"failure_classes": ["invalid_file"]}, watched=(company,))
    cursor = start(engine)
    with engine.begin() as conn:
        fail_job(conn, company, "unsupported_version")

    summary = evaluate_events(engine, cursor)

    # The failure was read, and is not of a class the rule asks for.
    assert (summary.events, summary.cursor.failure > cursor.failure) == (1, True)
    assert not summary.outcomes
    with engine.connect() as conn:
        assert log_rows(conn, rule.id) == []


def test_cursor_survives_json_and_events_fire_once(engine):
    with engine.begin() as conn:
        company = make_entity(conn)
        add_revision(conn, company, company_record())
        rule = make_rule(conn, "entity_changed", watched=(company,))
    cursor = start(engine)
    with engine.begin() as conn:
        add_revision(conn, company, company_record(seat="Bremen"))

    first = evaluate_events(engine, EventCursor.from_json(cursor.to_json()))
    again = evaluate_events(engine, cursor)  # a caller that lost its cursor reads the same event

    assert first.outcomes == {FiringOutcome.SUCCEEDED: 1}
    assert again.outcomes == {FiringOutcome.ALREADY_FIRED: 1}
    assert evaluate_events(engine, first.cursor).events == 0
    with engine.connect() as conn:
        assert len(log_rows(conn, rule.id)) == 1
