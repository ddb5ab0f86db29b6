"""The register extract (Auszug) of an SI document: its entries and dates, in one pass.

Same idea as ``participants``: RegisSTAR extracts carry dozens of entries, and one pass over
the elements named reads them as one record per entry, instead of a lookup per field and entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lxml import etree

from orchestration.xjustiz.xml_values import child_text, clean, code_and_label, descend, iso_date, optional_int


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtractNames:
    """The element names (Clark notation) of the extract in one XJustiz generation."""

    entry: str
    column: str
    position: str
    number: str
    kind: str
    # The entry kind is the text of this child of ``kind`` (1.x), or else a code (3.x).
    kind_text: str | None = None
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
    auszug: etree._Element | None, names: ExtractNames, entry_kind: Callable[[tuple], str | None] | None = None
) -> Extract:
    """``entry_kind`` names an entry's kind from its (code, label) in 3.x; 1.x spells it out.

    Each field of an entry is the first value found in it that is not blank."""
    extract = Extract()
    if auszug is None:
        return extract
    entry_tag, column, position, number, kind_tag, text = (
        names.entry,
        names.column,
        names.position,
        names.number,
        names.kind,
        names.text,
    )
    coded = names.kind_text is None
    kind_value = kind_tag if names.kind_text is None else names.kind_text
    entries: list[list] = []  # [entry, column, position, number, kind, text] as read
    # Keyed by tag, which lxml's stubs type as any tag name it accepts (bytes, QName) though it reads str.
    slots: dict[object, int] = {column: 1, position: 2, number: 3, text: 5}
    entry: list | None = None
    for element in auszug.iterdescendants(entry_tag, column, position, number, kind_value, text):
        tag = element.tag
        if tag == entry_tag:
            entry = [element, None, None, None, None, None]
            entries.append(entry)
            continue
        if entry is None:
            continue
        if tag == kind_value:
            if entry[4] is None:
                if coded:
                    entry[4] = code_and_label(element)
                elif (parent := element.getparent()) is not None and parent.tag == kind_tag:
                    entry[4] = clean(element.text)
            continue
        slot = slots[tag]
        if entry[slot] is None:
            entry[slot] = clean(element.text)
    for element, column_text, position_text, number_text, kind, entry_text in entries:
        extract.entries.append(
            {
                "column": optional_int(column_text, (descend, element, column)),
                "position": optional_int(position_text, (descend, element, position)),
                "number": optional_int(number_text, (descend, element, number)),
                "kind": entry_kind(kind) if entry_kind and kind is not None else kind,
                "text": entry_text or "",
            }
        )
    day = iso_date(child_text(auszug, names.retrieval_date), (descend, auszug, names.retrieval_date))
    time = child_text(auszug, names.retrieval_time)
    extract.retrieved_at = f"{day}T{time}" if day and time else day
    extract.last_entry_date = iso_date(child_text(auszug, names.last_entry), (descend, auszug, names.last_entry))
    return extract
