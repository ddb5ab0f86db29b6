"""Checks of an extracted list against GmbHG §40 and GesLV; a failed check is reported, never raised."""

from __future__ import annotations

import itertools
import re
from decimal import Decimal

from orchestration.shareholders.firms import legal_form_in, register_in
from orchestration.shareholders.shareholder_list import (
    RUNNING_NUMBER_PATTERN,
    Check,
    ExtractedList,
    Share,
    Shareholder,
    StatedShareholder,
    Validation,
)

HUNDRED = Decimal(100)
# GesLV §4: percentages may be rounded (half up) to one decimal, but never down to 0, 25 or 50 %.
NO_ROUNDING_DOWN_TO = (Decimal(0), Decimal(25), Decimal(50))
# How a register number looks in its country: German courts' (with the court's suffix, "12345 B"),
# the SIREN of a French R.C.S., a Dutch KvK number, a Companies House number, Luxembourg's R.C.S.,
# Austria's Firmenbuch, the Swiss UID, Ireland's CRO. Elsewhere any number is taken as read.
REGISTER_NUMBER_FORMATS = {
    "DE": r"\d{1,6}(?: [A-Z]{1,3})?",
    "FR": r"\d{9}",
    "NL": r"\d{8}",
    "GB": r"\d{8}|[A-Z]{2}\d{6}",
    "LU": r"B\d{1,6}",
    "AT": r"FN\d{1,6}[a-z]",
    "CH": r"CHE-?\d{3}\.\d{3}\.\d{3}",
    "IE": r"\d{4,6}",
}


def validate(extracted: ExtractedList, capital: Decimal | None = None) -> Validation:
    """Run every check; ``capital`` is the nominal capital from the parsed register data, if known."""
    return Validation(
        checks=[
            _shares_numbered(extracted),
            _numbers_contiguous(extracted),
            _share_totals(extracted),
            _nominal_sum_matches_total(extracted),
            _nominal_sum_matches_capital(extracted, capital),
            _percentages_sum_to_100(extracted),
            _percentages_match_nominal(extracted, capital),
            _share_percentages_match_nominal(extracted, capital),
            _kinds_match(extracted),
            _registers_well_formed(extracted),
            _seats_read(extracted),
            _amounts_confirmed(extracted, capital),
            _read_confidently(extracted),
        ]
    )


def _amounts_confirmed(extracted: ExtractedList, capital: Decimal | None) -> Check:
    """The amounts read are confirmed by a figure read apart from them: the registered capital, the
    list's sum line, or the percentages of several shareholders (a sole shareholder's 100 % says
    nothing about the amount)."""
    name = "amounts_confirmed"
    stated = [h for h in extracted.shareholders if not h.percentage_derived and h.percentage is not None]
    if capital is not None or len(stated) > 1 or extracted.total_stated:
        return _passed(name, "the nominal amounts are confirmed by the capital, the sum line or the percentages")
    return _failed(name, ["nothing but the amounts themselves confirms what was read"])


def _read_confidently(extracted: ExtractedList) -> Check:
    name = "read_confidently"
    if extracted.low_confidence_cells:
        cells = "; ".join(
            f"page {c.page}: {c.text!r} ({c.confidence:.0f})" for c in extracted.low_confidence_cells[:10]
        )
        return _failed(
            name,
            [f"{len(extracted.low_confidence_cells)} cells read with low confidence or lookalike letters: {cells}"],
        )
    return _passed(name, "every cell that carries a value was read with confidence")


def _passed(name: str, message: str) -> Check:
    return Check(name=name, status="passed", message=message)


def _failed(name: str, problems: list[str]) -> Check:
    return Check(name=name, status="failed", message="; ".join(problems))


def _skipped(name: str, message: str) -> Check:
    return Check(name=name, status="skipped", message=message)


def _nominal_sum(extracted: ExtractedList) -> Decimal:
    return sum((holder.nominal_total for holder in extracted.shareholders), Decimal(0))


def _shares_numbered(extracted: ExtractedList) -> Check:
    name = "shares_numbered"
    problems: list[str] = []
    # Numbers as (section prefix, first, last) so ranges over 1 € shares need no expansion.
    intervals: dict[tuple[str, ...], list[tuple[int, int, str]]] = {}
    for holder in extracted.shareholders:
        if not holder.shares:
            problems.append(f"{holder.name} holds no numbered share")
        depths = {share.number.count(".") for share in holder.shares}
        if len(depths) > 1:
            # "3.1, 3.2, 33": a section number whose dot was lost reads as a plain number.
            problems.append(f"the shares of {holder.name} mix section numbers and plain numbers")
        for share in holder.shares:
            label = _share_label(share)
            numbers = [share.number] + ([share.last_number] if share.last_number else [])
            if not all(re.match(RUNNING_NUMBER_PATTERN, number) for number in numbers):
                problems.append(f"share {label!r} of {holder.name} has no valid running number")
                continue
            if share.count is None or share.count < 1:
                problems.append(f"range {label} of {holder.name} cannot be counted")
                continue
            *prefix, first = share.number.split(".")
            intervals.setdefault(tuple(prefix), []).append((int(first), int(first) + share.count - 1, label))
    for spans in intervals.values():
        spans.sort()
        for (_, end, label), (start, _, next_label) in itertools.pairwise(spans):
            if start <= end:
                problems.append(f"running numbers of {label} and {next_label} overlap")
    if problems:
        return _failed(name, problems)
    return _passed(name, "every share has its own running number")


def _numbers_contiguous(extracted: ExtractedList) -> Check:
    """The running numbers run from 1 without a gap, and so do the sections of a divided share
    (3.1, 3.2): a gap is a share not read or a number misread ("15" as "48", "1.1" as "441").
    A list may show a gap where shares were withdrawn or merged; a person looks at it then."""
    name = "numbers_contiguous"
    spans: dict[tuple[str, ...], list[tuple[int, int]]] = {}
    for holder in extracted.shareholders:
        for share in holder.shares:
            if not re.match(RUNNING_NUMBER_PATTERN, share.number) or share.count is None or share.count < 1:
                continue  # reported by shares_numbered
            *prefix, first = share.number.split(".")
            spans.setdefault(tuple(prefix), []).append((int(first), int(first) + share.count - 1))
            for depth in range(len(prefix)):
                number = int(prefix[depth])
                spans.setdefault(tuple(prefix[:depth]), []).append((number, number))
    problems = []
    for stem, numbers in sorted(spans.items()):
        expected = 1
        for start, end in sorted(numbers):
            if start > expected:
                first, last = (".".join([*stem, str(n)]) for n in (expected, start - 1))
                problems.append(
                    f"running number {first} is missing"
                    if first == last
                    else f"running numbers {first} to {last} are missing"
                )
            expected = max(expected, end + 1)
    if problems:
        return _failed(name, problems)
    return _passed(name, "the running numbers run from 1 without a gap")


def _share_totals(extracted: ExtractedList) -> Check:
    name = "share_totals"
    problems = []
    for holder in extracted.shareholders:
        if any(share.count is None for share in holder.shares):
            continue  # reported by shares_numbered
        shares_sum = sum(
            (share.nominal * share.count for share in holder.shares if share.count is not None), Decimal(0)
        )
        if shares_sum != holder.nominal_total:
            problems.append(f"shares of {holder.name} add up to {shares_sum}, not {holder.nominal_total}")
    if problems:
        return _failed(name, problems)
    return _passed(name, "each shareholder's shares add up to the shareholder's nominal total")


def _nominal_sum_matches_total(extracted: ExtractedList) -> Check:
    name = "nominal_sum_matches_total"
    if extracted.total_nominal is None:
        return _skipped(name, "the list states no total")
    total = _nominal_sum(extracted)
    if total != extracted.total_nominal:
        return _failed(name, [f"shareholders hold {total}, the list's total is {extracted.total_nominal}"])
    return _passed(name, f"shareholders hold the list's total of {total}")


def _nominal_sum_matches_capital(extracted: ExtractedList, capital: Decimal | None) -> Check:
    name = "nominal_sum_matches_capital"
    if capital is None:
        return _skipped(name, "no capital known from the register")
    total = _nominal_sum(extracted)
    if total != capital:
        return _failed(name, [f"shareholders hold {total}, the registered capital is {capital}"])
    return _passed(name, f"shareholders hold the registered capital of {capital}")


def _rounding_tolerance(stated: Decimal) -> Decimal:
    """Half a unit of the stated precision, at most one decimal (GesLV §4 allows no coarser rounding)."""
    exponent = stated.as_tuple().exponent
    places = max(-exponent if isinstance(exponent, int) and exponent < 0 else 0, 1)
    return Decimal(5).scaleb(-(places + 1))


def _stated_range(holder: Shareholder) -> tuple[Decimal, Decimal] | None:
    """The exact percentages a stated value allows, or None when the list states none."""
    if holder.percentage_below_one:
        return Decimal(0), Decimal(1)
    if holder.percentage is None:
        return None
    tolerance = _rounding_tolerance(holder.percentage)
    return holder.percentage - tolerance, holder.percentage + tolerance


def _percentages_sum_to_100(extracted: ExtractedList) -> Check:
    name = "percentages_sum_to_100"
    if extracted.shareholders and all(holder.percentage_derived for holder in extracted.shareholders):
        return _skipped(name, "the list states no percentages (lists before 2018 need not)")
    ranges = [_stated_range(holder) for holder in extracted.shareholders]
    missing = [holder.name for holder, bounds in zip(extracted.shareholders, ranges) if bounds is None]
    if missing:
        return _failed(name, [f"no percentage stated for {', '.join(missing)}"])
    stated = [bounds for bounds in ranges if bounds is not None]  # all of them, none is missing
    if not stated:
        return _failed(name, ["the list names no shareholder"])
    low = sum((bounds[0] for bounds in stated), Decimal(0))
    high = sum((bounds[1] for bounds in stated), Decimal(0))
    if not low <= HUNDRED <= high:
        return _failed(name, [f"stated percentages allow a sum of {low}–{high} %, not 100 %"])
    return _passed(name, f"stated percentages sum to 100 % within rounding ({low}–{high} %)")


def _percentages_match_nominal(extracted: ExtractedList, capital: Decimal | None) -> Check:
    name = "percentages_match_nominal"
    base = capital or extracted.total_nominal or _nominal_sum(extracted)
    if not base:
        return _skipped(name, "no capital to compare with")
    problems = []
    for holder in extracted.shareholders:
        if holder.percentage_derived:
            continue
        exact = holder.nominal_total / base * HUNDRED
        if holder.percentage_below_one:
            if exact >= 1:
                problems.append(f"{holder.name} holds {exact:.4f} %, stated as < 1 %")
            continue
        if holder.percentage is None:
            continue  # reported by percentages_sum_to_100
        if abs(exact - holder.percentage) > _rounding_tolerance(holder.percentage):
            problems.append(f"{holder.name} holds {exact:.4f} %, stated as {holder.percentage} %")
        elif holder.percentage in NO_ROUNDING_DOWN_TO and exact > holder.percentage:
            problems.append(f"{holder.name} holds {exact:.4f} %, rounded down to {holder.percentage} %")
    if problems:
        return _failed(name, problems)
    return _passed(name, "each stated percentage matches the nominal amounts")


def _share_percentages_match_nominal(extracted: ExtractedList, capital: Decimal | None) -> Check:
    """A share row's stated percentage (a single share's, a range's intermediate sum) matches its
    nominal amount: a range's percentage is never the shareholder's."""
    name = "share_percentages_match_nominal"
    base = capital or extracted.total_nominal or _nominal_sum(extracted)
    stated = [
        (h, s, s.percentage) for h in extracted.shareholders for s in h.shares if s.percentage is not None and s.count
    ]
    if not stated or not base:
        return _skipped(name, "no share row states a percentage of its own")
    # A list that gives share rows percentages gives every row one, or "< 1 %" where it is below
    # one: any other row without one is a cell not read.
    problems = [
        f"shares {_share_label(s)} of {h.name} ({_share_percentage(s, base):.2f} %) state no percentage"
        for h in extracted.shareholders
        for s in h.shares
        if s.percentage is None and s.count and _share_percentage(s, base) >= 1
    ]
    for holder, share, percentage in stated:
        exact = _share_percentage(share, base)
        if abs(exact - percentage) > _rounding_tolerance(percentage):
            problems.append(
                f"shares {_share_label(share)} of {holder.name} are {exact:.4f} %, stated as {percentage} %"
            )
    if problems:
        return _failed(name, problems)
    return _passed(name, "each share row's stated percentage matches its nominal amount")


def _share_percentage(share: Share, base: Decimal) -> Decimal:
    """The exact share of the capital ``base`` a share row holds, in percent; its shares are counted."""
    assert share.count is not None
    return share.nominal * share.count / base * HUNDRED


def _share_label(share: Share) -> str:
    return share.number if share.last_number is None else f"{share.number} bis {share.last_number}"


def _registers_well_formed(extracted: ExtractedList) -> Check:
    """An organisation's register is read whole: with its number, of its country's form (a cell
    that names a register the reader could not read is a cell read with no confidence)."""
    name = "registers_well_formed"
    problems = []
    for position, holder in enumerate(extracted.shareholders, 1):
        if holder.kind != "organisation":
            continue
        number, country = holder.register_number, holder.register_country
        if number is None and (holder.register_court or holder.register_type):
            problems.append(f"the register of shareholder {position} is read without its number")
        elif number is not None and country in REGISTER_NUMBER_FORMATS:
            if not re.fullmatch(REGISTER_NUMBER_FORMATS[country], number):
                problems.append(
                    f"register number {number!r} of shareholder {position} is not of the form used in {country}"
                )
            elif country == "DE" and holder.register_type is None:
                problems.append(f"the German register of shareholder {position} is read without its type (HRA, HRB, …)")
            elif country == "DE" and holder.register_court is None:
                # A German register number says nothing without its court.
                problems.append(f"the German register of shareholder {position} is read without its court")
    if problems:
        return _failed(name, problems)
    return _passed(name, "each organisation's register is read whole")


def _seats_read(extracted: ExtractedList) -> Check:
    """Every organisation's seat is read: a list names a firm with its seat (GmbHG §40), so one
    without is a seat printed where the reader did not find it."""
    name = "seats_read"
    problems = [
        f"the seat of shareholder {position} is not read"
        for position, holder in enumerate(extracted.shareholders, 1)
        if holder.kind == "organisation" and not holder.seat
    ]
    if problems:
        return _failed(name, problems)
    return _passed(name, "each organisation's seat is read")


def holder_kinds(holder: StatedShareholder) -> set[str]:
    """The kinds what is recorded of a shareholder fits: a person has a birth date, or a residence
    and no legal form; an organisation has a legal form, a seat or a register."""
    text = " ".join(part for part in (holder.name, holder.residence) if part)
    legal_form = legal_form_in(text)
    register = bool(holder.register_court or holder.register_number) or register_in(text)
    kinds = set()
    if holder.birth_date is not None or (holder.residence and not legal_form):
        kinds.add("person")
    if legal_form or holder.seat or register:
        kinds.add("organisation")
    return kinds


def _kinds_match(extracted: ExtractedList) -> Check:
    name = "kinds_match"
    problems = []
    for position, holder in enumerate(extracted.shareholders, 1):
        kinds = holder_kinds(holder)
        if kinds != {holder.kind}:
            reads_as = " and ".join(sorted(kinds)) or "neither person nor organisation"
            problems.append(f"shareholder {position} is recorded as {holder.kind}; what is read fits {reads_as}")
    if problems:
        return _failed(name, problems)
    return _passed(name, "each shareholder's kind fits what its cell holds")
