"""The register extract (Auszug) of an SI document: its entries and dates, in one pass.

Same idea as ``participants``: RegisSTAR extracts carry dozens of entries, and one ``Selector``
pass reads only the values wanted, in C, instead of a lookup per field and entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from lxml import etree

from orchestration.xjustiz._select import CODED, MARK, TEXT, Selector
from orchestration.xjustiz.values import iso_date, optional_int


@dataclass(frozen=True, slots=True)
class ExtractNames:
    """The element names (Clark notation) of the extract in one XJustiz generation."""

    entry: str
    column: str
    position: str
    number: str
    kind: str
    # The entry kind is the text of this child of ``kind`` (1.x), or else a code (3.x).
    kind_text: str | None
    text: str
    retrieval_date: str
    retrieval_time: str
    last_entry: str


@dataclass(slots=True)
class Extract:
    entries: list[dict] = field(default_factory=list)
    retrieved_at: str | None = None
    last_entry_date: str | None = None


# The fields read_extract selects.
ENTRY, COLUMN, POSITION, NUMBER, KIND, TEXT_FIELD, RETRIEVAL_DATE, RETRIEVAL_TIME, LAST_ENTRY = range(9)
NUMBERS = {COLUMN: "column", POSITION: "position", NUMBER: "number"}


@cache
def _selector(names: ExtractNames) -> Selector:
    kind = {names.kind: (KIND, CODED)} if names.kind_text is None else {(names.kind, names.kind_text): (KIND, TEXT)}
    return Selector({
        names.entry: (ENTRY, MARK),
        names.column: (COLUMN, TEXT),
        names.position: (POSITION, TEXT),
        names.number: (NUMBER, TEXT),
        **kind,
        names.text: (TEXT_FIELD, TEXT),
        names.retrieval_date: (RETRIEVAL_DATE, TEXT),
        names.retrieval_time: (RETRIEVAL_TIME, TEXT),
        names.last_entry: (LAST_ENTRY, TEXT),
    })  # fmt: skip


def read_extract(
    auszug: etree._Element | None, names: ExtractNames, entry_kind: Callable[[tuple], str | None] | None = None
) -> Extract:
    """``entry_kind`` names an entry's kind from its (code, label) in 3.x; 1.x spells it out."""
    extract = Extract()
    if auszug is None:
        return extract
    selector = _selector(names)
    entry: dict = {}
    day = time = None
    for position, (field_, value) in enumerate(selector.select(auszug)):
        if field_ == ENTRY:
            entry = {"column": None, "position": None, "number": None, "kind": None, "text": ""}
            extract.entries.append(entry)
        elif field_ == TEXT_FIELD:
            entry["text"] = value or ""
        elif field_ in NUMBERS:
            entry[NUMBERS[field_]] = optional_int(value, (selector.element_at, auszug, position))
        elif field_ == KIND:
            entry["kind"] = entry_kind(value) if entry_kind else value
        elif field_ == RETRIEVAL_DATE:
            day = iso_date(value, (selector.element_at, auszug, position))
        elif field_ == RETRIEVAL_TIME:
            time = value
        else:
            extract.last_entry_date = iso_date(value, (selector.element_at, auszug, position))
    extract.retrieved_at = f"{day}T{time}" if day and time else day
    return extract
