"""Rebuilding the indexes of tables that deletions leave partly empty (``REINDEX TABLE
CONCURRENTLY``), after dropping what an interrupted rebuild left behind.

A script of rebuilds is a SQL file of ``REINDEX TABLE CONCURRENTLY <table>;`` lines (with comments):
each runs on its own, outside a transaction, as CONCURRENTLY requires.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from orchestration.db import queries

QUERIES = queries.load("index_rebuilds")
_REBUILD = re.compile(r"^(REINDEX TABLE CONCURRENTLY (\w+));$", re.MULTILINE)


@dataclass(frozen=True)
class TableRebuild:
    """One table's indexes rebuilt: their size before and after, and how long it took."""

    table: str
    bytes_before: int
    bytes_after: int
    seconds: float


@dataclass(frozen=True)
class IndexRebuilds:
    leftovers_dropped: list[str]
    tables: list[TableRebuild]

    def describe(self) -> str:
        before = sum(t.bytes_before for t in self.tables)
        after = sum(t.bytes_after for t in self.tables)
        tables = ", ".join(
            f"{t.table} {t.bytes_before / 2**20:.2f} → {t.bytes_after / 2**20:.2f} MB in {t.seconds:.1f} s"
            for t in self.tables
        )
        dropped = f"; dropped {', '.join(self.leftovers_dropped)}, left by an interrupted rebuild" * bool(
            self.leftovers_dropped
        )
        return f"indexes rebuilt: {before / 2**20:.2f} → {after / 2**20:.2f} MB ({tables}){dropped}"


def rebuild_indexes(engine: Engine, script: Path) -> IndexRebuilds:
    """Drop the invalid copies an interrupted rebuild left on the tables of ``script`` (REINDEX
    CONCURRENTLY skips invalid indexes, and writes keep them up to date), then rebuild each
    table's indexes, one table at a time."""
    rebuilds = _REBUILD.findall(script.read_text())
    tables = [table for _statement, table in rebuilds]
    done: list[TableRebuild] = []
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        leftovers = list(conn.execute(QUERIES["rebuild_leftovers"], {"tables": tables}).scalars())
        for index in leftovers:
            # A name the catalog gave, quoted by format('%I.%I').
            conn.execute(sa.text(f"DROP INDEX CONCURRENTLY IF EXISTS {index}"))
        for statement, table in rebuilds:
            before = _index_bytes(conn, table)
            started = time.monotonic()
            conn.execute(sa.text(statement))
            done.append(TableRebuild(table, before, _index_bytes(conn, table), time.monotonic() - started))
    return IndexRebuilds(leftovers, done)


def _index_bytes(conn: sa.Connection, table: str) -> int:
    return conn.execute(QUERIES["index_bytes"], {"table": table}).scalar_one()
