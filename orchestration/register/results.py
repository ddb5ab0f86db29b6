"""What the register client hands out: result rows of a search and nodes of the document tree."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

# The document kinds a result row links to, in the portal's order.
DOCUMENT_KINDS = ("AD", "CD", "HD", "DK", "UT", "VÖ", "SI")
REGISTER_TYPES = ("HRA", "HRB", "GnR", "PR", "VR")
# What the portal's labels and lists write: 29.10.2024.
GERMAN_DATE = re.compile(r"(\d{1,2})\.(\d{1,2})\.(\d{4})")


def german_date(text: str) -> date | None:
    """The first date written as ``DD.MM.YYYY`` in ``text``."""
    match = GERMAN_DATE.search(text)
    if not match:
        return None
    day, month, year = map(int, match.groups())
    try:
        return date(year, month, day)
    except ValueError:
        return None


class SearchMode(StrEnum):
    """How the portal matches keywords (`schlagwortOptionen`)."""

    ALL = "all"  # every keyword occurs in the name
    ANY = "any"  # at least one keyword occurs
    EXACT = "exact"  # the name is exactly the query; * and ? are wildcards


class EarlierName(BaseModel):
    name: str
    seat: str | None = None


class ResultRow(BaseModel):
    """One company in the portal's result table."""

    state: str = Field(description="Federal state, as the portal shows it.")
    court: str = Field(description='Register court, e.g. "Berlin (Charlottenburg)".')
    court_code: str | None = Field(None, description='XJustiz code of the court, e.g. "F1103".')
    register_type: str
    register_number: str
    register_suffix: str | None = Field(None, description='A letter some courts add, e.g. "B" in "HRB 1234 B".')
    name: str
    seat: str | None = None
    status: str = Field(description='As shown, e.g. "currently registered".')
    documents: list[str] = Field(default_factory=list, description="Document kinds with a link (AD, CD, DK, SI…).")
    earlier_names: list[EarlierName] = Field(default_factory=list)

    @property
    def register_designation(self) -> str:
        """ "HRB 1234 B": type, number and suffix as the register writes them."""
        parts = [self.register_type, self.register_number, self.register_suffix or ""]
        return " ".join(p for p in parts if p)

    def same_entry(self, other: ResultRow) -> bool:
        return (self.court, self.register_type, self.register_number, self.register_suffix) == (
            other.court,
            other.register_type,
            other.register_number,
            other.register_suffix,
        )


class DocumentNode(BaseModel):
    """A node of the DK tree (document view): a folder or a document."""

    row_key: str = Field(description='PrimeFaces row key, e.g. "0_1"; addresses the node within its tree.')
    label: str
    kind: Literal["folder", "document"]
    children: list[DocumentNode] = Field(default_factory=list)

    @property
    def is_shareholder_list(self) -> bool:
        return self.kind == "document" and self.label.casefold().startswith("liste der gesellschafter")

    @property
    def date(self) -> date | None:
        """The date in the label, e.g. "… Aufnahme in den Registerordner am 29.10.2024"."""
        return german_date(self.label)

    def walk(self) -> Iterator[DocumentNode]:
        yield self
        for child in self.children:
            yield from child.walk()


def walk_nodes(nodes: list[DocumentNode]) -> Iterator[DocumentNode]:
    for node in nodes:
        yield from node.walk()


def documents_with_folders(nodes: list[DocumentNode]) -> list[tuple[DocumentNode, list[str]]]:
    """Every document of a tree with the labels of the folders above it, in tree order."""
    found: list[tuple[DocumentNode, list[str]]] = []

    def visit(node: DocumentNode, path: list[str]) -> None:
        if node.kind == "document":
            found.append((node, path))
        for child in node.children:
            visit(child, [*path, node.label])

    for node in nodes:
        visit(node, [])
    return found


class Download(BaseModel):
    """A file the register sent: its bytes, media type and the name the portal gave it."""

    content: bytes
    media_type: str
    filename: str


ANNOUNCEMENT_CATEGORIES = {
    "1": "Löschungsankündigung",
    "2": "Registerbekanntmachung nach dem Umwandlungsgesetz",
    "3": "Einreichung neuer Dokumente",
    "4": "Sonstige Registerbekanntmachung",
    "5": "Sonderregisterbekanntmachung OHNE Bezug zum elektr. Register",
}


class Announcement(BaseModel):
    """A register announcement (Registerbekanntmachung) as the results list shows it."""

    id: str = Field(description="The portal's id of the announcement.")
    published: date
    category: str = Field(description="As shown, e.g. 'Einreichung neuer Dokumente'.")
    category_code: str | None = Field(None, description="1 … 5, the value of the category filter.")
    state: str
    court: str
    register_type: str | None = None
    register_number: str | None = None
    register_suffix: str | None = None
    name: str
    seat: str | None = None
    portal_date: str = Field("", description="The date as the announcement's link passes it back to the portal.")


class AnnouncementDetail(BaseModel):
    """The page of one announcement."""

    published: date | None
    court_line: str
    category: str
    entered: date | None = Field(None, description="Eintragungsdatum; absent from Löschungsankündigungen.")
    name: str
    legal_form: str | None = None
    seat: str | None = None
    text: str
