"""Monitoring rules: what they may say, and how they are created, listed, disabled and watched.

A rule says "when this happens, do that" for an organization:

source types (``source_config``)
    ``entity_changed``  a watched company has a new revision; ``fields`` narrows it to changes of
                        chosen fields (officers, capital, name, seat, shareholders), none means any.
    ``search_match``    a new company matches the saved search ``search_id`` (public.searches).
    ``job_failed``      a job failed permanently; ``job_types`` and ``failure_classes`` narrow it.
    ``announcement_for_watched_company``
                        the register announced something about a watched company (polled from
                        the register's announcements, one results page per court and day);
                        ``categories`` ("1" … "5") narrows it.
    ``schedule``        the cron expression ``cron`` (in ``timezone``) came due: every watched
                        company is handed to the action, typically a re-discovery.

``watch`` says which companies a rule watches: ``organization`` (the organization's watch list,
the default), ``rule`` (the rule's own watch list) or ``all`` (every company; not for schedules).

action types (``action_config``)
    ``enqueue_job``     ``job``: ``rediscovery`` or ``shareholder_research`` of the company.
    ``webhook``         an HTTP POST of JSON to ``url``, signed with HMAC-SHA256 under ``secret``,
                        retried ``max_retries`` times with backoff and dropped after
                        ``expires_after_seconds``.
    ``notification``    a row in automation.notifications, for ``user_id`` or the whole organization.

Every action may wait ``delay_seconds`` before it runs.

``frequency`` limits firings per company (``always``, ``once_per_hour``, ``once_per_day``,
``once``); ``cooldown_seconds`` silences the whole rule after any firing.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import sqlalchemy as sa
from croniter import croniter

from orchestration.db import queries
from orchestration.runtime.failures import FailureClass

QUERIES = queries.load("automation")

SOURCE_TYPES = ("entity_changed", "search_match", "job_failed", "announcement_for_watched_company", "schedule")
# The register's announcement categories: Löschungsankündigung, UmwG, new documents, other, special register.
ANNOUNCEMENT_CATEGORIES = ("1", "2", "3", "4", "5")
ACTION_TYPES = ("enqueue_job", "webhook", "notification")
FREQUENCIES = ("always", "once_per_hour", "once_per_day", "once")
# Frequencies limited to a time window; "once" has no window (never again), "always" no limit.
FREQUENCY_WINDOW_SECONDS = {"once_per_hour": 3600, "once_per_day": 86400}
CHANGE_FIELDS = ("officers", "capital", "name", "seat", "shareholders")
WATCH_SCOPES = ("organization", "rule", "all")
JOBS = ("rediscovery", "shareholder_research")

WEBHOOK_DEFAULT_TIMEOUT_S = 5.0
# Sensor ticks deliver webhooks in line; a slow receiver must not hold a tick for long.
WEBHOOK_MAX_TIMEOUT_S = 10.0
WEBHOOK_DEFAULT_MAX_RETRIES = 3
WEBHOOK_DEFAULT_EXPIRY_S = 86400


class RuleConfigError(ValueError):
    """A rule's configuration says something this module cannot do."""


@dataclass(frozen=True)
class Rule:
    id: int
    name: str
    source_type: str
    source_config: Mapping[str, Any]
    action_type: str
    action_config: Mapping[str, Any]
    enabled: bool
    frequency: str
    cooldown_seconds: int | None
    organization_id: uuid.UUID
    created_by: uuid.UUID | None
    created_date: datetime
    deleted_date: datetime | None

    @classmethod
    def from_row(cls, row: sa.Row) -> Rule:
        m = row._mapping
        return cls(**{name: m[name] for name in cls.__dataclass_fields__})

    @property
    def live(self) -> bool:
        return self.enabled and self.deleted_date is None

    @property
    def watch_scope(self) -> str:
        return self.source_config.get("watch", "organization")

    @property
    def change_fields(self) -> frozenset[str]:
        """Fields whose change fires an entity_changed rule; empty means any change."""
        return frozenset(self.source_config.get("fields", ()))

    @property
    def delay_seconds(self) -> int:
        return int(self.action_config.get("delay_seconds", 0))

    @property
    def runs_later(self) -> bool:
        """Whether the action goes through automation.scheduled_action instead of running at once.

        Webhooks always do: HTTP must not run inside the firing's transaction, and they retry.
        """
        return self.action_type == "webhook" or self.delay_seconds > 0


def _check_keys(what: str, config: Mapping[str, Any], allowed: set[str]) -> None:
    unknown = set(config) - allowed
    if unknown:
        raise RuleConfigError(f"{what} has unknown keys {sorted(unknown)}; allowed: {sorted(allowed)}")


def _check_uuid(what: str, value: Any) -> str:
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        raise RuleConfigError(f"{what} must be a UUID, not {value!r}") from None


def _check_seconds(what: str, value: Any, *, minimum: float, maximum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum:
        raise RuleConfigError(f"{what} must be a number >= {minimum}, not {value!r}")
    if maximum is not None and value > maximum:
        raise RuleConfigError(f"{what} must be at most {maximum}, not {value!r}")
    return value


def _check_list(what: str, value: Any, allowed: Iterable[str] | None = None) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RuleConfigError(f"{what} must be a list of strings, not {value!r}")
    if allowed is not None:
        allowed = tuple(allowed)
        unknown = [v for v in value if v not in allowed]
        if unknown:
            raise RuleConfigError(f"{what} has unknown values {unknown}; allowed: {list(allowed)}")
    return value


def validate_source(source_type: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """The source configuration, checked; raises RuleConfigError."""
    if source_type not in SOURCE_TYPES:
        raise RuleConfigError(f"unknown source type {source_type!r}; one of {list(SOURCE_TYPES)}")
    config = dict(config)
    scopes: tuple[str, ...] = WATCH_SCOPES
    if source_type == "entity_changed":
        _check_keys("entity_changed source", config, {"fields", "watch"})
        if "fields" in config:
            _check_list("fields", config["fields"], CHANGE_FIELDS)
    elif source_type == "search_match":
        _check_keys("search_match source", config, {"search_id"})
        if "search_id" not in config:
            raise RuleConfigError("a search_match source needs search_id, the saved search to match")
        config["search_id"] = _check_uuid("search_id", config["search_id"])
    elif source_type == "announcement_for_watched_company":
        _check_keys("announcement_for_watched_company source", config, {"categories", "watch"})
        if "categories" in config:
            _check_list("categories", config["categories"], ANNOUNCEMENT_CATEGORIES)
    elif source_type == "job_failed":
        _check_keys("job_failed source", config, {"job_types", "failure_classes", "watch"})
        if "job_types" in config:
            _check_list("job_types", config["job_types"])
        if "failure_classes" in config:
            _check_list("failure_classes", config["failure_classes"], [c.value for c in FailureClass])
    else:  # schedule
        _check_keys("schedule source", config, {"cron", "timezone", "watch"})
        cron = config.get("cron")
        if not isinstance(cron, str) or not croniter.is_valid(cron):
            raise RuleConfigError(f"a schedule source needs a valid cron expression, not {cron!r}")
        try:
            ZoneInfo(config.setdefault("timezone", "UTC"))
        except (ZoneInfoNotFoundError, ValueError, TypeError):
            raise RuleConfigError(f"unknown timezone {config['timezone']!r}") from None
        # Re-checking every company of the register is a backfill, not monitoring.
        scopes = ("organization", "rule")
    if "watch" in config and config["watch"] not in scopes:
        raise RuleConfigError(f"watch must be one of {list(scopes)}, not {config['watch']!r}")
    return config


def validate_action(action_type: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """The action configuration, checked and with the defaults it runs with; raises RuleConfigError."""
    if action_type not in ACTION_TYPES:
        raise RuleConfigError(f"unknown action type {action_type!r}; one of {list(ACTION_TYPES)}")
    config = dict(config)
    timing = {"delay_seconds", "expires_after_seconds"}
    if action_type == "enqueue_job":
        _check_keys("enqueue_job action", config, {"job"} | timing)
        if config.get("job") not in JOBS:
            raise RuleConfigError(f"an enqueue_job action needs job, one of {list(JOBS)}")
    elif action_type == "webhook":
        _check_keys("webhook action", config, {"url", "secret", "timeout_seconds", "max_retries"} | timing)
        url = config.get("url")
        if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
            raise RuleConfigError(f"a webhook action needs an http(s) url, not {url!r}")
        if not isinstance(config.get("secret"), str) or not config["secret"]:
            raise RuleConfigError("a webhook action needs secret, the key of its HMAC-SHA256 signature")
        config.setdefault("timeout_seconds", WEBHOOK_DEFAULT_TIMEOUT_S)
        config.setdefault("max_retries", WEBHOOK_DEFAULT_MAX_RETRIES)
        config.setdefault("expires_after_seconds", WEBHOOK_DEFAULT_EXPIRY_S)
        _check_seconds("timeout_seconds", config["timeout_seconds"], minimum=0.1, maximum=WEBHOOK_MAX_TIMEOUT_S)
        if not isinstance(config["max_retries"], int) or not 0 <= config["max_retries"] <= 10:
            raise RuleConfigError(f"max_retries must be an integer from 0 to 10, not {config['max_retries']!r}")
    else:  # notification
        _check_keys("notification action", config, {"user_id"} | timing)
        if "user_id" in config:
            config["user_id"] = _check_uuid("user_id", config["user_id"])
    if "delay_seconds" in config:
        _check_seconds("delay_seconds", config["delay_seconds"], minimum=0)
    if "expires_after_seconds" in config:
        _check_seconds("expires_after_seconds", config["expires_after_seconds"], minimum=1)
    return config


def create_rule(
    conn: sa.Connection,
    *,
    name: str,
    organization_id: uuid.UUID | str,
    source_type: str,
    source_config: Mapping[str, Any],
    action_type: str,
    action_config: Mapping[str, Any],
    frequency: str = "once_per_hour",
    cooldown_seconds: int | None = None,
    created_by: uuid.UUID | str | None = None,
    enabled: bool = True,
) -> Rule:
    """Check and store a rule; raises RuleConfigError for anything it could not carry out."""
    if not name or not name.strip():
        raise RuleConfigError("a rule needs a name")
    if frequency not in FREQUENCIES:
        raise RuleConfigError(f"unknown frequency {frequency!r}; one of {list(FREQUENCIES)}")
    if cooldown_seconds is not None and cooldown_seconds <= 0:
        raise RuleConfigError(f"cooldown_seconds must be positive, not {cooldown_seconds!r}")
    source_config = validate_source(source_type, source_config)
    action_config = validate_action(action_type, action_config)
    if source_type == "search_match":
        found = conn.execute(QUERIES["search_exists"], {"id": source_config["search_id"]})
        if found.first() is None:
            raise RuleConfigError(f"saved search {source_config['search_id']} does not exist")
    if source_config.get("job_types"):
        known = set(conn.execute(QUERIES["job_type_names"]).scalars())
        _check_list("job_types", source_config["job_types"], sorted(known))
    row = conn.execute(
        QUERIES["create_rule"],
        {
            "name": name.strip(),
            "organization_id": _check_uuid("organization_id", organization_id),
            "source_type": source_type,
            "source_config": json.dumps(source_config),
            "action_type": action_type,
            "action_config": json.dumps(action_config),
            "frequency": frequency,
            "cooldown_seconds": cooldown_seconds,
            "created_by": created_by and _check_uuid("created_by", created_by),
            "enabled": enabled,
        },
    ).one()
    return Rule.from_row(row)


def get_rule(conn: sa.Connection, rule_id: int) -> Rule | None:
    row = conn.execute(QUERIES["rule"], {"id": rule_id}).first()
    return Rule.from_row(row) if row else None


def list_rules(conn: sa.Connection, organization_id: uuid.UUID | str | None = None) -> list[Rule]:
    """Rules that are not deleted, enabled or not, oldest first."""
    if organization_id is not None:
        organization_id = _check_uuid("organization_id", organization_id)
    return [Rule.from_row(row) for row in conn.execute(QUERIES["rules"], {"organization_id": organization_id})]


def live_rules(conn: sa.Connection, source_types: Iterable[str]) -> list[Rule]:
    """Enabled, not deleted rules of these source types: what evaluators act on."""
    rows = conn.execute(QUERIES["live_rules"], {"source_types": list(source_types)})
    return [Rule.from_row(row) for row in rows]


def disable_rule(conn: sa.Connection, rule_id: int, updated_by: uuid.UUID | str | None = None) -> bool:
    """Stop a rule from firing; its pending scheduled actions are cancelled when they come due.

    Returns False when no such rule exists (or it is deleted)."""
    updated_by = updated_by and _check_uuid("updated_by", updated_by)
    result = conn.execute(QUERIES["disable_rule"], {"id": rule_id, "updated_by": updated_by})
    return result.rowcount == 1


def watch(
    conn: sa.Connection,
    organization_id: uuid.UUID | str,
    entity_ids: Iterable[uuid.UUID | str],
    *,
    rule_id: int | None = None,
    added_by: uuid.UUID | str | None = None,
) -> int:
    """Add companies to the organization's watch list, or to one rule's; returns how many were new."""
    organization_id = _check_uuid("organization_id", organization_id)
    if rule_id is not None:
        rule = get_rule(conn, rule_id)
        if rule is None or str(rule.organization_id) != organization_id:
            raise RuleConfigError(f"organization {organization_id} has no rule {rule_id}")
    added_by = added_by and _check_uuid("added_by", added_by)
    wanted = list(dict.fromkeys(_check_uuid("entity id", entity_id) for entity_id in entity_ids))
    if not wanted:
        return 0
    known = set(conn.execute(QUERIES["known_entities"], {"ids": wanted}).scalars())
    if set(wanted) - known:
        raise RuleConfigError(f"no such companies: {sorted(set(wanted) - known)}")
    result = conn.execute(
        QUERIES["watch"],
        {"organization_id": organization_id, "rule_id": rule_id, "entity_ids": wanted, "added_by": added_by},
    )
    return result.rowcount


def rule_log(conn: sa.Connection, rule_id: int, limit: int = 20) -> list[dict[str, Any]]:
    """The rule's most recent firings, newest first."""
    rows = conn.execute(QUERIES["rule_log"], {"rule_id": rule_id, "limit": limit})
    return [dict(row._mapping) for row in rows]
