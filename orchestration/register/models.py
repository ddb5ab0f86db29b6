"""What the register client hands out: result rows of a search and nodes of the document tree."""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

# The document kinds a result row links to, in the portal's order.
DOCUMENT_KINDS = ("AD", "CD", "HD", "DK", "UT", "VÖ", "SI")
REGISTER_TYPES = ("HRA", "HRB", "GnR", "PR", "VR")


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

    def walk(self) -> Iterator[DocumentNode]:
        yield self
        for child in self.children:
            yield from child.walk()


def walk_nodes(nodes: list[DocumentNode]) -> Iterator[DocumentNode]:
    for node in nodes:
        yield from node.walk()

