"""The register extract (Auszug) of an SI document: its entries and dates, in one pass.

Same idea as ``participants``: RegisSTAR extracts carry dozens of entries, and one ``Selector``
pass reads them as one record per entry, in C, instead of a lookup per field and entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from lxml import etree

from orchestration.xjustiz._select import CODED, ELEMENT, TEXT, Selector
from orchestration.xjustiz.values import child_text, descend, iso_date, optional_int


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


# The fields of an entry: slots of one record per entry.
ENTRY, COLUMN, POSITION, NUMBER, KIND, TEXT_FIELD, WIDTH = range(7)


@cache
def _selector(names: ExtractNames) -> Selector:
    kind = {names.kind: (KIND, CODED)} if names.kind_text is None else {(names.kind, names.kind_text): (KIND, TEXT)}
    return Selector({
        names.entry: (ENTRY, ELEMENT),
        names.column: (COLUMN, TEXT),
        names.position: (POSITION, TEXT),
        names.number: (NUMBER, TEXT),
        **kind,
        names.text: (TEXT_FIELD, TEXT),
    })  # fmt: skip


def read_extract(
    auszug: etree._Element | None, names: ExtractNames, entry_kind: Callable[[tuple], str | None] | None = None
) -> Extract:
    """``entry_kind`` names an entry's kind from its (code, label) in 3.x; 1.x spells it out."""
    extract = Extract()
    if auszug is None:
        return extract
    for record in _selector(names).records(auszug, ENTRY, WIDTH):
        element, kind = record[ENTRY], record[KIND]
        extract.entries.append({
            "column": optional_int(record[COLUMN], (descend, element, names.column)),
            "position": optional_int(record[POSITION], (descend, element, names.position)),
            "number": optional_int(record[NUMBER], (descend, element, names.number)),
            "kind": entry_kind(kind) if entry_kind and kind is not None else kind,
            "text": record[TEXT_FIELD] or "",
        })  # fmt: skip
    day = iso_date(child_text(auszug, names.retrieval_date), (descend, auszug, names.retrieval_date))
    time = child_text(auszug, names.retrieval_time)
    extract.retrieved_at = f"{day}T{time}" if day and time else day
    extract.last_entry_date = iso_date(child_text(auszug, names.last_entry), (descend, auszug, names.last_entry))
    return extract
