"""`hreg rules`: create, list, disable, watch and read the log of monitoring rules."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from orchestration.automation import fire
from orchestration.automation.monitoring_rules import RuleConfigError, get_rule, validate_action, validate_source
from orchestration.cli import main
from orchestration.db.engine import get_engine
from test_automation_support import ORGANIZATION, USER, change_event, make_entity


@pytest.fixture
def hreg(db_url, settings):
    """Runs `hreg` in this process against the test's database (HREG_DATABASE_URL)."""
    runner = CliRunner()
    yield lambda *args: runner.invoke(main, list(args))
    get_engine(settings).dispose()


def test_create_list_disable_and_log(hreg, engine):
    with engine.begin() as conn:
        company = make_entity(conn, "Kommando GmbH")

    created = hreg(
        "rules",
        "create",
        "Officer changes",
        "--organization",
        str(ORGANIZATION),
        "--source",
        "entity_changed",
        "--source-config",
        '{"fields": ["officers"]}',
        "--action",
        "notification",
        "--frequency",
        "once_per_day",
        "--cooldown",
        "60",
        "--created-by",
        str(USER),
    )
    assert created.exit_code == 0, created.output
    rule_id = int(created.output.split()[1])
    watched = hreg("rules", "watch", str(ORGANIZATION), str(company))
    assert watched.output.strip() == "1 companies added, 0 already watched"

    listed = hreg("rules", "list", "--organization", str(ORGANIZATION))
    assert listed.exit_code == 0
    assert f"{rule_id}  enabled   Officer changes" in listed.output
    assert '[entity_changed {"fields": ["officers"]} -> notification]  once_per_day cooldown 60s' in listed.output
    assert hreg("rules", "list", "--organization", str(USER)).output.strip() == "no rules"

    assert hreg("rules", "log", str(rule_id)).output.strip() == "the rule has not fired"
    with engine.connect() as conn:
        rule = get_rule(conn, rule_id)
        conn.commit()
        fire(conn, rule, change_event(company))
    assert "success    Muster GmbH: capital changed" in hreg("rules", "log", str(rule_id)).output

    disabled = hreg("rules", "disable", str(rule_id), "--by", str(USER))
    assert disabled.output.strip() == f"rule {rule_id} disabled"
    assert f"{rule_id}  disabled  Officer changes" in hreg("rules", "list").output
    with engine.connect() as conn:
        rule = get_rule(conn, rule_id)
    assert (rule.enabled, rule.frequency, rule.cooldown_seconds, rule.created_by) == (False, "once_per_day", 60, USER)


@pytest.mark.parametrize(
    ("source", "source_config", "action", "action_config", "message"),
    [
        ("entity_changed", {"fields": ["purpose"]}, "notification", {}, "unknown values ['purpose']"),
        ("entity_changed", {"feilds": ["name"]}, "notification", {}, "unknown keys ['feilds']"),
        ("schedule", {"cron": "every monday"}, "enqueue_job", {"job": "rediscovery"}, "valid cron expression"),
        ("schedule", {"cron": "0 6 * * 1", "timezone": "Mars/Olympus"}, "notification", {}, "unknown timezone"),
        ("schedule", {"cron": "0 6 * * 1", "watch": "all"}, "enqueue_job", {"job": "rediscovery"}, "watch must be"),
        ("search_match", {}, "notification", {}, "needs search_id"),
        ("job_failed", {"failure_classes": ["flaky"]}, "notification", {}, "unknown values ['flaky']"),
        ("entity_changed", {}, "webhook", {"url": "ftp://example.org"}, "http(s) url"),
        ("entity_changed", {}, "webhook", {"url": "https://example.org/hook"}, "needs secret"),
        (
            "entity_changed",
            {},
            "webhook",
            {"url": "https://example.org/hook", "secret": "k", "timeout_seconds": 60},
            "at most 10",
        ),
        ("entity_changed", {}, "enqueue_job", {"job": "delete_everything"}, "needs job"),
        ("entity_changed", {}, "notification", {"delay_seconds": -5}, "delay_seconds must be"),
    ],
)
def test_rule_configurations_that_cannot_be_carried_out_are_refused(
    source, source_config, action, action_config, message
):
    with pytest.raises(RuleConfigError, match=re.escape(message)):
        validate_source(source, source_config)
        validate_action(action, action_config)


def test_create_refuses_what_the_database_does_not_know(hreg):
    missing_search = hreg(
        "rules",
        "create",
        "Neue Treffer",
        "--organization",
        str(ORGANIZATION),
        "--source",
        "search_match",
        "--source-config",
        json.dumps({"search_id": str(USER)}),
        "--action",
        "notification",
    )
    unknown_job_type = hreg(
        "rules",
        "create",
        "Fehler",
        "--organization",
        str(ORGANIZATION),
        "--source",
        "job_failed",
        "--source-config",
        '{"job_types": ["xml_parse"]}',
        "--action",
        "notification",
    )
    not_json = hreg(
        "rules",
        "create",
        "Kaputt",
        "--organization",
        str(ORGANIZATION),
        "--source",
        "entity_changed",
        "--source-config",
        "{fields: name}",
        "--action",
        "notification",
    )

    assert missing_search.exit_code != 0 and f"saved search {USER} does not exist" in missing_search.output
    assert unknown_job_type.exit_code != 0 and "unknown values ['xml_parse']" in unknown_job_type.output
    assert not_json.exit_code != 0 and "not JSON" in not_json.output
    assert hreg("rules", "list").output.strip() == "no rules"


def test_disable_and_watch_name_what_does_not_exist(hreg):
    assert "no rule 999" in hreg("rules", "disable", "999").output
    assert "no such companies" in hreg("rules", "watch", str(ORGANIZATION), str(USER)).output
