"""`hreg jobs`: the dead letter (seeds/002), manual retries of what is in it, and the job archive (seeds/003)."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import click

from orchestration.cli import cli_engine, cli_settings, user_option
from orchestration.cli.status import format_age, format_table
from orchestration.runtime import queue
from orchestration.runtime.failures import FailureClass


@click.group()
def jobs() -> None:
    """Jobs that failed for good, their retries, and the archive of completed jobs."""


@jobs.command("dead-letter")
@click.option("--type", "job_type", help="Only jobs of this type (basic_discovery, xml_parsing, …).")
@click.option(
    "--class", "failure_class", type=click.Choice([c.value for c in FailureClass]), help="Only this failure class."
)
@click.option("--limit", type=click.IntRange(min=1), default=100, show_default=True, help="Newest jobs at most.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line instead of a table.")
def dead_letter_command(job_type: str | None, failure_class: str | None, limit: int, as_json: bool) -> None:
    """Jobs that failed for good (a permanent class, or their last retry) and no later job took up."""
    with cli_engine().connect() as conn:
        if job_type is not None and job_type not in queue.job_types(conn):
            raise click.BadParameter(f"unknown job type {job_type!r}", param_hint="--type")
        rows = queue.dead_letter(conn, job_type=job_type, failure_class=failure_class, limit=limit)
    if as_json:
        for row in rows:
            click.echo(json.dumps(row, default=str))
        return
    if not rows:
        click.echo("no jobs in the dead letter")
        return
    click.echo(
        format_table(
            ("job", "type", "class", "why final", "attempts", "failed", "subject", "last error"),
            [
                (
                    row["id"],
                    row["type"],
                    row["failure_class"] or "unclassified",
                    "permanent" if row["permanent"] else "retries exhausted",
                    row["attempts"],
                    f"{format_age(row['age_s'])} ago" if row["age_s"] is not None else "",
                    f"entity {row['entity_id']}" if row["entity_id"] else f"search {row['search_id']}",
                    (row["last_error"] or "").replace("\n", " ")[:100],
                )
                for row in rows
            ],
        )
    )


@jobs.command("retry")
@click.argument("job_id", type=click.UUID)
@click.option("--reason", required=True, help="Why, in one line a person can act on.")
@user_option("user_id", "The person who asks (default: HREG_USER_ID); required.", required=True)
def retry_command(job_id: uuid.UUID, reason: str, user_id: uuid.UUID) -> None:
    """Queue a manual job that takes up the failed job JOB_ID (previous_job_id points at it)."""
    if not reason.strip():
        raise click.BadParameter("a retry needs a reason a person can act on", param_hint="--reason")
    try:
        with cli_engine().begin() as conn:
            new_id = queue.retry(conn, str(job_id), requested_by=str(user_id), reason=reason)
    except queue.RetryRefused as refused:
        raise click.ClickException(str(refused)) from None
    click.echo(f"job {job_id}: retried as manual job {new_id}")


@jobs.command("archive")
@click.option(
    "--older-than-days",
    type=click.FloatRange(min=0),
    default=None,
    help="Completed this many days ago at least (default: HREG_JOB_ARCHIVE_AFTER_DAYS).",
)
def archive_command(older_than_days: float | None) -> None:
    """Move completed jobs past the retention period to processing.job_archive now (a sensor does it too)."""
    settings = cli_settings()
    days = settings.job_archive_after_days if older_than_days is None else older_than_days
    moved = queue.archive_all_completed(
        cli_engine(), timedelta(days=days), settings.job_archive_batch_size, max_batches=1_000_000
    )
    click.echo(f"archived {moved} jobs completed more than {days:g} days ago")
