"""Tables as the table reader builds them from a page, for tests of what is read from their cells."""

from __future__ import annotations

from orchestration.shareholders.columns import roles
from orchestration.shareholders.page_layout import Page, Word
from orchestration.shareholders.tables import Cell, Column, Table, TableLine

COLUMN_WIDTH = 100.0


def table(headings: list[str], lines: list[list[str]], *, rows_ruled: bool = True) -> Table:
    """A table of one line per list of cell texts (one word box each). With ``rows_ruled``, a line
    whose first cell holds text has a rule above it across the table, as between ruled rows."""
    columns = [
        Column(heading=h, x0=i * COLUMN_WIDTH, x1=(i + 1) * COLUMN_WIDTH, roles=roles(h))
        for i, h in enumerate(headings)
    ]
    built = []
    for number, texts in enumerate(lines):
        y = 100.0 + number * 20
        cells = {
            i: Cell([Word(text, i * COLUMN_WIDTH + 5, y, i * COLUMN_WIDTH + 90, y + 10, 95.0)])
            for i, text in enumerate(texts)
            if text
        }
        ruled = rows_ruled and bool(texts[0])
        width = len(headings) * COLUMN_WIDTH
        built.append(TableLine(page=1, top=y, bottom=y + 10, cells=cells, rules_above=[(0.0, width)] if ruled else []))
    page = Page(number=1, width=len(headings) * COLUMN_WIDTH, height=100.0 + len(lines) * 20, words=[], source="ocr")
    return Table(columns=columns, lines=built, pages=[page])
