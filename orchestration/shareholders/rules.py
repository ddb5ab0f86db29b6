"""Rule-based extraction of the standard table layouts of a Gesellschafterliste.

The text comes line by line, from a PDF text layer or OCR, so a table row is one line: running
number (or a range "1 bis 12.500"), shareholder description, nominal amounts, percentages and a
changes column. A shareholder's description may run over several lines, beside further share
rows; a description line continues the current shareholder while it adds what that shareholder
still lacks (birth date, residence, seat, register), and otherwise starts the next one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from orchestration.failures import FailureClass, JobError
from orchestration.shareholders.model import ExtractedList, Share, Shareholder

_NUMBER = r"\d+(?:[.:,]\d+)*"
# Amounts carry decimals or thousands separators, so a register or house number is never one.
_AMOUNT = r"\d{1,3}(?:[.,']\d{3})*[.,]\d{2}(?!\d)|\d{1,3}(?:[.,']\d{3})+(?![\d.,])"
_PERCENT = r"<\s*1\s*%|\d{1,3}(?:[.,]\d{1,4})?\s*%"
_CURRENCY = r"(?:EUR|€|DM|USD|CHF|GBP)"

ROW = re.compile(
    rf"^(?P<first>{_NUMBER})(?:\s*(?:bis|to|-)\.?\s*(?P<last>{_NUMBER}))?\s+(?P<rest>.*)$", re.IGNORECASE
)
TAIL = re.compile(
    rf"(?:^|\s)(?P<each>(?:je|each|à)\s+)?(?P<amount1>{_AMOUNT})(?:\s*{_CURRENCY})?"
    rf"(?:\s+(?P<amount2>{_AMOUNT})(?:\s*{_CURRENCY})?)?"
    # After the percentages the changes column may say anything ("Teilung von Nr. 3"); without
    # percentages only words may follow, so a number in a description is not taken for an amount.
    rf"(?:\s+(?P<percent1>{_PERCENT})(?:\s+(?P<percent2>{_PERCENT}))?(?:\s+.*)?|(?:\s+[^\d%]*)?)$",
    re.IGNORECASE,
)
HEADER = re.compile(r"Nennbetrag|Nennwert|Nominal\s+(?:amount|value)", re.IGNORECASE)
SUM = re.compile(
    rf"^(?:Summe|Gesamtsumme|Gesamt|Total|Stammkapital|Share capital)\b\D*(?P<amount>{_AMOUNT})", re.IGNORECASE
)
PAGE_FOOTER = re.compile(r"^(?:Seite|Page)\s*\d+|^\d+\s*/\s*\d+$", re.IGNORECASE)
CURRENCY = re.compile(rf"(?<![A-Za-z]){_CURRENCY}(?![A-Za-z])")

BIRTH = re.compile(
    r"(?:geb\.?|geboren(?:\s+am)?|born(?:\s+on)?)?\s*(?P<day>\d{1,2})\.\s?(?P<month>\d{1,2})\.\s?(?P<year>\d{4})",
    re.IGNORECASE,
)
RESIDENCE = re.compile(
    r"(?:wohnhaft(?:\s+in)?|resident\s+in|residing\s+in|Wohnort\s*:?)\s*(?P<place>[^,]+)", re.IGNORECASE
)
# OCR reads the colon of "Sitz:" as "!" or ";" now and then.
SEAT = re.compile(
    r"(?:mit\s+)?\b(?:Sitz|seat|registered\s+office)\b\s*(?:[:;!.]|\s+in\b)?\s*(?P<place>[^,]+)", re.IGNORECASE
)
COURT = re.compile(
    r"(?:Amtsgericht|Registergericht|Local\s+Court(?:\s+of)?|register\s+court)\s*:?\s*"
    r"(?P<court>[^,]+?)(?=\s*(?:,|\b(?:HRA|HRB|GnR|PR|VR)\b|$))",
    re.IGNORECASE,
)
REGISTER = re.compile(r"\b(?P<type>HRA|HRB|GnR|PR|VR)\s*(?P<number>\d+)(?:\s+(?P<suffix>[A-Z]{1,2})\b)?")
LEGAL_FORM = re.compile(
    r"\b(?:GmbH|mbH|AG|SE|KG|KGaA|OHG|UG|eG|e\.\s?V\.|GbR|PartG|Stiftung|Ltd\.?|Limited|LLC|Inc\.?|B\.V\.|S\.A\.)(?!\w)"
)


@dataclass
class _Row:
    share: Share
    share_percentage: str | None
    holder_percentage: str | None


@dataclass
class _Draft:
    """A shareholder while its lines are being collected."""

    lines: list[str] = field(default_factory=list)
    rows: list[_Row] = field(default_factory=list)

    @property
    def text(self) -> str:
        return ", ".join(self.lines)


def extract(pages: list[str]) -> ExtractedList:
    """Shareholders of a list from the text of its pages; raises parser_error for no table."""
    lines = [_clean(line) for page in pages for line in page.splitlines()]
    table = _Table()
    for line in lines:
        if line and not table.done:
            table.feed(line)
    if not table.drafts:
        raise JobError(
            FailureClass.PARSER_ERROR,
            "no shareholder table found" if not table.seen_header else "the shareholder table has no rows",
            source="shareholders",
        )
    holders = [_shareholder(draft) for draft in table.drafts]
    total = table.total if table.total is not None else sum((h.nominal_total for h in holders), Decimal(0))
    if total:
        holders = _restore_dropped_decimal_marks(holders, total)
    return ExtractedList(shareholders=holders, total_nominal=total, currency=table.currency)


def _restore_dropped_decimal_marks(holders: list[Shareholder], total: Decimal) -> list[Shareholder]:
    """OCR often loses the thin comma in "7,0 %"; where a list prints its percentages with d decimals,
    a whole number that matches the nominal amounts once read with d decimals is read so."""
    places = [-h.percentage.as_tuple().exponent for h in holders if h.percentage is not None]
    decimals = max(set(places), key=places.count, default=0)
    if decimals < 1:
        return holders
    restored = []
    for holder in holders:
        if holder.percentage is not None and holder.percentage.as_tuple().exponent == 0:
            exact = holder.nominal_total / total * 100
            candidate = holder.percentage.scaleb(-decimals)
            if abs(candidate - exact) <= Decimal(5).scaleb(-decimals - 1) < abs(holder.percentage - exact):
                holder = holder.model_copy(update={"percentage": candidate})
        restored.append(holder)
    return restored


def _clean(line: str) -> str:
    line = line.replace("|", " ").replace("\u2013", "-").replace("\u2014", "-").replace("\u00a0", " ")
    # Specks on a scan come out as lone dots, commas and quotes between the columns.
    line = re.sub(r"(?<!\S)[.,:;'\"_\u201a\u201c\u201d\u201e\u2018\u2019]+(?!\S)", " ", line)
    line = re.sub(r"(?<=\d)[.,:;'](?=\s*%|\s|$)", "", line)  # or stuck to the end of a number
    return re.sub(r"\s+", " ", line).strip(" _")


class _Table:
    """Reads lines in order: before the header, in a header, in rows, after the sum line."""

    def __init__(self) -> None:
        self.seen_header = False
        self.in_header = False
        self.done = False
        self.drafts: list[_Draft] = []
        self.total: Decimal | None = None
        self.currency: str | None = None

    def feed(self, line: str) -> None:
        if HEADER.search(line):
            self.seen_header = self.in_header = True
            self._note_currency(line)
            return
        if not self.seen_header or PAGE_FOOTER.match(line):
            return
        if match := SUM.match(line):
            self.total = parse_amount(match.group("amount"))
            self._note_currency(line)
            self.done = True
            return
        row = _parse_row(line)
        if row is None and self.drafts and not self.in_header:
            row = self._row_with_lost_number(line)
        if row is None:
            if not self.in_header and self.drafts:
                self.drafts[-1].lines.append(line)
            else:
                self._note_currency(line)
            return
        self.in_header = False
        share_row, description = row
        if not self.drafts or (description and not _continues(self.drafts[-1], description)):
            self.drafts.append(_Draft())
        draft = self.drafts[-1]
        if description:
            draft.lines.append(description)
        draft.rows.append(share_row)

    def _row_with_lost_number(self, line: str) -> tuple[_Row, str] | None:
        """A line with amounts and percentages is a share row even when OCR lost or garbled its
        running number ("Z" for 7, "-" for 4): it then continues the plain numbering."""
        last = self.drafts[-1].rows[-1].share
        previous = last.last_number or last.number
        if not previous.isdigit():
            return None  # after section numbers (3.1, 3.2) the next number cannot be inferred
        rest = re.sub(r"^[^\d\s]{1,2}\s+", "", line)
        row = _parse_row(f"{int(previous) + 1} {rest}")
        return row if row is not None and row[0].share_percentage else None

    def _note_currency(self, line: str) -> None:
        if self.currency is None and (match := CURRENCY.search(line)):
            self.currency = "EUR" if match.group(0) == "€" else match.group(0)


def _parse_row(line: str) -> tuple[_Row, str] | None:
    """A share row and the description text in it, or None for any other line."""
    match = ROW.match(line)
    if not match:
        return None
    tail = TAIL.search(match.group("rest"))
    if not tail:
        return None
    first = _running_number(match.group("first"))
    last = _running_number(match.group("last")) if match.group("last") else None
    description = match.group("rest")[: tail.start()].strip(" ,;")
    amounts = [parse_amount(tail.group(key)) for key in ("amount1", "amount2") if tail.group(key)]
    share = Share(number=first, last_number=last, nominal=amounts[0])
    count = share.count or 1
    if len(amounts) == 2:
        if amounts[0] * count != amounts[1]:
            return None  # two numbers that are not "each" and "total": not a row we understand
    elif count > 1 and not tail.group("each"):
        # A range with one amount: the row's total, shared equally.
        share = share.model_copy(update={"nominal": (amounts[0] / count).quantize(Decimal("0.01"))})
    percentages = [tail.group(key) for key in ("percent1", "percent2") if tail.group(key)]
    return (
        _Row(
            share=share,
            share_percentage=percentages[0] if percentages else None,
            holder_percentage=percentages[1] if len(percentages) == 2 else None,
        ),
        description,
    )


def _running_number(text: str) -> str:
    """ "12.500" is twelve thousand five hundred; "1.1" (or OCR's "1:1") is a section number."""
    if re.fullmatch(r"\d{1,3}(?:[.,]\d{3})+", text):
        return re.sub(r"\D", "", text)
    return re.sub(r"[:,]", ".", text)


def parse_amount(text: str) -> Decimal:
    """A nominal amount in German or English notation: "12.500,00", "12,500.00", "1.000"."""
    digits = re.sub(r"[^\d.,]", "", text)
    match = re.fullmatch(r"(?P<whole>[\d.,]*?)(?:[.,](?P<cents>\d{2}))?", digits)
    if not match or not match.group("whole"):
        raise ValueError(f"not an amount: {text!r}")
    whole = re.sub(r"\D", "", match.group("whole"))
    return Decimal(f"{whole}.{match.group('cents') or '00'}")


def parse_percentage(text: str) -> Decimal | None:
    """The stated percentage with its printed precision, or None for "< 1 %"."""
    if "<" in text:
        return None
    return Decimal(re.sub(r"[^\d.,]", "", text).replace(",", "."))


def _continues(draft: _Draft, line: str) -> bool:
    """Whether a description line on a further share row still describes the current shareholder."""
    known = draft.text
    organisation = bool(LEGAL_FORM.search(known) or SEAT.search(known) or REGISTER.search(known))
    if LEGAL_FORM.search(line):
        return False  # a firm's name starts the next shareholder
    if SEAT.search(line):
        return organisation and not SEAT.search(known)
    if COURT.search(line) or REGISTER.search(line):
        return organisation and not REGISTER.search(known)
    if RESIDENCE.search(line):
        return not organisation and not RESIDENCE.search(known)
    if BIRTH.search(line) and "," not in line:
        return not organisation and not BIRTH.search(known)
    if "," in line:
        return False  # "Last, First" starts the next shareholder
    # A bare place: the residence of a person whose birth date came last.
    return not organisation and bool(BIRTH.search(known)) and not RESIDENCE.search(known) and len(draft.lines) < 3


def _shareholder(draft: _Draft) -> Shareholder:
    text = draft.text
    shares = [row.share for row in draft.rows]
    nominal_total = sum((share.nominal * (share.count or 1) for share in shares), Decimal(0))
    percentage, below_one = _holder_percentage(draft.rows)
    common = {"shares": shares, "nominal_total": nominal_total, "percentage": percentage,
              "percentage_below_one": below_one}
    if LEGAL_FORM.search(text) or SEAT.search(text) or REGISTER.search(text):
        return _organisation(text, common)
    return _person(draft.lines, common)


def _holder_percentage(rows: list[_Row]) -> tuple[Decimal | None, bool]:
    """The shareholder's total column, else the sum of the per-share percentages."""
    stated = rows[0].holder_percentage
    if stated is None and len(rows) == 1:
        stated = rows[0].share_percentage
    if stated is not None:
        value = parse_percentage(stated)
        return value, value is None
    shares = [parse_percentage(row.share_percentage) if row.share_percentage else None for row in rows]
    if any(value is None for value in shares):
        return None, False
    return sum(shares, Decimal(0)), False


def _organisation(text: str, common: dict) -> Shareholder:
    markers = [m.start() for m in (SEAT.search(text), COURT.search(text), REGISTER.search(text)) if m]
    name = text[: min(markers)] if markers else text
    seat = SEAT.search(text)
    court = COURT.search(text)
    register = REGISTER.search(text)
    number = None
    if register:
        number = register.group("number") + (f" {register.group('suffix')}" if register.group("suffix") else "")
    return Shareholder(
        kind="organisation",
        name=name.strip(" ,;"),
        seat=seat.group("place").strip() if seat else None,
        register_court=court.group("court").strip() if court else None,
        register_type=register.group("type") if register else None,
        register_number=number,
        **common,
    )


def _person(lines: list[str], common: dict) -> Shareholder:
    text = ", ".join(lines)
    birth = BIRTH.search(text)
    residence = RESIDENCE.search(text)
    markers = [match.start() for match in (birth, residence) if match]
    segments = [part.strip() for part in text[: min(markers, default=len(text))].split(",") if part.strip()]
    if len(segments) >= 2:
        last_name, first_name = segments[0], segments[1]
    else:
        first_name, _, last_name = (segments[0] if segments else "").rpartition(" ")
    birth_date = None
    if birth:
        try:
            birth_date = date(int(birth.group("year")), int(birth.group("month")), int(birth.group("day")))
        except ValueError:
            birth_date = None
    place = residence.group("place") if residence else None
    if place is None and birth:
        after = text[birth.end():].strip(" ,;").split(",")[0].strip()
        place = after or None
    return Shareholder(
        kind="person",
        name=f"{first_name} {last_name}".strip(),
        first_name=first_name or None,
        last_name=last_name or None,
        birth_date=birth_date,
        residence=place.strip() if place else None,
        **common,
    )
