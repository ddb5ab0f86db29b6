"""`hreg rules`: monitoring rules on companies ("when this happens, do that")."""

from __future__ import annotations

import json
import uuid
from typing import Any

import click

from orchestration import automation
from orchestration.automation.monitoring_rules import ACTION_TYPES, FREQUENCIES, SOURCE_TYPES
from orchestration.cli import cli_engine


def _json_object(_ctx: click.Context, param: click.Parameter, value: str) -> dict[str, Any]:
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as error:
        raise click.BadParameter(f"not JSON: {error}", param=param) from None
    if not isinstance(parsed, dict):
        raise click.BadParameter("must be a JSON object", param=param)
    return parsed


@click.group()
def rules() -> None:
    """Monitoring rules: what an organization watches, and what happens when it changes.

    Sources and actions, and the keys of their JSON configurations, are described in
    orchestration/automation/monitoring_rules.py. The Dagster sensors automation_event_sensor and
    automation_schedule_sensor evaluate the rules.
    """


@rules.command("create")
@click.argument("name")
@click.option("--organization", type=click.UUID, required=True, help="The organization that owns the rule.")
@click.option("--source", "source_type", type=click.Choice(SOURCE_TYPES), required=True, help="What fires the rule.")
@click.option(
    "--source-config",
    default="{}",
    callback=_json_object,
    help='e.g. {"fields": ["officers"]}, {"search_id": "…"}, {"cron": "0 6 * * 1"}.',
)
@click.option("--action", "action_type", type=click.Choice(ACTION_TYPES), required=True, help="What the rule does.")
@click.option(
    "--action-config",
    default="{}",
    callback=_json_object,
    help='e.g. {"job": "rediscovery"}, {"url": "https://…", "secret": "…"}, {"delay_seconds": 600}.',
)
@click.option(
    "--frequency",
    type=click.Choice(FREQUENCIES),
    default="once_per_hour",
    show_default=True,
    help="At most one firing per company in this window.",
)
@click.option(
    "--cooldown", "cooldown_seconds", type=click.IntRange(min=1), help="Seconds the whole rule rests after any firing."
)
@click.option(
    "--created-by", type=click.UUID, help="The user who makes the rule; jobs it queues are requested by them."
)
@click.option("--disabled", is_flag=True, help="Store the rule without enabling it.")
def create_command(
    name: str,
    organization: uuid.UUID,
    source_type: str,
    source_config: dict,
    action_type: str,
    action_config: dict,
    frequency: str,
    cooldown_seconds: int | None,
    created_by: uuid.UUID | None,
    disabled: bool,
) -> None:
    """Create a rule called NAME; prints its id."""
    try:
        with cli_engine().begin() as conn:
            rule = automation.create_rule(
                conn,
                name=name,
                organization_id=organization,
                source_type=source_type,
                source_config=source_config,
                action_type=action_type,
                action_config=action_config,
                frequency=frequency,
                cooldown_seconds=cooldown_seconds,
                created_by=created_by,
                enabled=not disabled,
            )
    except automation.RuleConfigError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"rule {rule.id}")


@rules.command("list")
@click.option("--organization", type=click.UUID, help="Only this organization's rules.")
def list_command(organization: uuid.UUID | None) -> None:
    """List the rules that are not deleted."""
    with cli_engine().connect() as conn:
        found = automation.list_rules(conn, organization)
    if not found:
        click.echo("no rules")
        return
    for rule in found:
        cooldown = f" cooldown {rule.cooldown_seconds}s" if rule.cooldown_seconds else ""
        click.echo(
            f"{rule.id:>5}  {'enabled ' if rule.enabled else 'disabled'}  {rule.name}  "
            f"[{rule.source_type} {json.dumps(dict(rule.source_config))} -> {rule.action_type}]  "
            f"{rule.frequency}{cooldown}  organization {rule.organization_id}"
        )


@rules.command("disable")
@click.argument("rule_id", type=int)
@click.option("--by", "updated_by", type=click.UUID, help="The user who disables it.")
def disable_command(rule_id: int, updated_by: uuid.UUID | None) -> None:
    """Disable rule RULE_ID; its waiting actions are cancelled."""
    with cli_engine().begin() as conn:
        if not automation.disable_rule(conn, rule_id, updated_by):
            raise click.ClickException(f"no rule {rule_id}")
    click.echo(f"rule {rule_id} disabled")


@rules.command("log")
@click.argument("rule_id", type=int)
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
def log_command(rule_id: int, limit: int) -> None:
    """The latest firings of rule RULE_ID, newest first."""
    with cli_engine().connect() as conn:
        if automation.get_rule(conn, rule_id) is None:
            raise click.ClickException(f"no rule {rule_id}")
        firings = automation.rule_log(conn, rule_id, limit)
    if not firings:
        click.echo("the rule has not fired")
    for firing in firings:
        error = f"  ({firing['error_message']})" if firing["error_message"] else ""
        click.echo(f"{firing['created_date']:%Y-%m-%d %H:%M:%S}  {firing['status']:<9}  {firing['summary']}{error}")


@rules.command("watch")
@click.argument("organization", type=click.UUID)
@click.argument("entity_ids", nargs=-1, required=True, type=click.UUID)
@click.option("--rule", "rule_id", type=int, help="Put them on this rule's own watch list instead.")
@click.option("--by", "added_by", type=click.UUID, help="The user who adds them.")
def watch_command(
    organization: uuid.UUID, entity_ids: tuple[uuid.UUID, ...], rule_id: int | None, added_by: uuid.UUID | None
) -> None:
    """Add companies (ENTITY_IDS) to ORGANIZATION's watch list."""
    try:
        with cli_engine().begin() as conn:
            added = automation.watch(conn, organization, entity_ids, rule_id=rule_id, added_by=added_by)
    except automation.RuleConfigError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"{added} companies added, {len(entity_ids) - added} already watched")
