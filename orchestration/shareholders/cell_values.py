"""Cell text into values: German (and English) amounts, percentages, running numbers, legal forms,
registers, birth dates."""

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
PERCENT = re.compile(
    r"(?P<below><\s*1\s*%)|(?<![\d.,])(?P<value>\d{1,3}(?:[.,]\d{1,4})?)\s*(?P<star>\*)?\s*%\s*(?P<star2>\*)?"
)
BARE_PERCENT = re.compile(
    r"(?P<below><\s*1)|(?<![\d.,])(?P<value>\d{1,3}(?:[.,]\d{1,4})?)(?P<star>\s*\*)?(?![\d.,]*\d)"
)
_NUMBER = r"\d{1,3}(?:\.\d{3})+|\d+(?:\.\d+)*"
RANGE = re.compile(
    rf"(?<![\d.,])(?P<first>{_NUMBER})\s*(?:-|\u2013|\u2014|bis|to|until)\s*(?P<last>{_NUMBER})(?![\d,])", re.I
)
SINGLE = re.compile(rf"(?<![\d.,])(?P<first>{_NUMBER})\.?(?![\d,])")
BIRTH = re.compile(r"(?P<day>\d{1,2})\.\s?(?P<month>\d{1,2})\.\s?(?P<year>(?:19|20)\d{2})")

LEGAL_FORM = re.compile(
    r"(?<![\w])(?:g?GmbH|mbH|AG|SE|KG|KGaA|OHG|oHG|UG|eG|e\.\s?V\.|e\.\s?K\.|GbR|PartG(?:mbB)?|Stiftung|Verein|"
    r"Genossenschaft|Gesellschaft|Ltd\.?|Limited|LLC|LLP|Inc\.?|Corp\.?|Corporation|plc|B\.?\s?V\.?|N\.\s?V\.|"
    r"S\.\s?(?:à|a|ä)\s?r\.\s?l\.|S\.?A\.?R\.?L\.?|SARL|S\.\s?A\.|S\.\s?A\.\s?S\.|SAS|S\.\s?p\.\s?A\.|S\.\s?r\.\s?l\.|"
    r"A/S|ApS|AB|Oy|GesmbH|Holding|& Co\.)(?![\w])"
    # Firms named by their kind of company ("Aktiengesellschaft"), and public bodies, which hold
    # shares of municipal companies without any legal-form abbreviation.
    r"|\w*(?:gesellschaft|genossenschaft|stiftung|verband|verein)\b|"
    r"\b(?:Stadt|Gemeinde|Landkreis|Freistaat|Land|Bundesrepublik|Landeshauptstadt|Hansestadt|"
    r"Zweckverband|Anstalt|Körperschaft|Sparkasse|Kirchengemeinde|Universität|Hochschule|Kammer)\s+[A-ZÄÖÜ]"
)
# Where an organisation's firm ends: its seat, its register, a following place after a comma.
FIRM_END = re.compile(
    r"\s*,?\s*(?:\(|\b)(?:mit\s+(?:dem\s+)?Sitz|Sitz\b|with\s+(?:its\s+)?(?:registered\s+)?seat|registered\s+(?:with|in|at)|"
    r"seat\b|eingetragen|Amtsgericht|AG\s+\w+\s+(?:HR[AB]|VR|GnR)|Registergericht|(?:HRA|HRB|VR|GnR|PR)\s*\d|"
    r"R\.?\s?C\.?\s?S\.?|Companies\s+Registration|Handelsregister|Register)",
    re.I,
)
REGISTER = re.compile(
    r"(?:(?:Amtsgericht|AG|Registergericht|Local\s+Court(?:\s+of)?)\s+(?P<court>[A-ZÄÖÜ][\w\-]+(?:\s+(?:am|an\s+der|in|im|a\.\s?M\.|\([\w\s]+\))(?:\s+[A-ZÄÖÜ][\w\-]+)?)?)"
    r"[\s,\u2013\u2014-]*(?:unter\s+)?)?"
    r"(?P<type>HRA|HRB|VR|GnR|PR)\s*(?P<number>\d[\d.]*(?:\s+[A-Z]{1,2}\b)?)"
)
FOREIGN_REGISTER = re.compile(
    r"(?P<name>R\.?\s?C\.?\s?S\.?\s+\w+|Companies\s+Registration\s+Office|Kamer\s+van\s+Koophandel|KvK)"
    r"[^\d]{0,40}?(?P<number>[A-Z]?\s?\d[\d\s]{2,})",
    re.I,
)
SEAT = re.compile(
    r"(?:mit\s+(?:dem\s+)?Sitz\s+(?:in\s+)?|Sitz:?\s+(?:in\s+)?|with\s+(?:its\s+)?(?:registered\s+)?(?:seat|office)\s+(?:in\s+)?|"
    r"(?:registered\s+)?(?:seat|office):?\s+(?:in\s+)?)"
    r"(?P<place>[A-ZÄÖÜ][\w\-]+(?:\s+(?:am|an\s+der|in|im|a\.\s?M\.|bei)\s+[A-ZÄÖÜ][\w\-]+|\s+\([\w\s]+\))?)"
)


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
    """OCR's letters for digits in a cell of numbers: a lone "I", "l" or "|" is a 1, an "O" between
    digits a 0."""
    text = re.sub(r"(?<![\w.,])[Il|](?![\w])", "1", text)
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
    found = []
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
    text = re.sub(r"(?<=\d)\s*(?:-|\u2013|\u2014)\s*$", " -", digits_mended(text))
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


def is_organisation(text: str) -> bool:
    return bool(LEGAL_FORM.search(text) or REGISTER.search(text) or FOREIGN_REGISTER.search(text))


# OCR's readings of the Luxembourg "S.à r.l." (German models know no "à"): "S.ä r.l.", "S.a rr.l.".
_SARL = re.compile(r"\bS\.\s?[àaäá]\s?r{1,2}\s?\.\s?l\s?\.", re.IGNORECASE)


def firm_name(text: str) -> str:
    """The firm of an organisation: up to its seat or register, or the comma after its legal form."""
    text = _SARL.sub("S.à r.l.", text)
    end = FIRM_END.search(text)
    head = text[: end.start()] if end and end.start() > 0 else text
    forms = list(LEGAL_FORM.finditer(head))
    if forms:
        after = head[forms[-1].end() :]
        if "," in after:
            head = head[: forms[-1].end() + after.index(",")]
    return head.strip(" ,;/")


def seat_of(text: str) -> str | None:
    match = SEAT.search(text)
    if match:
        return match.group("place")
    after_comma = re.search(r",\s*(?P<place>[A-ZÄÖÜ][\w\-]+)\s*(?:\(|$|,)", text)
    return after_comma.group("place") if after_comma else None


def register_of(text: str) -> dict:
    """Register court, type and number; a foreign register by its name and number."""
    match = REGISTER.search(text)
    if match:
        return {
            "register_court": match.group("court"),
            "register_type": match.group("type"),
            "register_number": re.sub(r"\.", "", match.group("number")).strip(),
        }
    foreign = FOREIGN_REGISTER.search(text)
    if foreign:
        return {
            "register_court": re.sub(r"\s+", " ", foreign.group("name")).strip(),
            "register_type": None,
            "register_number": re.sub(r"\s+", "", foreign.group("number")),
        }
    return {}


def birth_date_in(text: str) -> tuple[date | None, re.Match | None]:
    match = BIRTH.search(text)
    if not match:
        return None, None
    try:
        return date(int(match.group("year")), int(match.group("month")), int(match.group("day"))), match
    except ValueError:
        return None, match
