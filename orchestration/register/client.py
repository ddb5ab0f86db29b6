"""The register client interface: what discovery and downloads need from the register.

One implementation exists, `PortalClient`, which speaks the portal's protocol over HTTP; the
sample register imitates that protocol, so the same client talks to both.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any

from orchestration.register.results import (
    Announcement,
    AnnouncementDetail,
    DocumentNode,
    Download,
    ResultRow,
    SearchMode,
)


@dataclass(frozen=True)
class SearchCriteria:
    """What an advanced search asks for: up to ``max_results`` rows on at most ``max_pages``
    result pages (one retrieval each); ``court`` is a court code or name."""

    query: str
    mode: SearchMode = SearchMode.ALL
    register_type: str | None = None
    court: str | None = None
    register_number: str | None = None
    include_deleted: bool = False
    max_results: int = 10
    max_pages: int = 1


class RegisterClient(ABC):
    """Search the register and fetch a company's documents.

    Every call may raise `orchestration.runtime.failures.JobError`: transient classes (``timeout``,
    ``dependency_unavailable``) for network errors, timeouts, 5xx, 429 and the portal's
    rate-limit page; ``parser_error`` when a page does not look as expected; ``invalid_file``
    (code ``portal_message``) when the portal refuses a request with a message on its page. A
    search without hits returns an empty list.
    """

    # How many rows the register reported for the last search, on all its pages together.
    total_results: int = 0

    def search(self, query: str, mode: SearchMode | str = SearchMode.ALL, **criteria: Any) -> list[ResultRow]:
        """Result rows of the advanced search; ``criteria`` are the other fields of ``SearchCriteria``."""
        return self.run_search(SearchCriteria(query, SearchMode(mode), **criteria))

    @abstractmethod
    def run_search(self, criteria: SearchCriteria) -> list[ResultRow]:
        """Result rows of the advanced search for ``criteria``."""

    @abstractmethod
    def download(self, row: ResultRow, kind: str) -> Download:
        """A document a row links to: AD, CD, HD (PDF printouts), SI (XJustiz XML), UT or VÖ (pages)."""

    @abstractmethod
    def download_si(self, row: ResultRow) -> tuple[bytes, str]:
        """The SI document (XJustiz XML) of a row and the filename the portal gave it."""

    @abstractmethod
    def list_documents(
        self, row: ResultRow, expand: Callable[[DocumentNode], bool] | None = None
    ) -> list[DocumentNode]:
        """The DK tree of a row with every folder expanded, or only those ``expand`` accepts (each
        expansion is a retrieval); folders left closed have no children."""

    @abstractmethod
    def download_document(self, row: ResultRow, node: DocumentNode) -> Download:
        """A document of the DK tree as the portal sends it: the original (PDF, TIFF) or a ZIP
        where the portal offers only that."""

    @abstractmethod
    def search_announcements(
        self,
        date_from: date,
        date_to: date,
        *,
        state: str | None = None,
        court: str | None = None,
        category: str | None = None,
        seat: str | None = None,
    ) -> list[Announcement]:
        """Register announcements published in a date range; ``category`` is "1" … "5"."""

    @abstractmethod
    def announcement_detail(self, announcement: Announcement) -> AnnouncementDetail:
        """The page of one announcement."""

    @abstractmethod
    def close(self) -> None:
        """Release connections; the client must not be used afterwards."""

    def __enter__(self) -> RegisterClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
