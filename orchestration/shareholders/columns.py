"""What a column holds, told by its heading: tolerant of line breaks, hyphenation, OCR errors and
each notary's wording (German or English)."""

from __future__ import annotations

import re
from difflib import get_close_matches
from enum import StrEnum


class Role(StrEnum):
    NUMBER = "number"  # running numbers of the shares
    HOLDER = "holder"  # name, birth date, residence, or firm, seat, register
    DETAIL = "detail"  # a further column about the holder: residence, seat, birth date, register
    COUNT = "count"  # how many shares ("Stück")
    NOMINAL = "nominal"  # nominal amount per share (or of the share row)
    NOMINAL_TOTAL = "nominal_total"  # the shareholder's total nominal amount
    PERCENT = "percent"  # percentage per share
    PERCENT_TOTAL = "percent_total"  # the shareholder's total percentage
    SUBTOTAL = "subtotal"  # a row's intermediate sum ("Zwischensumme"), its percentage in brackets
    CHANGES = "changes"  # changes and remarks: where shares came from
    IGNORED = "ignored"  # previous numbers


# Columns of free text: kept or skipped as read, never checked, so OCR's doubts there send no list to review.
FREE_TEXT = frozenset({Role.CHANGES, Role.IGNORED})

# Heading words as notaries write them; OCR's misreadings of them are taken for them.
_VOCABULARY = [
    "nennbetrag",
    "nennbetrage",
    "nennbetrages",
    "betrag",
    "summe",
    "summeder",
    "stammeinlage",
    "stammeinlagen",
    "geschaftsanteil",
    "geschaftsanteils",
    "geschaftsanteile",
    "gesellschafter",
    "gesellschafters",
    "beteiligung",
    "prozentuale",
    "prozentualer",
    "prozent",
    "stammkapital",
    "vorname",
    "firma",
    "wohnort",
    "geburtsdatum",
    "insgesamt",
    "laufende",
    "nummer",
    "veranderung",
    "veranderungen",
    "veranderungsspalte",
    "anteil",
    "ubernommenen",
    "zwischensumme",
    "nominalbetrage",
    "gesamtumfang",
]


def normalise(heading: str) -> str:
    """Heading words joined over line breaks and hyphens, lower case, OCR's usual slips undone."""
    text = re.sub(r"(\w)[-\u2010\u00ad]\s+(?=[a-zäöüß])", r"\1", heading)  # "Geschäfts- anteil"
    text = text.lower().replace("ä", "a").replace("ö", "o").replace("ü", "u").replace("ß", "ss")
    text = re.sub(r"[|_\u201a'\"\u201c\u201d\u201e:;!]", " ", text)
    text = text.replace("0", "o").replace("1", "l") if not re.search(r"\d{2}", text) else text
    return " ".join(_known_word(word) for word in text.split())


def _known_word(word: str) -> str:
    if len(word) < 6 or word.strip(".,/()") in _VOCABULARY:
        return word
    bare = word.strip(".,/()")
    match = get_close_matches(bare, _VOCABULARY, n=1, cutoff=0.8)
    if not match:
        return word
    return "summe der" if match[0] == "summeder" else match[0]


_CHANGES = re.compile(r"veranderung|change|bemerkung|remark|anmerkung")
_PREVIOUS = re.compile(r"bisherig|previous|fruher")
_SUBTOTAL = re.compile(r"zwischensumme|subtotal|intermediate")
_PERCENT = re.compile(r"prozent|percent|beteiligung|participation|anteil am\b|quote")
_AMOUNT = re.compile(r"nennbetrag|betrag|stammeinlage|einlage|nominal|\beuro\b|\beur\b|amount")
_NAME = re.compile(r"\bname|firma|vorname|inhaber")
_HOLDER = re.compile(r"\bname|firma|gesellschafter|shareholder|inhaber|vorname")
_DETAIL = re.compile(r"wohnort|sitz|geburt|anschrift|register|residence|seat|address")
_NUMBER = re.compile(r"\blfd|\bl\.?f\.?d|laufende|\bnr\b|\bnr\.|nummer|share no|number|\bno\.")
_COUNT = re.compile(r"(?<!je )\bstuck|anzahl|number of shares")
_TOTAL = re.compile(r"gesamt|insgesamt|total|summe|jedes gesellschafters|des gesellschafters|per shareholder")
_PER_SHARE = re.compile(r"\bje\b|per share|jeweil|des geschaftsanteils am|des nennbetrags|eines geschaftsanteils")


def roles(heading: str) -> set[Role]:
    """The roles of a column by its heading; a heading may name two ("Lfd. Nr. + Nennbetrag")."""
    text = normalise(heading)
    if not text:
        return set()
    named = bool(_NAME.search(text))
    if _CHANGES.search(text) and not named:
        return {Role.CHANGES}
    if _PREVIOUS.search(text) and not named:
        return {Role.IGNORED}
    if _SUBTOTAL.search(text) and not named:
        return {Role.SUBTOTAL}
    if not named and (_PERCENT.search(text) or ("%" in text and not _AMOUNT.search(text))):
        per_share = _PER_SHARE.search(text) and not re.search(r"jedes gesellschafters|per shareholder", text)
        return {Role.PERCENT if per_share or not _TOTAL.search(text) else Role.PERCENT_TOTAL}
    found: set[Role] = set()
    if named or (_HOLDER.search(text) and not _AMOUNT.search(text)):
        found.add(Role.HOLDER)
    elif _DETAIL.search(text) and not _AMOUNT.search(text):
        found.add(Role.DETAIL)
    if _COUNT.search(text):
        found.add(Role.COUNT)
    if _AMOUNT.search(text) or (not found and "geschaftsanteil" in text and not _NUMBER.search(text)):
        total = _TOTAL.search(text) and not _PER_SHARE.search(text)
        found.add(Role.NOMINAL_TOTAL if total else Role.NOMINAL)
    if _NUMBER.search(text) and Role.HOLDER not in found and not re.search(r"register|hr-?nr", text):
        found.add(Role.NUMBER)
    return found


# A line is a heading line when its phrases name at least two different kinds of column.
_KINDS = (_HOLDER, re.compile(f"{_AMOUNT.pattern}|geschaftsanteil"), _NUMBER, _PERCENT, _DETAIL)


def heading_kinds(text: str) -> set[int]:
    normal = normalise(text)
    return {index for index, pattern in enumerate(_KINDS) if pattern.search(normal)}
