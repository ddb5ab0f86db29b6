"""The register courts: the unit a parser-change backfill is partitioned by.

173 courts keep a commercial, cooperative, partnership or association register (the XUnternehmen
code list "Registergerichte"). Their number does not grow with the register, and "re-parse
Munich" is a request a person makes. SI documents may write a court with a department letter
("D2601V" for Munich's register department); the partition is the court without it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

import sqlalchemy as sa

from orchestration.db import queries

QUERIES = queries.load("courts")


@cache
def register_courts() -> dict[str, str]:
    """Court code -> court name, in code order."""
    text = resources.files(__package__).joinpath("data/register_courts.tsv").read_text(encoding="utf-8")
    rows = (line.split("\t") for line in text.splitlines() if line and not line.startswith("#"))
    return dict(sorted((code, name) for code, name in rows))


def unknown_courts(codes: list[str]) -> list[str]:
    """The codes among ``codes`` that are not register courts."""
    courts = register_courts()
    return [code for code in codes if code not in courts]


@dataclass
class CourtSummary:
    court: str
    completed: int = 0
    written: int = 0
    failures_by_class: Counter = field(default_factory=Counter)

    @property
    def failed(self) -> int:
        return sum(self.failures_by_class.values())


def run_by_court(conn: sa.Connection, run_id: str, job_type: str, written: str) -> dict[str, CourtSummary]:
    """Per court, what run ``run_id`` did with ``job_type`` jobs; ``written`` names the result flag."""
    summaries: dict[str, CourtSummary] = {}
    rows = conn.execute(QUERIES["run_by_court"], {"run_id": run_id, "job_type": job_type, "written": written})
    for row in rows:
        summary = summaries.setdefault(row.court, CourtSummary(row.court))
        if row.status == "completed":
            summary.completed += row.jobs
            summary.written += row.written
        else:
            summary.failures_by_class[row.failure_class] += row.jobs
    return summaries
