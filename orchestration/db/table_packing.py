"""Packing the tables that deletions leave partly empty: a rewrite (``VACUUM (FULL, ANALYZE)``) of
each table small enough to copy under its exclusive lock, a concurrent rebuild of the indexes
(``REINDEX TABLE CONCURRENTLY``) of the others, after dropping what an interrupted rebuild left.
A packing of every table is weekly; on the other nights only the small tables that a rewrite would
shrink by at least REWRITE_MIN_FREE_SHARE are rewritten, measured by a scan of their live rows.

A script of packings is a SQL file of ``VACUUM (FULL, ANALYZE) <table>;`` lines (with comments):
each runs on its own, outside a transaction, as VACUUM and CONCURRENTLY require.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from orchestration.db import queries

QUERIES = queries.load("table_packing")
_REWRITE = re.compile(r"^(VACUUM \(FULL, ANALYZE\) (\w+));$", re.MULTILINE)
# SQLSTATE lock_not_available: lock_timeout passed before the table's lock was granted.
_LOCK_NOT_AVAILABLE = "55P03"
# How long a rewrite waits for its table's lock before it leaves the table to an index rebuild:
# while it waits, every reader and writer of the table waits behind it.
REWRITE_LOCK_TIMEOUT_S = 5.0
# What a table's live rows must leave empty of its file and TOAST for a night's packing to rewrite
# it. A packed table leaves some 6 % to page ends and TOAST chunks, which a rewrite cannot give
# back, and one day's deletions in a 30-day window add some 3 %, which the next day's rows reuse;
# the runs of a backfill, deleted at once, add more. Below eight pages there is nothing to give.
REWRITE_MIN_FREE_SHARE = 0.12
REWRITE_MIN_FREE_BYTES = 8 * 8192

# How a table was packed: rewritten whole, or only its indexes rebuilt because it is larger than a
# rewrite may take, or because its lock was not granted in time (a long query or transaction on it);
# or, on a night of only the tables with space to give back, left as it is.
Packing = Literal[
    "rewritten",
    "indexes rebuilt (too large to rewrite)",
    "indexes rebuilt (lock not granted)",
    "left (too little free)",
    "left for the weekly packing (too large to rewrite)",
]


@dataclass(frozen=True)
class FreeSpace:
    """What a table's live rows leave empty of its file and TOAST: a share, and bytes."""

    share: float
    bytes: int

    @property
    def worth_rewriting(self) -> bool:
        return self.share >= REWRITE_MIN_FREE_SHARE and self.bytes >= REWRITE_MIN_FREE_BYTES


@dataclass(frozen=True)
class TablePacking:
    """One table packed: its size on disk before and after (file, TOAST and indexes), the share of
    its file and TOAST its live rows left empty (None for a table too large to measure), and how
    long it took."""

    table: str
    how: Packing
    bytes_before: int
    bytes_after: int
    free_share: float | None
    seconds: float

    def describe(self) -> str:
        free = "" if self.free_share is None else f", {self.free_share:.0%} free"
        return (
            f"{self.table} {self.bytes_before / 2**20:.2f} → {self.bytes_after / 2**20:.2f} MB{free}, {self.how}, "
            f"in {self.seconds:.1f} s"
        )


@dataclass(frozen=True)
class TablePackings:
    leftovers_dropped: list[str]
    tables: list[TablePacking]

    @property
    def bytes_before(self) -> int:
        return sum(t.bytes_before for t in self.tables)

    @property
    def bytes_after(self) -> int:
        return sum(t.bytes_after for t in self.tables)

    def describe(self) -> str:
        tables = "; ".join(t.describe() for t in self.tables)
        dropped = f"; dropped {', '.join(self.leftovers_dropped)}, left by an interrupted rebuild" * bool(
            self.leftovers_dropped
        )
        return f"tables packed: {self.bytes_before / 2**20:.2f} → {self.bytes_after / 2**20:.2f} MB ({tables}){dropped}"


def pack_tables(
    engine: Engine,
    script: Path,
    *,
    rewrite_max_bytes: int,
    every_table: bool = True,
    lock_timeout_s: float = REWRITE_LOCK_TIMEOUT_S,
) -> TablePackings:
    """Drop the invalid index copies an interrupted rebuild left on the tables of ``script``
    (REINDEX CONCURRENTLY skips invalid indexes, and writes keep them up to date), then pack each
    table, one at a time: rewrite it when it takes at most ``rewrite_max_bytes`` and its lock is
    granted within ``lock_timeout_s`` (so that it never queues the table's readers behind a long
    transaction), else rebuild its indexes concurrently. Unless ``every_table``, only the tables
    small enough to rewrite whose live rows leave REWRITE_MIN_FREE_SHARE and REWRITE_MIN_FREE_BYTES
    of them empty are packed."""
    rewrites = _rewrites(script)
    tables = [table for _statement, table in rewrites]
    done: list[TablePacking] = []
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        leftovers = list(conn.execute(QUERIES["rebuild_leftovers"], {"tables": tables}).scalars())
        for index in leftovers:
            # A name the catalog gave, quoted by format('%I.%I').
            conn.execute(sa.text(f"DROP INDEX CONCURRENTLY IF EXISTS {index}"))
        free_spaces = _free_spaces(conn, tables, rewrite_max_bytes)
        for rewrite, table in rewrites:
            before = _table_bytes(conn, table)
            started = time.monotonic()
            free = free_spaces[table]
            if every_table or (free is not None and free.worth_rewriting):
                how = _pack(conn, rewrite, table, free is not None, lock_timeout_s)
            elif free is not None:
                how = "left (too little free)"
            else:
                how = "left for the weekly packing (too large to rewrite)"
            share = None if free is None else free.share
            done.append(TablePacking(table, how, before, _table_bytes(conn, table), share, time.monotonic() - started))
    return TablePackings(leftovers, done)


def free_spaces(engine: Engine, script: Path, *, rewrite_max_bytes: int) -> dict[str, FreeSpace | None]:
    """What the live rows leave empty of each table of ``script`` that takes at most
    ``rewrite_max_bytes`` (None for a larger one, which is not read)."""
    with engine.connect() as conn:
        return _free_spaces(conn, [table for _statement, table in _rewrites(script)], rewrite_max_bytes)


def _rewrites(script: Path) -> list[tuple[str, str]]:
    """The rewrite statements of a script of packings, each with its table."""
    return _REWRITE.findall(script.read_text())


def _pack(conn: sa.Connection, rewrite: str, table: str, small: bool, lock_timeout_s: float) -> Packing:
    if small:
        conn.execute(sa.text("SELECT set_config('lock_timeout', :timeout, false)"), {"timeout": f"{lock_timeout_s}s"})
        try:
            conn.execute(sa.text(rewrite))
            return "rewritten"
        except sa.exc.OperationalError as error:
            if getattr(error.orig, "pgcode", None) != _LOCK_NOT_AVAILABLE:
                raise
        finally:
            conn.execute(sa.text("RESET lock_timeout"))
    # The table's name, from the script's own statement.
    conn.execute(sa.text(f"REINDEX TABLE CONCURRENTLY {table}"))
    return "indexes rebuilt (lock not granted)" if small else "indexes rebuilt (too large to rewrite)"


def _free_spaces(conn: sa.Connection, tables: list[str], rewrite_max_bytes: int) -> dict[str, FreeSpace | None]:
    conn.execute(QUERIES["create_live_row_bytes"])
    return {
        table: _free_space(conn, table) if _table_bytes(conn, table) <= rewrite_max_bytes else None for table in tables
    }


def _free_space(conn: sa.Connection, table: str) -> FreeSpace:
    fill = conn.execute(QUERIES["table_fill"], {"table": table}).one()
    if not fill.usable_bytes:
        return FreeSpace(0.0, 0)
    return FreeSpace(1 - fill.live_bytes / fill.usable_bytes, fill.usable_bytes - fill.live_bytes)


def _table_bytes(conn: sa.Connection, table: str) -> int:
    return conn.execute(QUERIES["table_bytes"], {"table": table}).scalar_one()
