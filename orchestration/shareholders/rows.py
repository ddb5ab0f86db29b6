"""Shareholder rows from the table: lines grouped into rows, rows into shareholders, cells into values.

A row starts where a rule crosses the shareholder column, or, in lists without such rules, where
a new running number starts. A row without a shareholder of its own (a further share line beside
a merged cell) belongs to the shareholder before it, and rows naming the same shareholder again
(one row per share) are one shareholder. A row's intermediate sum ("Zwischensumme", in its own
column or labelled in the amount's cell) gives the percentage of that row's shares, never the
shareholder's or the list's total. The changes column is kept as text per shareholder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from difflib import SequenceMatcher
from typing import Literal

from orchestration.runtime.failures import FailureClass, JobError
from orchestration.shareholders.cell_values import (
    amounts_in,
    birth_date_in,
    currency_in,
    percentages_in,
    running_numbers_in,
    without_money,
)
from orchestration.shareholders.columns import Role
from orchestration.shareholders.firms import firm_name, is_organisation, names_register, register_of, seat_of
from orchestration.shareholders.shareholder_list import ExtractedList, LowConfidenceCell, Share, Shareholder
from orchestration.shareholders.tables import Table, TableLine, join_lines

SAME_HOLDER = 0.85


@dataclass
class _Row:
    lines: list[TableLine] = field(default_factory=list)

    def text(self, columns: list[int]) -> str:
        parts = [join_lines([line.text(column) for line in self.lines]) for column in columns]
        return ", ".join(part for part in parts if part)


@dataclass
class _Holder:
    text: str
    page: int
    shares: list[Share] = field(default_factory=list)
    share_percentages: list[Decimal | None] = field(default_factory=list)
    stated_total: Decimal | None = None
    stated_percentage: Decimal | None = None
    below_one: bool = False
    changes: list[str] = field(default_factory=list)
    seat_column: list[str] = field(default_factory=list)  # what a "Wohnort / Sitz" column prints beside it


_SumKind = Literal["subtotal", "total", "either"]


@dataclass
class _RowReading:
    """The values of one row."""

    shares: list[Share]
    share_percentages: list[Decimal | None]
    stated_total: Decimal | None  # the row's "total nominal" cell
    stated_percentage: Decimal | None  # the shareholder's percentage in total
    below_one: bool  # "< 1 %" where no number is stated
    # A sum printed under the row's last amount, without a label: the shareholder's ("subtotal"),
    # the list's ("total"), or either, as long as the first shareholder is the only one read.
    trailing_sum: tuple[_SumKind, Decimal] | None
    # An intermediate sum that does not read as the amount and percentage of the row's shares.
    unread_subtotal: str | None = None


@dataclass(frozen=True)
class _Sums:
    list_so_far: Decimal  # what the rows before hold
    holder_so_far: Decimal  # what the rows before hold of this row's shareholder


def extract(table: Table | None) -> ExtractedList:
    """The shareholders of a table; raises parser_error when there is none or it has no rows."""
    if table is None:
        raise JobError(FailureClass.PARSER_ERROR, "no shareholder table found", source="shareholders")
    by_role = _columns_by_role(table)
    rows = _rows(table, by_role)
    holders: list[_Holder] = []
    running_sum = Decimal(0)
    total_from_row: Decimal | None = None
    # A sum under the first shareholder's lines is its subtotal if more shares follow, else the list's.
    undecided: tuple[_Holder, Decimal] | None = None
    unread: list[LowConfidenceCell] = []
    for row in rows:
        holder_text = row.text(by_role[Role.HOLDER] + by_role[Role.DETAIL])
        list_number = LIST_NUMBER.match(holder_text) if not by_role[Role.NUMBER] else None
        if list_number:
            holder_text = holder_text[list_number.end() :]
        holder = _holder_for(holders, holder_text)
        if holder is None:
            holder = _Holder(text=holder_text, page=row.lines[0].page)
            holders.append(holder)
        seat = row.text(by_role[Role.DETAIL])
        if seat:
            holder.seat_column.append(seat)
        sums = _Sums(list_so_far=running_sum, holder_so_far=_nominal(holder))
        reading = _read_row(row, by_role, sums, list_number.group(1) if list_number else None)
        if reading is None:
            continue
        if reading.unread_subtotal is not None:
            unread.append(LowConfidenceCell(page=row.lines[0].page, text=reading.unread_subtotal, confidence=0.0))
        if reading.shares and undecided:
            undecided[0].stated_total = undecided[1]
            undecided = None
        if reading.trailing_sum is not None:
            kind, value = reading.trailing_sum
            if kind == "subtotal":
                holder.stated_total = value
            elif kind == "total":
                total_from_row = value
            else:
                undecided = (holder, value)
        running_sum += sum((s.nominal * (s.count or 1) for s in reading.shares), Decimal(0))
        holder.shares += reading.shares
        holder.share_percentages += reading.share_percentages
        if reading.stated_total is not None:
            holder.stated_total = (holder.stated_total or Decimal(0)) + reading.stated_total
        if holder.stated_percentage is None:
            holder.stated_percentage = reading.stated_percentage
        holder.below_one |= reading.below_one
        changes = row.text(by_role[Role.CHANGES])
        if changes:
            holder.changes.append(changes)
    if undecided:
        total_from_row = undecided[1]
    holders = [h for h in holders if h.shares]
    if not holders:
        raise JobError(FailureClass.PARSER_ERROR, "the shareholder table has no rows", source="shareholders")
    total = _list_total(table) or total_from_row
    shareholders = [_shareholder(holder) for holder in holders]
    shareholders = _restore_dropped_decimal_marks(
        shareholders, total if total is not None else sum((h.nominal_total for h in shareholders), Decimal(0))
    )
    unread += [
        LowConfidenceCell(page=holder.page, text=holder.text, confidence=0.0)
        for holder, shareholder in zip(holders, shareholders, strict=True)
        if shareholder.kind == "organisation" and shareholder.register_number is None and names_register(holder.text)
    ]
    text = " ".join(c.text for line in table.lines for c in line.cells.values())
    currency = currency_in(" ".join(column.heading for column in table.columns) + " " + text)
    return ExtractedList(
        shareholders=shareholders,
        total_nominal=total if total is not None else sum((_nominal(h) for h in holders), Decimal(0)),
        total_stated=total is not None,
        currency=currency,
        low_confidence_cells=table.low_confidence_cells() + unread,
    )


def _restore_dropped_decimal_marks(holders: list[Shareholder], total: Decimal) -> list[Shareholder]:
    """OCR often loses the thin comma in "8,0 %"; where a list prints its percentages with d
    decimals, a whole number that matches the nominal amounts once read with d decimals is read so:
    a shareholder's percentage, and a share row's ("7,5 %" read as "75")."""
    if not total:
        return holders
    stated = [h.percentage for h in holders] + [s.percentage for h in holders for s in h.shares]
    exponents = [p.as_tuple().exponent for p in stated if p is not None]
    places = [-e for e in exponents if isinstance(e, int)]  # not "n" or "F": no list states NaN or infinity
    decimals = max(set(places), key=places.count, default=0)
    if decimals < 1:
        return holders

    def restored(percentage: Decimal | None, nominal: Decimal) -> Decimal | None:
        if percentage is None or percentage.as_tuple().exponent != 0:
            return percentage
        exact = nominal / total * 100
        candidate = percentage.scaleb(-decimals)
        if abs(candidate - exact) <= Decimal(5).scaleb(-decimals - 1) < abs(percentage - exact):
            return candidate
        return percentage

    return [
        holder.model_copy(
            update={
                "percentage": restored(holder.percentage, holder.nominal_total),
                "shares": [
                    share.model_copy(update={"percentage": restored(share.percentage, share.nominal * share.count)})
                    if share.count
                    else share
                    for share in holder.shares
                ],
            }
        )
        for holder in holders
    ]


def _columns_by_role(table: Table) -> dict[Role, list[int]]:
    by_role: dict[Role, list[int]] = {role: [] for role in Role}
    for index, column in enumerate(table.columns):
        for role in column.roles:
            by_role[role].append(index)
    if not by_role[Role.HOLDER]:
        # The widest column without a role of its own names the shareholders.
        free = [i for i, c in enumerate(table.columns) if not c.roles]
        if free:
            by_role[Role.HOLDER].append(max(free, key=lambda i: table.columns[i].x1 - table.columns[i].x0))
        elif by_role[Role.DETAIL]:
            by_role[Role.HOLDER].append(by_role[Role.DETAIL].pop(0))
    return by_role


def _rows(table: Table, by_role: dict[Role, list[int]]) -> list[_Row]:
    holder_columns = [table.columns[i] for i in by_role[Role.HOLDER]]

    def crosses_holder(line: TableLine) -> bool:
        return any(
            min(x1, column.x1) - max(x0, column.x0) >= 0.5 * min(column.x1 - column.x0, 10_000)
            for x0, x1 in line.rules_above
            for column in holder_columns
        )

    # A table that draws rules between its lines (if only beside a merged shareholder cell) starts
    # rows at the rules that cross the shareholder column; one without starts them at running
    # numbers. The rule under a page's heading separates no rows.
    first_on_page = {
        id(line) for index, line in enumerate(table.lines) if not index or line.page != table.lines[index - 1].page
    }
    ruled = any(line.rules_above for line in table.lines if id(line) not in first_on_page)
    rows: list[_Row] = []
    previous_number = ""
    for line in table.lines:
        number_text = " ".join(line.text(c) for c in by_role[Role.NUMBER]) or _list_number(line, by_role)
        starts_number = (
            bool(re.match(r"\s*\d", number_text))
            and not re.search(r"(?:bis|to|-|\u2013|\u2014)\s*$", previous_number)
            and bool(running_numbers_in(without_money(number_text)))
        )
        if previous_number or number_text:
            previous_number = number_text or previous_number
        if ruled:
            new_row = not rows or crosses_holder(line) or id(line) in first_on_page
        else:
            # A number OCR could not read still starts a row where a new shareholder begins.
            unread_number = bool(number_text.strip()) and not starts_number and _begins_holder(line, by_role)
            new_row = not rows or ((starts_number or unread_number) and _has_number(rows[-1], by_role))
        if new_row and rows and not rows[-1].lines:
            new_row = False
        if new_row:
            rows.append(_Row())
        rows[-1].lines.append(line)
    return rows


def _begins_holder(line: TableLine, by_role: dict[Role, list[int]]) -> bool:
    text = " ".join(line.text(c) for c in by_role[Role.HOLDER])
    return len(re.sub(r"\W", "", text)) >= 3 and not CONTINUATION.match(text)


def _has_number(row: _Row, by_role: dict[Role, list[int]]) -> bool:
    return any(line.text(c) for line in row.lines for c in by_role[Role.NUMBER]) or any(
        _list_number(line, by_role) for line in row.lines
    )


LIST_NUMBER = re.compile(r"^\s*(\d{1,4})\.\s+(?=\D)")


def _list_number(line: TableLine, by_role: dict[Role, list[int]]) -> str:
    """In a list without a number column, the entry's number before the shareholder ("1. …")."""
    if by_role[Role.NUMBER] or not by_role[Role.HOLDER]:
        return ""
    match = LIST_NUMBER.match(line.text(by_role[Role.HOLDER][0]))
    return match.group(1) if match else ""


def _read_row(row: _Row, by_role: dict[Role, list[int]], sums: _Sums, list_number: str | None) -> _RowReading | None:
    """A row's cells as values; None for a row without a number or an amount. ``list_number`` is
    the entry's number in a list without a number column."""
    number_columns = by_role[Role.NUMBER]
    nominal_columns = by_role[Role.NOMINAL]
    mixed = set(number_columns) & set(nominal_columns)
    number_text = without_money(row.text(number_columns)) if number_columns else ""
    numbers = running_numbers_in(number_text) or ([(list_number, None)] if list_number else [])
    amount_text, labelled_subtotal = _without_subtotal(row.text(nominal_columns))
    subtotal_text = " ".join(part for part in (row.text(by_role[Role.SUBTOTAL]), labelled_subtotal) if part)
    if not numbers:
        mentions = re.findall(r"(?:l\S{0,2}d\.?\s*)?Nr\.?\s*(\d+(?:\.\d+)*)", amount_text)
        numbers = [(number, None) for number in mentions]
        amount_text = re.sub(r"\((?:[^()]*Nr[^()]*)\)", " ", amount_text)
    amounts = amounts_in(amount_text, need_mark=bool(mixed))
    counts = [int(a) for a in amounts_in(row.text(by_role[Role.COUNT])) if a == int(a)] if by_role[Role.COUNT] else []
    totals = amounts_in(row.text(by_role[Role.NOMINAL_TOTAL]))
    share_pcts: list[Decimal | None] = []
    stated_pct: Decimal | None = None
    below_one = False
    for value, before in percentages_in(row.text(by_role[Role.PERCENT]), bare=True) + percentages_in(amount_text):
        if re.search(r"gesamt|total", before, re.I):
            stated_pct = value
        else:
            share_pcts.append(value)
            below_one |= value is None
    for value, _ in percentages_in(row.text(by_role[Role.PERCENT_TOTAL]), bare=True):
        stated_pct = value if stated_pct is None else stated_pct
        below_one |= value is None
    if not numbers and not amounts and not totals:
        return None
    # An unlabelled sum under the last amount ("EUR 100,00" underlined, then "EUR 25.000,00").
    trailing_sum: tuple[_SumKind, Decimal] | None = None
    if len(amounts) > max(len(numbers), 1) and not totals:
        last, above = amounts[-1], sum(amounts[:-1])
        subtotal = last == sums.holder_so_far + above and len(amounts) + bool(sums.holder_so_far) > 2
        total = last == sums.list_so_far + above
        if subtotal or total:
            kind: _SumKind = "either" if subtotal and total else "subtotal" if subtotal else "total"
            trailing_sum, amounts = (kind, last), amounts[:-1]
    # Amounts beyond the numbers read are shares whose number OCR lost, where the row has one
    # column of amounts and single numbers; elsewhere they are the row's other figures.
    lost_numbers = len(nominal_columns) == 1 and not totals and all(last is None for _, last in numbers)
    shares = _shares(numbers, amounts, counts, totals, per_share="je" in amount_text.lower(), lost_numbers=lost_numbers)
    intermediate = [value for value, _ in percentages_in(subtotal_text)]
    share_pcts = _row_percentages(shares, share_pcts, intermediate)
    share_sums = [share.nominal * (share.count or 0) for share in shares]
    unread_subtotal = (
        subtotal_text
        if subtotal_text.strip() and (len(intermediate) != len(shares) or amounts_in(subtotal_text) != share_sums)
        else None
    )
    shares = [share.model_copy(update={"percentage": pct}) for share, pct in zip(shares, share_pcts, strict=True)]
    return _RowReading(
        shares=shares,
        share_percentages=share_pcts,
        stated_total=totals[0] if totals else None,
        stated_percentage=stated_pct,
        below_one=below_one and stated_pct is None,
        trailing_sum=trailing_sum,
        unread_subtotal=unread_subtotal,
    )


def _row_percentages(
    shares: list[Share], per_share: list[Decimal | None], intermediate: list[Decimal | None]
) -> list[Decimal | None]:
    """The percentage of each share row: its intermediate sum's where the list gives one per row,
    else the one printed beside a single share; a range's per-share percentage says nothing of
    the range."""
    if intermediate and len(intermediate) == len(shares):
        return intermediate
    per_share = (per_share + [None] * len(shares))[: len(shares)]
    return [pct if share.count == 1 else None for share, pct in zip(shares, per_share, strict=True)]


SUBTOTAL_LABEL = re.compile(r"\b(?:Zwischen-?\s?summe|Subtotal|Intermediate\s+sum)\b\s*:?", re.I)


def _without_subtotal(amount_text: str) -> tuple[str, str]:
    """An amount cell's shares apart from the intermediate sum labelled under them
    ("je 1,00 €, Zwischensumme: 6.250,00 € (25 %)")."""
    label = SUBTOTAL_LABEL.search(amount_text)
    if label is None:
        return amount_text, ""
    return amount_text[: label.start()], amount_text[label.end() :]


def _shares(numbers, amounts, counts, totals, *, per_share: bool, lost_numbers: bool) -> list[Share]:
    if not amounts and totals and numbers:
        amounts = [totals[0]]
        per_share = False
    if not numbers:
        numbers = [("", None)] * len(amounts)
    shares = []
    for index, (first, last) in enumerate(numbers):
        if index >= len(amounts):
            break
        share = Share(number=first, last_number=last, nominal=amounts[index])
        count = share.count or 1
        if index < len(counts) and counts[index] > 1 and last is None:
            count = counts[index]
        if (count > 1 and not per_share and len(numbers) == 1 and totals and amounts[index] == totals[0]) or (
            count > 1 and not per_share and not totals and amounts[index] >= count
        ):
            share = share.model_copy(update={"nominal": (amounts[index] / count).quantize(Decimal("0.01"))})
        shares.append(share)
    # Shares whose number OCR lost are kept without a number, which the numbering check reports,
    # rather than dropped from the shareholder's total.
    if lost_numbers:
        shares += [Share(number="", nominal=amount) for amount in amounts[len(numbers) :]]
    return shares


# How the further lines of a shareholder's description begin: never a new shareholder.
CONTINUATION = re.compile(
    r"^\s*(?:geb\.|geboren|born|w[oö]hnhaft|resident|residing|mit\s|Sitz\b|seat\b|with\s|eingetragen|registered|"
    r"Amtsgericht|Registergericht|Local\s+Court|AG\s+[A-ZÄÖÜ]|HR[AB]\b|\(|\d{1,2}\.\s?\d{1,2}\.\s?\d{4}|\d{5}\s|"
    # a foreign register's lines
    r"Handelsregister|Registrierungsnummer|Registernummer|Kamer\s+van|KvK|Companies\s+House|Firmenbuch|FN\s?\d|"
    r"Handelsgericht|R\.\s?C\.\s?S\.|RCS\b|Greffe|unter\s|under\s)",
    re.IGNORECASE,
)


def _holder_for(holders: list[_Holder], text: str) -> _Holder | None:
    """The shareholder a row belongs to: the one before it when it names none or only goes on
    describing it, else one it names again."""
    letters = re.sub(r"[^\w]", "", text.casefold())
    if len(letters) < 3:
        return holders[-1] if holders else None
    if holders and CONTINUATION.match(text):
        holders[-1].text = f"{holders[-1].text}, {text}"
        return holders[-1]
    for holder in holders:
        known = re.sub(r"[^\w]", "", holder.text.casefold())
        if SequenceMatcher(None, known, letters).ratio() >= SAME_HOLDER and _same_dates(holder.text, text):
            return holder
    return None


def _same_dates(a: str, b: str) -> bool:
    first, second = birth_date_in(a)[0], birth_date_in(b)[0]
    return first is None or second is None or first == second


def _list_total(table: Table) -> Decimal | None:
    if table.total_line is None:
        return None
    amounts = [a for cell in table.total_line.cells.values() for a in amounts_in(cell.text) if a > 0]
    return max(amounts) if amounts else None


def _nominal(holder: _Holder) -> Decimal:
    return sum((share.nominal * (share.count or 1) for share in holder.shares), Decimal(0))


def _restore_section_dots(shares: list[Share]) -> list[Share]:
    """OCR loses the dot of a section number now and then ("1.2" read as "12"): among a
    shareholder's sections of share P, a plain number that reads as P followed by the one section
    missing there is that section."""
    sections: dict[str, set[str]] = {}
    for share in shares:
        prefix, dot, section = share.number.rpartition(".")
        if dot and share.last_number is None:
            sections.setdefault(prefix, set()).add(section)
    restored = []
    for share in shares:
        if "." not in share.number and share.last_number is None:
            for prefix, known in sections.items():
                section = share.number.removeprefix(prefix)
                if share.number.startswith(prefix) and section.isdigit() and section not in known:
                    highest = max(int(s) for s in known if s.isdigit()) if known else 0
                    if int(section) <= highest + 1 and section == str(int(section)):
                        share = share.model_copy(update={"number": f"{prefix}.{section}"})
                        known.add(section)
                        break
        restored.append(share)
    return restored


def _shareholder(holder: _Holder) -> Shareholder:
    nominal = holder.stated_total if holder.stated_total is not None else _nominal(holder)
    percentage = holder.stated_percentage
    if percentage is None and holder.share_percentages and all(p is not None for p in holder.share_percentages):
        percentage = sum((p for p in holder.share_percentages if p is not None), Decimal(0))
    common = {
        "changes": " ".join(holder.changes) or None,
        "shares": _restore_section_dots(holder.shares),
        "nominal_total": nominal,
        "percentage": percentage,
        "percentage_below_one": holder.below_one and percentage is None,
    }
    text = holder.text
    if is_organisation(text):
        seat = seat_of(text, ", ".join(holder.seat_column))
        return Shareholder(kind="organisation", name=firm_name(text), seat=seat, **register_of(text), **common)
    birth, match = birth_date_in(text)
    head = text[: match.start()] if match else text
    head = re.sub(r"\b(?:geb\.?|geboren|born)(?:\s+(?:am|on))?\s*$", "", head.strip(" ,;")).strip(" ,;")
    residence = text[match.end() :].strip(" ,;") if match else None
    if residence:
        residence = re.sub(r"^(?:w[oö]hnhaft|resident|residing|Wohnort:?)(?:\s+in)?\s+", "", residence, flags=re.I)
    parts = [p.strip() for p in head.split(",") if p.strip()]
    if len(parts) >= 2:
        last_name, first_name = parts[0], parts[1]
    else:
        first_name, _, last_name = (parts[0] if parts else "").rpartition(" ")
    return Shareholder(
        kind="person",
        name=f"{first_name} {last_name}".strip(),
        first_name=first_name or None,
        last_name=last_name or None,
        birth_date=birth,
        residence=residence or None,
        **common,
    )
