"""The shareholder table of a list: its columns by their headings, and its body as lines of cells.

Columns come from the vertical rules where the table draws them, else from the positions of the
headings (lists typed without rules). Body lines keep which horizontal rules lie above them, so
the row reader can tell a new row from a cell's next line. A table ends at its sum line or at the
text after it (place and date, the notary's certificate); it continues on the next page when that
page repeats the headings. A page without headings (a certificate, a cover letter) holds no table.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Literal

from orchestration.shareholders.columns import FREE_TEXT, Role, heading_kinds, roles
from orchestration.shareholders.page_layout import Page, Rule, Word
from orchestration.shareholders.shareholder_list import LowConfidenceCell

# Tesseract's word confidence below which a cell is shown for review.
LOW_CONFIDENCE = 60.0
# In a sans-serif scan "II" (a numeral in a firm's name), "Il" and "ll" are the same strokes:
# OCR picks one by its language model, however sure it says it is.
LOOKALIKE_LETTERS = re.compile(r"(?<!\w)[Il]{2,}(?!\w)")
# Words further apart than this many line heights belong to different phrases (cells).
PHRASE_GAP = 0.5
# A vertical rule is a column boundary when it runs over this share of the heading's height.
BOUNDARY_SHARE = 0.6
SUM_LINE = re.compile(
    r"^(?:Summe|Gesamtsumme|Gesamt\w*|insgesamt|Stammkapital|Share\s+Capital|Total)\b|^insg\.", re.IGNORECASE
)
END_OF_TABLE = re.compile(
    # place and date ("Hannover, den …", "Neuss, 01.08.2021"), the certificate, the signature
    r"^(?:[A-ZÄÖÜ][\w/().\- ]{1,40},\s+(?:(?:den|am)\b|\d{1,2}\.\s?(?:\d{1,2}\.|[A-ZÄÖÜ]))|"
    r"Datum\b|Date\b|Bescheinigung|Hiermit|Der\s+Notar|Ich,|"
    r"Die\s+in\s+der\s+vorstehenden|\*\s*GA\b|Der\s+Gesch[äa]ftsf[üu]hrer)",
)


@dataclass
class Cell:
    words: list[Word]

    @property
    def text(self) -> str:
        return " ".join(word.text for word in self.words)

    @property
    def confidence(self) -> float:
        return min((word.confidence for word in self.words), default=100.0)


@dataclass
class Column:
    heading: str
    x0: float
    x1: float
    roles: set[Role]


@dataclass
class TableLine:
    page: int
    top: float
    bottom: float
    cells: dict[int, Cell]
    # x-extents of the horizontal rules between this line and the one before it
    rules_above: list[tuple[float, float]] = field(default_factory=list)

    def text(self, column: int) -> str:
        cell = self.cells.get(column)
        return cell.text if cell else ""


@dataclass
class Table:
    columns: list[Column]
    lines: list[TableLine]
    total_line: TableLine | None = None
    pages: list[Page] = field(default_factory=list)

    @property
    def source(self) -> Literal["text_layer", "ocr", "mixed"]:
        """Where the table's words came from: the text layer, OCR, or both (over several pages)."""
        sources = {page.source for page in self.pages}
        return sources.pop() if len(sources) == 1 else "mixed"

    def low_confidence_cells(self) -> list[LowConfidenceCell]:
        """Cells of the columns that carry values (not the free text of changes) that OCR read with a
        word below LOW_CONFIDENCE, or with a word of letters a scan cannot tell apart: what a person
        should look at."""
        read = {i for i, column in enumerate(self.columns) if column.roles - FREE_TEXT or not column.roles}
        scanned = {page.number for page in self.pages if page.source == "ocr"}
        lines = [*self.lines, self.total_line] if self.total_line is not None else self.lines
        return [
            LowConfidenceCell(page=line.page, text=cell.text, confidence=round(cell.confidence, 1))
            for line in lines
            for index, cell in sorted(line.cells.items())
            if index in read
            and re.search(r"\w", cell.text)
            and (cell.confidence < LOW_CONFIDENCE or (line.page in scanned and LOOKALIKE_LETTERS.search(cell.text)))
        ]

    def as_rows(self) -> list[dict[str, str]]:
        """The table as plain cells by heading, for people and for the LLM."""
        rows = [{column.heading: line.text(index) for index, column in enumerate(self.columns)} for line in self.lines]
        if self.total_line is not None:
            rows.append({"(sum line)": " ".join(c.text for _, c in sorted(self.total_line.cells.items()))})
        return rows


@dataclass
class _Line:
    words: list[Word]

    @property
    def top(self) -> float:
        return min(w.y0 for w in self.words)

    @property
    def bottom(self) -> float:
        return max(w.y1 for w in self.words)

    @property
    def center(self) -> float:
        return (self.top + self.bottom) / 2

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)


def read_tables(pages: list[Page]) -> Table | None:
    """The shareholder table over the list's pages; None when no page has headings.

    A second table after a finished one (with its sum line) replaces it: lists of a capital
    increase show the increase first and the resulting shareholdings last."""
    table: Table | None = None
    finished = False
    for page in pages:
        lines = _lines(page.words)
        start = 0
        if table is not None and not finished and _find_heading(page, lines, 0) is None:
            # A table that goes on without repeating its heading: read in the previous page's
            # columns, from its first line with a running number and an amount.
            first = _first_row(page, lines, table.columns)
            if first is not None:
                body, total, start = _body(page, lines, first, table.columns)
                table.lines.extend(body)
                table.total_line = total
                table.pages.append(page)
                finished = total is not None
        while (found := _find_heading(page, lines, start)) is not None:
            columns, body_start = found
            if table is None or finished:
                body, total, next_start = _body(page, lines, body_start, columns)
                table = Table(columns=columns, lines=body, total_line=total, pages=[page])
            else:
                # The table goes on under a repeated heading; where OCR read that heading
                # differently, the page is read in the columns first read.
                if not _same_columns(table.columns, columns):
                    columns = table.columns
                body, total, next_start = _body(page, lines, body_start, columns)
                table.lines.extend(body)
                table.total_line = total
                table.pages.append(page)
            finished = total is not None
            start = next_start
    return table


def _first_row(page: Page, lines: list[_Line], columns: list[Column]) -> int | None:
    """The first line that holds a running number and an amount in their columns, in a table's
    columns: where a table continues on a page without its heading."""
    ruled = columns[0].x0 != float("-inf")
    numbers = [i for i, c in enumerate(columns) if Role.NUMBER in c.roles]
    amounts = [i for i, c in enumerate(columns) if c.roles & {Role.NOMINAL, Role.NOMINAL_TOTAL}]
    for index, line in enumerate(lines):
        cells = _cells(line.words, columns, ruled)
        number = " ".join(cells[i].text for i in numbers if i in cells)
        amount = " ".join(cells[i].text for i in amounts if i in cells)
        if re.match(r"\s*\d", number) and re.search(r"\d", amount) and not END_OF_TABLE.match(line.text):
            return index
    return None


def _same_columns(previous: list[Column], new: list[Column]) -> bool:
    """Whether a heading repeats the previous page's: as many columns, most of them told alike
    (OCR may misread a repeated heading where it read the first one)."""
    if len(previous) != len(new):
        return False
    alike = sum(1 for old, repeated in zip(previous, new, strict=True) if old.roles == repeated.roles)
    return alike * 2 > len(new)


def _lines(words: list[Word]) -> list[_Line]:
    """Words grouped into lines by their vertical centres, each line left to right."""
    lines: list[_Line] = []
    height = statistics.median([w.height for w in words]) if words else 0
    for word in sorted(words, key=lambda w: w.center_y):
        if lines and abs(lines[-1].center - word.center_y) < height * 0.55:
            lines[-1].words.append(word)
        else:
            lines.append(_Line([word]))
    for line in lines:
        line.words.sort(key=lambda w: w.x0)
    return lines


def _phrases(words: list[Word]) -> list[list[Word]]:
    """A line's words split where the gap is wider than a column gap."""
    phrases: list[list[Word]] = []
    for word in words:
        if phrases and word.x0 - phrases[-1][-1].x1 <= PHRASE_GAP * max(word.height, phrases[-1][-1].height):
            phrases[-1].append(word)
        else:
            phrases.append([word])
    return phrases


def _find_heading(page: Page, lines: list[_Line], start: int) -> tuple[list[Column], int] | None:
    """The columns of the first heading at or after line ``start``, and the index of its body's first line."""
    for index in range(start, len(lines)):
        phrases = _phrases(lines[index].words)
        kinds = [heading_kinds(" ".join(w.text for w in phrase)) for phrase in phrases]
        if len([k for k in kinds if k]) < 2 or len(set().union(*kinds)) < 2:
            continue
        first, last = _heading_band(page, lines, index, start)
        heading_lines = lines[first : last + 1]
        columns = _ruled_columns(page, heading_lines) or _typed_columns(heading_lines)
        if sum(1 for c in columns if c.roles - FREE_TEXT) >= 2 and any(
            c.roles & {Role.NOMINAL, Role.NOMINAL_TOTAL} for c in columns
        ):
            return columns, last + 1
    return None


def _horizontal(page: Page) -> list[Rule]:
    """The page's horizontal rules, pieces of one rule (broken where it crosses a column rule or by
    noise) joined, that are long enough to separate rows."""
    tolerance, gap = page.height * 0.002, page.width * 0.05
    joined: list[Rule] = []
    for rule in sorted((r for r in page.rules if r.horizontal), key=lambda r: r.x0):
        for index, known in enumerate(joined):
            if abs(known.y0 - rule.y0) <= tolerance and rule.x0 - known.x1 <= gap:
                joined[index] = Rule(known.x0, known.y0, max(known.x1, rule.x1), known.y1)
                break
        else:
            joined.append(rule)
    return sorted((rule for rule in joined if rule.x1 - rule.x0 >= page.width * 0.15), key=lambda r: r.y0)


def _heading_band(page: Page, lines: list[_Line], keyword: int, start: int) -> tuple[int, int]:
    """First and last line of the heading around the line ``keyword`` that names its columns: between
    the rules above and below it where the table draws them, else down to the first line with a number."""
    line = lines[keyword]
    height = max(w.height for w in line.words)
    width = line.words[-1].x1 - line.words[0].x0
    spanning = [r for r in _horizontal(page) if r.x1 - r.x0 >= width * 0.6]
    above = [r.y0 for r in spanning if line.center - 8 * height < r.y0 < line.center]
    below = [r.y0 for r in spanning if r.y0 > line.center]
    first = keyword
    if above:
        top = max(above)
        while first - 1 >= start and lines[first - 1].center > top:
            first -= 1
    limit = min(below, default=float("inf"))
    last = keyword
    for index in range(keyword + 1, len(lines)):
        candidate = lines[index]
        if candidate.center > limit:
            break
        if limit == float("inf") and re.search(r"\d", candidate.text.replace("%", "")):
            break
        if candidate.top - lines[index - 1].bottom > 2.5 * height:
            break
        last = index
    return first, last


def _ruled_columns(page: Page, heading: list[_Line]) -> list[Column]:
    """Columns between the vertical rules that cross the heading."""
    top, bottom = heading[0].top, heading[-1].bottom
    height = max(bottom - top, 1)
    xs = sorted(
        (rule.x0 + rule.x1) / 2
        for rule in page.rules
        if not rule.horizontal and min(rule.y1, bottom) - max(rule.y0, top) >= height * BOUNDARY_SHARE
    )
    # The table's outer edges, where the rules above and below the heading end, when the table
    # draws no vertical rule there.
    line_height = max(w.height for line in heading for w in line.words)
    edges = [r for r in _horizontal(page) if top - 3 * line_height <= r.y0 <= bottom + 3 * line_height]
    if len(xs) >= 2 and edges:
        xs = sorted([*xs, min(r.x0 for r in edges), max(r.x1 for r in edges)])
    boundaries: list[float] = []
    for x in xs:
        if boundaries and x - boundaries[-1] < page.width * 0.01:
            continue
        boundaries.append(x)
    words = [w for line in heading for w in line.words if re.search(r"\w", w.text)]
    if len(boundaries) < 3:
        return []
    columns = []
    for x0, x1 in pairwise(boundaries):
        inside = [w for w in words if x0 <= (w.x0 + w.x1) / 2 < x1]
        heading_text = _join_lines(inside)
        columns.append(Column(heading=heading_text, x0=x0, x1=x1, roles=roles(heading_text)))
    return columns


def _typed_columns(heading: list[_Line]) -> list[Column]:
    """Columns of a table without vertical rules: heading phrases that overlap across the heading's
    lines form one column, which reaches from its left edge to the next column's."""
    groups: list[list[Word]] = []
    for line in heading:
        for phrase in _phrases(line.words):
            x0, x1 = phrase[0].x0, phrase[-1].x1
            overlapping = [g for g in groups if min(x1, max(w.x1 for w in g)) > max(x0, min(w.x0 for w in g))]
            merged = list(phrase)
            for group in overlapping:
                merged += group
                groups.remove(group)
            groups.append(merged)
    groups.sort(key=lambda g: min(w.x0 for w in g))
    columns = []
    for index, group in enumerate(groups):
        text = _join_lines(group)
        x0 = min(w.x0 for w in group) if index else float("-inf")
        x1 = min(w.x0 for w in groups[index + 1]) if index + 1 < len(groups) else float("inf")
        columns.append(Column(heading=text, x0=x0, x1=x1, roles=roles(text)))
    return columns


def _join_lines(words: list[Word]) -> str:
    """Words of a cell in reading order, its lines joined."""
    return join_lines([line.text for line in _lines(words)])


def join_lines(parts: list[str]) -> str:
    """A cell's lines as one text, hyphenated words mended ("Geschäfts-" + "anteil")."""
    text = ""
    for part in parts:
        if not part:
            continue
        text = text[:-1] + part if text.endswith("-") and part[:1].islower() else f"{text} {part}".strip()
    return text


def _body(
    page: Page, lines: list[_Line], start: int, columns: list[Column]
) -> tuple[list[TableLine], TableLine | None, int]:
    """Body lines from ``start`` to the sum line or the end of the table; returns the lines, the
    sum line (or None) and the index of the first line after the table."""
    ruled = columns[0].x0 != float("-inf")
    left, right = columns[0].x0, columns[-1].x1
    margin = page.width * 0.01
    rules = sorted(_horizontal(page), key=lambda r: r.y0)
    # A ruled table ends where its column rules end; the certificate below it is no row.
    bottom = float("inf")
    if ruled:
        inner = [r for r in page.rules if not r.horizontal and left - margin <= r.x0 <= right + margin]
        below = [r.y1 for r in inner if r.y0 <= lines[start].top + page.height * 0.05]
        bottom = max(below, default=bottom)
    body: list[TableLine] = []
    previous_bottom = lines[start - 1].bottom if start else 0.0
    for index in range(start, len(lines)):
        line = lines[index]
        if line.center > bottom:
            # The sum line may stand just under the table's rules ("Stammkapital gesamt: …").
            total = TableLine(
                page=page.number, top=line.top, bottom=line.bottom, cells=_cells(line.words, columns, ruled)
            )
            if line.top - bottom < 3 * line.words[0].height and SUM_LINE.match(_leading_text(total, columns)):
                return body, total, index + 1
            return body, None, index
        words = [w for w in line.words if not ruled or left - margin <= (w.x0 + w.x1) / 2 <= right + margin]
        words = [w for w in words if re.search(r"[\w%€&<]", w.text)]
        if not words:
            continue
        above = [(r.x0, r.x1) for r in rules if previous_bottom <= r.y0 <= line.center]
        table_line = TableLine(
            page=page.number, top=line.top, bottom=line.bottom, cells=_cells(words, columns, ruled), rules_above=above
        )
        leading = _leading_text(table_line, columns)
        if END_OF_TABLE.match(leading) or (ruled and len(words) < len(line.words) / 2 and len(line.words) > 4):
            return body, None, index
        previous_bottom = line.bottom
        if SUM_LINE.match(leading):
            return body, _with_its_amounts(body, table_line), index + 1
        body.append(table_line)
    return body, None, len(lines)


_VALUE_ROLES = {Role.PERCENT, Role.PERCENT_TOTAL, Role.SUBTOTAL, *FREE_TEXT}


def _leading_text(line: TableLine, columns: list[Column]) -> str:
    """The line's text from its first cell, when that cell is not in a column of values or
    changes: a sum line's label or a closing line stands at the left."""
    first = min(line.cells)
    if columns[first].roles & _VALUE_ROLES and not columns[first].roles & {Role.NUMBER, Role.HOLDER}:
        return ""
    return " ".join(line.cells[index].text for index in sorted(line.cells))


def _with_its_amounts(body: list[TableLine], total: TableLine) -> TableLine:
    """A sum line whose label sits lower than its amounts (a two-line cell "25.000,00 / Euro"):
    lines of amounts only, between the last rule and the label, belong to it."""
    if total.rules_above:
        return total
    taken: list[TableLine] = []
    for line in reversed(body[-2:]):
        if re.search(r"[^\W\d_]{5,}", " ".join(cell.text for cell in line.cells.values())):
            break
        taken.append(line)
        if line.rules_above:
            break
    if not taken or not taken[-1].rules_above:
        return total
    del body[-len(taken) :]
    cells = {index: Cell(list(cell.words)) for index, cell in total.cells.items()}
    for line in taken:
        for index, cell in line.cells.items():
            cells.setdefault(index, Cell([])).words[:0] = cell.words
    return TableLine(
        page=total.page, top=taken[-1].top, bottom=total.bottom, cells=cells, rules_above=taken[-1].rules_above
    )


def _cells(words: list[Word], columns: list[Column], ruled: bool) -> dict[int, Cell]:
    cells: dict[int, Cell] = {}
    if ruled:
        for word in words:
            center = (word.x0 + word.x1) / 2
            index = min(range(len(columns)), key=lambda i: _distance(center, columns[i]))
            cells.setdefault(index, Cell([])).words.append(word)
        return cells
    for phrase in _phrases(words):
        x0, x1 = phrase[0].x0, phrase[-1].x1
        index = max(range(len(columns)), key=lambda i: (_overlap(x0, x1, columns[i]), -_distance(x0, columns[i])))
        cells.setdefault(index, Cell([])).words.extend(phrase)
    return cells


def _overlap(x0: float, x1: float, column: Column) -> float:
    return max(0.0, min(x1, column.x1) - max(x0, column.x0))


def _distance(x: float, column: Column) -> float:
    if column.x0 <= x < column.x1:
        return 0.0
    return min(abs(x - column.x0), abs(x - column.x1))
