"""The README's CLI section lists every command `hreg` has, so a newcomer finds each one there."""

from __future__ import annotations

import re
from pathlib import Path

import click

from orchestration.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


def command_paths(group: click.Group, ctx: click.Context, prefix: str = "hreg") -> list[str]:
    paths = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        path = f"{prefix} {name}"
        if isinstance(command, click.Group):
            paths += command_paths(command, click.Context(command, parent=ctx), path)
        else:
            paths.append(path)
    return paths


def listed_in(section: str, path: str) -> bool:
    group, name = path.rsplit(" ", 1)
    # "hreg db upgrade | url | stop" names several commands of a group on one line.
    several = rf"{re.escape(group)} (?:[a-z-]+ \| )*{re.escape(name)}(?: \| [a-z-]+)*"
    return re.search(rf"(?:^|\s){several}(?:\s|$)", section, flags=re.M) is not None


def test_the_readme_cli_section_names_every_command():
    readme = README.read_text()
    [section] = re.findall(r"^## CLI\n+```\n(.*?)```", readme, flags=re.S | re.M)
    with click.Context(main) as ctx:
        commands = command_paths(main, ctx)

    # `hreg search QUERY` is the search group's default command, `new`.
    missing = [path for path in commands if not listed_in(section, path) and path != "hreg search new"]
    assert len(commands) > 20
    assert missing == []
