"""`hreg status`: how full the job queue is, who waits (people or background work), and why jobs failed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click

from orchestration.cli import cli_engine
from orchestration.runtime import queue


def format_age(seconds: float) -> str:
    """A duration as a person reads it: 42s, 3m 05s, 2h 10m, 4d 01h."""
    seconds = int(seconds)
    minutes, secs = divmod(seconds, 60)
    hours, mins = divmod(minutes, 60)
    days, hrs = divmod(hours, 24)
    if days:
        return f"{days}d {hrs:02d}h"
    if hours:
        return f"{hours}h {mins:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Columns padded to their widest cell; numbers right-aligned."""
    cells = [list(map(str, headers))] + [[str(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [all(isinstance(row[i], int) for row in rows) for i in range(len(headers))]
    return "\n".join(
        "  ".join(
            cell.rjust(width) if right else cell.ljust(width) for cell, width, right in zip(row, widths, numeric)
        ).rstrip()
        for row in cells
    )


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
def status(as_json: bool) -> None:
    """Queue depth and oldest job age per job type and status, queued and running jobs per type and
    priority (interactive: a person waits; background), and failed jobs by failure class."""
    with cli_engine().connect() as conn:
        depth = [{**row, "oldest_age_s": float(row["oldest_age_s"])} for row in queue.queue_status(conn)]
        by_priority = queue.queue_by_priority(conn)
        failures = queue.failures_by_class(conn)
    if as_json:
        click.echo(json.dumps({"queue": depth, "priorities": by_priority, "failures": failures}))
        return
    click.echo("Jobs by type and status")
    if depth:
        click.echo(
            format_table(
                ("type", "status", "jobs", "oldest"),
                [(row["type"], row["status"], row["jobs"], format_age(row["oldest_age_s"])) for row in depth],
            )
        )
    else:
        click.echo("no jobs")
    click.echo("\nQueued and running jobs by priority")
    if by_priority:
        click.echo(
            format_table(
                ("type", "priority", "queued", "running", "oldest queued"),
                [
                    (
                        row["type"],
                        row["priority"],
                        row["queued"],
                        row["running"],
                        "-" if row["oldest_queued_age_s"] is None else format_age(row["oldest_queued_age_s"]),
                    )
                    for row in by_priority
                ],
            )
        )
    else:
        click.echo("no queued or running jobs")
    click.echo("\nFailed jobs by failure class")
    if failures:
        click.echo(
            format_table(
                ("type", "failure class", "jobs"),
                [(row["type"], row["failure_class"], row["jobs"]) for row in failures],
            )
        )
    else:
        click.echo("no failed jobs")
