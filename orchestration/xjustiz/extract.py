"""The register extract (Auszug) of an SI document: its entries and dates, in one pass.

Same idea as ``participants``: RegisSTAR extracts carry dozens of entries, and one filtered
``iter()`` visits only the elements wanted instead of a lookup per field and entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lxml import etree

from orchestration.xjustiz.values import clean, iso_date, optional_int


@dataclass(frozen=True, slots=True)
class ExtractNames:
    """The element names (Clark notation) of the extract in one XJustiz generation."""

    entry: str
    column: str
    position: str
    number: str
    kind: str
    text: str
    retrieval_date: str
    retrieval_time: str
    last_entry: str


@dataclass(slots=True)
class Extract:
    entries: list[dict] = field(default_factory=list)
    retrieved_at: str | None = None
    last_entry_date: str | None = None


def read_extract(
    auszug: etree._Element | None, names: ExtractNames, entry_kind: Callable[[etree._Element], str | None]
) -> Extract:
    extract = Extract()
    if auszug is None:
        return extract
    numbers = {names.column: "column", names.position: "position", names.number: "number"}
    # Local names: the comparisons below run for every element visited.
    entry_tag, text_tag, kind_tag = names.entry, names.text, names.kind
    date_tag, time_tag = names.retrieval_date, names.retrieval_time
    entry: dict = {}
    day = time = None
    for element in auszug.iter(entry_tag, *numbers, kind_tag, text_tag, date_tag, time_tag, names.last_entry):
        tag = element.tag
        if tag == entry_tag:
            entry = {"column": None, "position": None, "number": None, "kind": None, "text": ""}
            extract.entries.append(entry)
        elif tag in numbers:
            entry[numbers[tag]] = optional_int(element.text, element)
        elif tag == text_tag:
            entry["text"] = clean(element.text) or ""
        elif tag == kind_tag:
            entry["kind"] = entry_kind(element)
        elif tag == date_tag:
            day = iso_date(element.text, element)
        elif tag == time_tag:
            time = clean(element.text)
        else:
            extract.last_entry_date = iso_date(element.text, element)
    extract.retrieved_at = f"{day}T{time}" if day and time else day
    return extract
