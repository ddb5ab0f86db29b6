"""Cell text into values: German (and English) amounts, percentages, running numbers, birth dates."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal, InvalidOperation

CURRENCY_WORDS = {"EUR": "EUR", "€": "EUR", "EURO": "EUR", "DM": "DEM", "USD": "USD", "CHF": "CHF", "GBP": "GBP"}
_CURRENCY = r"(?:EUR|Euro|€|DM|USD|CHF|GBP)"
# 12.500,00 · 12.500,-- · 12.500,- · 12.500 · 1,00 · 1 · 12,500.00 (English lists)
_CENTS = r"(?:,\d{1,2}|,[-\u2013\u2014]{1,2})?"
_AMOUNT_BODY = "|".join(
    (
        r"\d{1,3}(?:,\d{3})+\.\d{2}",  # 12,500.00
        r"\d+\.\d{2}(?!\d)",  # 125.00
        rf"\d{{1,3}}(?:[.'\u2019]\d{{3}})+{_CENTS}",  # 12.500,00
        rf"\d+{_CENTS}",  # 1,00 or 25000
    )
)
AMOUNT = re.compile(
    rf"(?P<pre>{_CURRENCY}\s*)?(?<![\d.,])(?P<body>{_AMOUNT_BODY})(?![\d]|[.,]\d)(?P<post>\s*{_CURRENCY}(?![A-Za-z]))?",
    re.IGNORECASE,
)
# "12,5 %", "12,5.%" (a speck before the sign), "< 1 %"
PERCENT = re.compile(
    r"(?P<below><\s*1\s*%)|(?<![\d.,])(?P<value>\d{1,3}(?:[.,]\d{1,4})?)[.,]?\s*(?P<star>\*)?\s*%\s*(?P<star2>\*)?"
)
BARE_PERCENT = re.compile(
    r"(?P<below><\s*1)|(?<![\d.,])(?P<value>\d{1,3}(?:[.,]\d{1,4})?)(?P<star>\s*\*)?(?![\d.,]*\d)"
)
_NUMBER = r"\d{1,3}(?:\.\d{3})+|\d+(?:\.\d+)*"
# "1 – 6.250", "1 bis 25.000", "1 bis.25.000" (a speck after the word read as a dot)
RANGE = re.compile(
    rf"(?<![\d.,])(?P<first>{_NUMBER})\s*(?:-|\u2013|\u2014|(?:bis|to|until)[.,]?)\s*(?P<last>{_NUMBER})(?![\d,])", re.I
)
SINGLE = re.compile(rf"(?<![\d.,])(?P<first>{_NUMBER})\.?(?![\d,])")
BIRTH = re.compile(r"(?P<day>\d{1,2})\.\s?(?P<month>\d{1,2})\.\s?(?P<year>(?:19|20)\d{2})")


def parse_amount(text: str) -> Decimal:
    """A nominal amount: "12.500,00", "12.500,--", "EUR 1", "12,500.00"; raises ValueError."""
    match = AMOUNT.search(text)
    if not match:
        raise ValueError(f"not an amount: {text!r}")
    return _amount_value(match.group("body"))


def _amount_value(body: str) -> Decimal:
    body = re.sub(r"[-\u2013\u2014]+$", "00", body.replace("'", ".").replace("\u2019", ".").replace(" ", "."))
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d{2})?|\d+\.\d{2}", body):  # English notation
        return Decimal(body.replace(",", ""))
    whole, _, cents = body.partition(",")
    return Decimal(f"{whole.replace('.', '')}.{(cents or '00').ljust(2, '0')}")


def digits_mended(text: str) -> str:
    """OCR's letters for digits in a cell of numbers: a lone "I", "l" or "|" is a 1, a lone "T" a 7,
    an "O" between digits a 0."""
    text = re.sub(r"(?<![\w.,])[Il|](?![\w])", "1", text)
    text = re.sub(r"(?<![\w.,])T(?![\w])", "7", text)
    return re.sub(r"(?<=\d)[Oo](?=[\d.,])|(?<=[\d.,])[Oo](?=\d)", "0", text)


def _marked(match: re.Match) -> bool:
    """An amount that shows it is money: a currency or decimals."""
    return bool(match.group("pre") or match.group("post") or "," in match.group("body"))


def without_money(text: str) -> str:
    """A cell without its money amounts, so a "Lfd. Nr. + Nennbetrag" cell yields its numbers."""
    return AMOUNT.sub(lambda match: " " if _marked(match) else match.group(0), digits_mended(text))


def amounts_in(text: str, *, need_mark: bool = False) -> list[Decimal]:
    """Every amount in a cell, except percentages; with ``need_mark`` only amounts that show they
    are money (a currency or decimals), for cells that also hold running numbers."""
    text = digits_mended(text)
    values = []
    for match in AMOUNT.finditer(text):
        after = text[match.end() : match.end() + 3]
        if "%" in after.split(")")[0] or re.match(r"\s*%", after):
            continue
        if need_mark and not _marked(match):
            continue
        try:
            values.append(_amount_value(match.group("body")))
        except InvalidOperation:
            continue
    return values


def currency_in(text: str) -> str | None:
    match = re.search(r"(?<![A-Za-z])(EUR|Euro|€|DM|USD|CHF|GBP)(?![A-Za-z])", text, re.IGNORECASE)
    return CURRENCY_WORDS[match.group(1).upper()] if match else None


def percentages_in(text: str, *, bare: bool = False) -> list[tuple[Decimal | None, str]]:
    """Percentages of a cell as (value or None for "< 1 %", the text around it); ``bare`` for
    columns headed "in %", whose numbers carry no sign."""
    pattern = BARE_PERCENT if bare and "%" not in text else PERCENT
    found: list[tuple[Decimal | None, str]] = []
    for match in pattern.finditer(text):
        if match.group("below"):
            found.append((None, text[max(0, match.start() - 20) : match.start()]))
        else:
            found.append(
                (Decimal(match.group("value").replace(",", ".")), text[max(0, match.start() - 20) : match.start()])
            )
    return found


def running_number(text: str) -> str:
    """ "12.500" is twelve thousand five hundred; "1.1" is a section number."""
    if re.fullmatch(r"\d{1,3}(?:\.\d{3})+", text):
        return text.replace(".", "")
    return text


def running_numbers_in(text: str) -> list[tuple[str, str | None]]:
    """Running numbers and ranges of a cell, in order: ("1", None), ("1", "25000")."""
    # OCR reads a section number's dot as a colon now and then ("1:2")
    text = re.sub(r"(?<=\d):(?=\d)", ".", digits_mended(text))
    text = re.sub(r"(?<=\d)\s*(?:-|\u2013|\u2014)\s*$", " -", text)
    found: list[tuple[int, str, str | None]] = []
    taken: list[tuple[int, int]] = []
    for match in RANGE.finditer(text):
        found.append((match.start(), running_number(match.group("first")), running_number(match.group("last"))))
        taken.append(match.span())
    for match in SINGLE.finditer(text):
        if any(start <= match.start() < end for start, end in taken):
            continue
        found.append((match.start(), running_number(match.group("first")), None))
    return [(first, last) for _, first, last in sorted(found)]


def birth_date_in(text: str) -> tuple[date | None, re.Match | None]:
    match = BIRTH.search(text)
    if not match:
        return None, None
    try:
        return date(int(match.group("year")), int(match.group("month")), int(match.group("day"))), match
    except ValueError:
        return None, match
