"""Named queries: the SQL of one domain in one file of ``db/sql/queries``, read once into a registry.

Each query has a name and a line on what it does, as Procrastinate keeps its queries::

    -- name: count_due
    -- How many jobs of a type a worker may claim now.
    SELECT count(*) FROM processing.due_jobs j WHERE j.type = :job_type

Further comment lines below the description say why the query is written as it is. A query runs
to the next ``-- name:`` line. ``{other}`` in a query's text stands for the query named ``other``
in the same file, so that a part shared by several queries is written once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import sqlalchemy as sa

QUERIES_DIR = Path(__file__).parent / "sql" / "queries"
_NAME_LINE = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\{([A-Za-z_]\w*)\}")


class QueryFileError(ValueError):
    """A file of named queries that does not follow the layout above."""


@dataclass(frozen=True)
class NamedQuery:
    name: str
    description: str
    sql: str


class Queries(Mapping[str, sa.TextClause]):
    """The queries of one file by name, as statements ready to execute."""

    def __init__(self, domain: str, queries: list[NamedQuery]) -> None:
        self.domain = domain
        self.named = {query.name: query for query in queries}
        self._statements = {query.name: sa.text(query.sql) for query in queries}

    def __getitem__(self, name: str) -> sa.TextClause:
        try:
            return self._statements[name]
        except KeyError:
            raise KeyError(f"no query {name!r} in {self.domain}.sql") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._statements)

    def __len__(self) -> int:
        return len(self._statements)


def parse(domain: str, text: str) -> list[NamedQuery]:
    """The named queries of a file's text, with ``{other}`` replaced by the text of ``other``."""
    parts = _NAME_LINE.split(text)
    if parts[0].strip():
        raise QueryFileError(f"{domain}.sql: text before the first '-- name:' line")
    raw: dict[str, tuple[str, str]] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        lines = body.strip("\n").splitlines()
        if not lines or not lines[0].startswith("-- ") or not lines[0][3:].strip():
            raise QueryFileError(f"{domain}.sql: query {name} lacks its one-line description")
        if name in raw:
            raise QueryFileError(f"{domain}.sql: query {name} is defined twice")
        sql = "\n".join(lines[1:]).strip()
        if not sql or all(line.lstrip().startswith("--") for line in sql.splitlines()):
            raise QueryFileError(f"{domain}.sql: query {name} has no SQL")
        raw[name] = (lines[0][3:].strip(), sql)

    def expand(name: str, seen: tuple[str, ...]) -> str:
        def replace(match: re.Match[str]) -> str:
            other = match.group(1)
            if other not in raw:
                raise QueryFileError(f"{domain}.sql: query {name} names {{{other}}}, which is not a query here")
            if other in seen:
                raise QueryFileError(f"{domain}.sql: query {name} includes itself through {{{other}}}")
            return expand(other, (*seen, other))

        return _PLACEHOLDER.sub(replace, raw[name][1])

    return [NamedQuery(name, description, expand(name, (name,))) for name, (description, _) in raw.items()]


@cache
def load(domain: str) -> Queries:
    """The queries of ``db/sql/queries/<domain>.sql``, read once per process."""
    return Queries(domain, parse(domain, (QUERIES_DIR / f"{domain}.sql").read_text()))
