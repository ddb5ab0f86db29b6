"""The register client over HTTP, following the portal's JSF/PrimeFaces flow.

start page → navigation form ("advanced search") → search form `schlagwoerter`… → result table →
document links posted with their ids (SI: a download; DK: the document tree, expanded and
selected through PrimeFaces partial AJAX requests, then the download button). Further result
pages are PrimeFaces DataTable page requests (AJAX) on the result table.

The live portal and the sample register are driven by this same code; only the base URL differs.
Each retrieval takes a token of the shared rate limit first: every request that returns register
content (a result page, a document, a view of the document tree). The start page and the
navigation to the search form carry no register data and take none, so a search of one result
page costs one retrieval. The client keeps one portal session (cookies and the current views)
and is not thread-safe.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar
from urllib.parse import unquote, urlencode

import httpx
from lxml import etree

from orchestration.failures import FailureClass, JobError
from orchestration.register import errors, pages
from orchestration.register.client import RegisterClient
from orchestration.register.errors import PageStructureError
from orchestration.register.models import DocumentNode, ResultRow, SearchMode, walk_nodes
from orchestration.register.ratelimit import SharedRateLimiter

log = logging.getLogger(__name__)

T = TypeVar("T")

_FORM_HEADERS = {"Content-Type": "application/x-www-form-urlencoded"}
_AJAX_HEADERS = {**_FORM_HEADERS, "Faces-Request": "partial/ajax", "X-Requested-With": "XMLHttpRequest"}
_PORTAL_MAX_PAGE = 100
_FILENAME_UTF8 = re.compile(r"filename\*\s*=\s*UTF-8''([^;]+)", re.IGNORECASE)
_FILENAME = re.compile(r'filename\s*=\s*"?([^";]+)"?', re.IGNORECASE)


@dataclass
class _Page:
    url: str
    content: bytes
    doc: object  # lxml document


@dataclass
class _OpenTree:
    """The DK view of one row in this session: the tree as loaded so far."""

    row: ResultRow
    tree: pages.DocumentTree
    expanded: set[str] = field(default_factory=set)


class PortalClient(RegisterClient):
    def __init__(
        self,
        base_url: str,
        *,
        diagnostics_dir: Path,
        rate_limiter: SharedRateLimiter | None = None,
        timeout_s: float = 30.0,
        session_idle_s: float = 600.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.diagnostics_dir = diagnostics_dir
        self.rate_limiter = rate_limiter
        # The portal drops idle sessions; after this long, views of this client count as gone.
        self.session_idle_s = session_idle_s
        self._last_request = 0.0
        self._http = httpx.Client(
            follow_redirects=True,
            timeout=timeout_s,
            headers={"Accept-Language": "de-DE,de;q=0.9,en;q=0.8", "User-Agent": "handelsregister-orchestration"},
        )
        self._page: _Page | None = None
        self._results: list[pages.ResultEntry] = []
        self._results_form: pages.Form | None = None
        self._tree: _OpenTree | None = None

    def close(self) -> None:
        self._http.close()

    def _forget_stale_session(self) -> None:
        """Start afresh when the portal has probably expired this client's session."""
        if self._page is not None and time.monotonic() - self._last_request > self.session_idle_s:
            log.info("register session idle for more than %.0f s; starting a new one", self.session_idle_s)
            self._http.cookies.clear()
            self._page, self._results, self._results_form, self._tree = None, [], None, None

    # ------------------------------------------------------------------------- HTTP

    def _request(
        self,
        method: str,
        url: str,
        what: str,
        *,
        data: list[tuple[str, str]] | None = None,
        headers: dict | None = None,
        retrieval: bool = True,
    ) -> httpx.Response:
        """One request; a retrieval takes a token of the shared rate limit first. Form fields are
        sent in page order, repeated names included, as a browser does."""
        if self.rate_limiter is not None and retrieval:
            self.rate_limiter.acquire(what)
        log.debug("%s %s (%s)", method, url, what)
        content = urlencode(data) if data is not None else None
        if content is not None:
            headers = headers or _FORM_HEADERS
        try:
            response = self._http.request(method, url, content=content, headers=headers)
        except httpx.HTTPError as exc:
            raise errors.network_error(exc, what) from exc
        finally:
            self._last_request = time.monotonic()
        if response.status_code >= 400:
            raise errors.status_error(response, what)
        return response

    def _unexpected(self, content: bytes, what: str, exc: PageStructureError) -> JobError:
        """A response that does not fit the flow: the portal's rate-limit page, or a parser error."""
        try:
            rate_limited = pages.is_rate_limit_page(pages.parse_page(content))
        except (PageStructureError, etree.ParserError):
            rate_limited = False
        if rate_limited:
            return errors.rate_limited_error(what)
        return errors.parser_error(self.diagnostics_dir, content, what, exc)

    def _read(self, content: bytes, what: str, read: Callable[[object], T]) -> T:
        try:
            return read(pages.parse_page(content))
        except PageStructureError as exc:
            raise self._unexpected(content, what, exc) from exc

    def _load_page(self, method: str, url: str, what: str, data=None, *, retrieval: bool = True) -> _Page:
        response = self._request(method, url, what, data=data, retrieval=retrieval)
        page = _Page(str(response.url), response.content, self._read(response.content, what, lambda doc: doc))
        self._page = page
        return page

    def _partial(self, url: str, payload: list[tuple[str, str]], what: str, read: Callable[[pages.PartialResponse], T]) -> T:
        """Post a PrimeFaces AJAX request and apply ``read`` to its partial response."""
        response = self._request("POST", url, what, data=payload, headers=_AJAX_HEADERS)
        try:
            return read(pages.parse_partial_response(response.content))
        except PageStructureError as exc:
            raise self._unexpected(response.content, what, exc) from exc

    def _download(self, url: str, payload: list[tuple[str, str]], what: str) -> tuple[bytes, str, str]:
        response = self._request("POST", url, what, data=payload)
        disposition = response.headers.get("content-disposition", "")
        if "attachment" not in disposition.lower():
            exc = PageStructureError(f"expected a download, got {response.headers.get('content-type')!r}")
            raise self._unexpected(response.content, what, exc)
        filename = _filename(disposition)
        media_type = response.headers.get("content-type", "application/octet-stream").split(";")[0].strip()
        return response.content, media_type, filename

    # ------------------------------------------------------------------------- search

    def _open_search_form(self) -> pages.SearchForm:
        what = "open the advanced search"
        if self._page is None or not _offers_navigation(self._page):
            # No page yet, or one without navigation (an error page, say): start a new session.
            self._http.cookies.clear()
            self._load_page("GET", self.base_url + "/", "open the start page", retrieval=False)
        start = self._page
        form, params = self._read(start.content, what, lambda doc: pages.navigation_to_advanced_search(doc, start.url))
        page = self._load_page("POST", form.action, what, data=form.payload(params), retrieval=False)
        return self._read(page.content, what, lambda doc: pages.parse_search_form(doc, page.url))

    def search(
        self,
        query: str,
        mode: SearchMode | str = SearchMode.ALL,
        *,
        register_type: str | None = None,
        court: str | None = None,
        register_number: str | None = None,
        include_deleted: bool = False,
        max_results: int = 10,
        max_pages: int = 1,
    ) -> list[ResultRow]:
        mode = SearchMode(mode)
        self._forget_stale_session()
        form = self._open_search_form()
        fields = {
            form.keywords_field: query,
            form.mode_field: form.mode_values[mode],
            form.register_number_field: register_number or "",
            form.results_per_page_field: str(_page_size(form.results_per_page, max_results)),
            form.submit_field: "",
        }
        if register_type:
            if register_type not in form.register_types and register_type not in form.register_types.values():
                raise ValueError(f"the register has no register type {register_type!r}")
            fields[form.register_type_field] = form.register_types.get(register_type, register_type)
        if court:
            fields[form.court_field] = form.court_value(court)
        if include_deleted:
            fields[form.include_deleted_field] = "on"
        what = f"search {query!r}"
        drop = frozenset() if include_deleted else frozenset({form.include_deleted_field})
        page = self._load_page("POST", form.form.action, what, data=form.form.payload(fields, drop=drop))
        self._results = self._read(page.content, what, lambda doc: pages.parse_results(doc, form.court_codes))
        self._results_form = (
            self._read(page.content, what, lambda doc: pages.form_by_id(doc, self._results[0].form_id, page.url))
            if self._results
            else None
        )
        table = self._read(page.content, what, pages.parse_result_table) if self._results else None
        self.total_results = table.row_count if table else 0
        for _ in range(max_pages - 1):
            if table is None or len(self._results) >= min(max_results, table.row_count):
                break
            self._next_result_page(table, form.court_codes, what)
        rows = [entry.row for entry in self._results[:max_results]]
        log.info("search %r (%s): %d of %d rows", query, mode.value, len(rows), self.total_results)
        return rows

    def _next_result_page(self, table: pages.ResultTable, court_codes: dict[str, str], what: str) -> None:
        """The next page of the result table, as PrimeFaces' DataTable paginator requests it."""
        form = self._results_form
        first = len(self._results)
        payload = form.payload(
            {
                "javax.faces.partial.ajax": "true",
                "javax.faces.source": table.table_id,
                "javax.faces.partial.execute": table.table_id,
                "javax.faces.partial.render": table.table_id,
                f"{table.table_id}_pagination": "true",
                f"{table.table_id}_first": str(first),
                f"{table.table_id}_rows": str(table.rows_per_page),
                f"{table.table_id}_skipChildren": "true",
                f"{table.table_id}_encodeFeature": "true",
            }
        )
        what = f"{what}, rows from {first + 1}"
        response = self._partial(form.action, payload, what, lambda r: r)
        try:
            entries = pages.parse_result_rows(response.updates.get(table.table_id, ""), court_codes)
        except PageStructureError as exc:
            raise self._unexpected(response.updates.get(table.table_id, "").encode(), what, exc) from exc
        if response.view_state:
            self._results_form = form.with_view_state(response.view_state)
        self._results.extend(entries)
        if not entries:
            table.row_count = first  # the portal has no more rows than it served
    def _entry_for(self, row: ResultRow) -> pages.ResultEntry:
        """The row in this session's result table, searching for it by register number if need be."""
        for entry in self._results:
            if entry.row.same_entry(row):
                return entry
        self.search(
            "",
            register_type=row.register_type,
            court=row.court_code or row.court,
            register_number=row.register_number,
            include_deleted=True,
            max_results=_PORTAL_MAX_PAGE,
        )
        for entry in self._results:
            if entry.row.same_entry(row):
                return entry
        raise JobError(
            FailureClass.DEPENDENCY_UNAVAILABLE,
            f"{row.court} {row.register_designation} is not in the register's results",
            source=errors.SOURCE,
            code="not_found",
        )

    def _document_link(self, row: ResultRow, kind: str) -> tuple[pages.Form, dict[str, str]]:
        self._forget_stale_session()
        entry = self._entry_for(row)
        if kind not in entry.links:
            raise JobError(
                FailureClass.INVALID_FILE,
                f"{row.court} {row.register_designation} offers no {kind} document",
                source=errors.SOURCE,
                code="no_document",
            )
        return self._results_form, entry.links[kind]

    # ------------------------------------------------------------------------- SI

    def download_si(self, row: ResultRow) -> tuple[bytes, str]:
        form, link = self._document_link(row, "SI")
        what = f"download SI of {row.court} {row.register_designation}"
        content, _media_type, filename = self._download(form.action, form.payload(link), what)
        try:
            etree.fromstring(content)
        except etree.XMLSyntaxError as exc:
            raise errors.truncated_error(what, str(exc)) from exc
        return content, filename

    # ------------------------------------------------------------------------- DK tree

    def _open_tree(self, row: ResultRow) -> _OpenTree:
        self._forget_stale_session()
        if self._tree is not None and self._tree.row.same_entry(row):
            return self._tree
        form, link = self._document_link(row, "DK")
        what = f"open the documents of {row.court} {row.register_designation}"
        page = self._load_page("POST", form.action, what, data=form.payload(link))
        tree = self._read(page.content, what, lambda doc: pages.parse_document_tree(doc, page.url))
        self._tree = _OpenTree(row=row, tree=tree)
        return self._tree

    def _tree_request(
        self, open_tree: _OpenTree, fields: dict[str, str], render: str, what: str, read: Callable[[pages.PartialResponse], T]
    ) -> T:
        tree = open_tree.tree
        payload = tree.form.payload(
            {
                "javax.faces.partial.ajax": "true",
                "javax.faces.source": tree.tree_id,
                "javax.faces.partial.execute": tree.tree_id,
                "javax.faces.partial.render": render,
                **fields,
            }
        )

        def read_and_track_view_state(response: pages.PartialResponse) -> T:
            if response.view_state:
                tree.form = tree.form.with_view_state(response.view_state)
            return read(response)

        return self._partial(tree.form.action, payload, what, read_and_track_view_state)

    def _expand(self, open_tree: _OpenTree, node: DocumentNode) -> None:
        tree_id = open_tree.tree.tree_id
        what = f"expand {node.label!r} of {open_tree.row.register_designation}"
        node.children = self._tree_request(
            open_tree,
            {f"{tree_id}_expand": node.row_key},
            tree_id,
            what,
            lambda response: pages.parse_tree_nodes(response.fragment(tree_id)),
        )
        open_tree.expanded.add(node.row_key)

    def _load_folders(self, open_tree: _OpenTree, until: str | None = None) -> None:
        """Expand folders not yet loaded: all of them, or only the ancestors of row key ``until``."""
        pending = True
        while pending:
            pending = False
            for node in walk_nodes(open_tree.tree.nodes):
                wanted = until is None or until.startswith(node.row_key + "_")
                if node.kind == "folder" and node.row_key not in open_tree.expanded and wanted:
                    self._expand(open_tree, node)
                    pending = True
                    break

    def list_documents(self, row: ResultRow) -> list[DocumentNode]:
        open_tree = self._open_tree(row)
        self._load_folders(open_tree)
        return [node.model_copy(deep=True) for node in open_tree.tree.nodes]

    def download_document(self, row: ResultRow, node: DocumentNode) -> tuple[bytes, str, str]:
        open_tree = self._open_tree(row)
        self._load_folders(open_tree, until=node.row_key)
        tree = open_tree.tree
        what = f"download {node.label!r} of {row.court} {row.register_designation}"
        selection = {
            "javax.faces.behavior.event": "select",
            "javax.faces.partial.event": "select",
            f"{tree.tree_id}_selection": node.row_key,
            f"{tree.tree_id}_instantSelection": node.row_key,
        }
        button = self._tree_request(
            open_tree, selection, tree.select_render, what, lambda response: pages.button_in(response.fragment(tree.select_render))
        )
        payload = tree.form.payload({f"{tree.tree_id}_selection": node.row_key, button: ""})
        content, media_type, filename = self._download(tree.form.action, payload, what)
        if media_type == "application/pdf" and b"%%EOF" not in content[-1024:]:
            raise errors.truncated_error(what, "PDF without end marker")
        return content, media_type, filename


def _offers_navigation(page: _Page) -> bool:
    try:
        pages.navigation_to_advanced_search(page.doc, page.url)
    except PageStructureError:
        return False
    return True


def _page_size(options: list[int], wanted: int) -> int:
    """The smallest results-per-page option that shows ``wanted`` rows, else the largest."""
    if not options:
        raise ValueError("the search form offers no page sizes")
    return next((n for n in options if n >= wanted), options[-1])


def _filename(disposition: str) -> str:
    """The filename of a Content-Disposition header, preferring the UTF-8 form (RFC 6266)."""
    if match := _FILENAME_UTF8.search(disposition):
        return unquote(match.group(1).strip())
    if match := _FILENAME.search(disposition):
        return match.group(1).strip()
    return "download"
