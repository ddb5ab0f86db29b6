"""The register client over HTTP, following the portal's JSF/PrimeFaces flow.

start page → navigation form ("advanced search") → search form `schlagwoerter`… → result table →
document links posted with their ids (AD, CD, HD, SI: a download; UT, VÖ: a page; DK: a redirect
to the document view, whose tree is expanded (``_expandNode`` with the ``expand`` event) and
selected (the tree's ``select`` behaviour, updating the ids it names) through PrimeFaces partial
AJAX requests, then the page's Download button with the format radio). Further result pages are
PrimeFaces DataTable page requests (AJAX) on the result table. Register announcements:
navigation → ``bekanntMachungenForm`` → a list by day → the ``remoteBekanntmachung`` command,
answered with a redirect to the announcement's page.

The live portal and the sample register are driven by this same code; only the base URL differs.
Each retrieval takes a token of the shared rate limit first: every request that returns register
content (a result page, a document, a view of the document tree). The start page and the
navigation to the search form carry no register data and take none, so a search of one result
page costs one retrieval. The client keeps one portal session (cookies and the current views)
and is not thread-safe.
"""

from __future__ import annotations

import io
import logging
import re
import time
import unicodedata
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TypeVar
from urllib.parse import unquote, urlencode, urljoin

import httpx
from lxml import etree, html

from orchestration.register import errors, portal_pages
from orchestration.register.client import RegisterClient, SearchCriteria
from orchestration.register.errors import PageStructureError
from orchestration.register.ratelimit import SharedRateLimiter
from orchestration.register.results import (
    Announcement,
    AnnouncementDetail,
    DocumentNode,
    Download,
    ResultRow,
    walk_nodes,
)
from orchestration.runtime.failures import FailureClass, JobError

log = logging.getLogger(__name__)

T = TypeVar("T")

_FORM_HEADERS = {"Content-Type": "application/x-www-form-urlencoded"}
_AJAX_HEADERS = {**_FORM_HEADERS, "Faces-Request": "partial/ajax", "X-Requested-With": "XMLHttpRequest"}
_PORTAL_MAX_PAGE = 100
_MAX_REDIRECTS = 5
# Kinds whose link answers with the file; UT and VÖ open a page.
_FILE_KINDS = frozenset({"AD", "CD", "HD", "SI"})
_FILENAME_UTF8 = re.compile(r"filename\*\s*=\s*UTF-8''([^;]+)", re.IGNORECASE)
_FILENAME = re.compile(r'filename\s*=\s*"?([^";]+)"?', re.IGNORECASE)


@dataclass
class _Page:
    url: str
    content: bytes
    doc: html.HtmlElement


@dataclass
class _OpenTree:
    """The DK view of one row in this session: the tree as loaded so far."""

    row: ResultRow
    tree: portal_pages.DocumentTree
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
            # Redirects are followed here, one retrieval each (see _request).
            follow_redirects=False,
            timeout=timeout_s,
            headers={"Accept-Language": "de-DE,de;q=0.9,en;q=0.8", "User-Agent": "handelsregister-orchestration"},
        )
        self._page: _Page | None = None
        self._results: list[portal_pages.ResultEntry] = []
        self._results_form: portal_pages.Form | None = None
        self._tree: _OpenTree | None = None
        # The last announcement results page and the ids it lists.
        self._announcements: tuple[_Page, set[str]] | None = None

    def close(self) -> None:
        self._http.close()

    def _forget_stale_session(self) -> None:
        """Start afresh when the portal has probably expired this client's session."""
        if self._page is not None and time.monotonic() - self._last_request > self.session_idle_s:
            log.info("register session idle for more than %.0f s; starting a new one", self.session_idle_s)
            self._http.cookies.clear()
            self._page, self._results, self._results_form, self._tree = None, [], None, None
            self._announcements = None

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
        """One request; a retrieval takes a token of the shared rate limit first, for each HTTP
        request, redirects followed included (GET, as browsers do after a POST). Form fields are
        sent in page order, repeated names included, as a browser does."""
        content = urlencode(data) if data is not None else None
        if content is not None:
            headers = headers or _FORM_HEADERS
        for _ in range(_MAX_REDIRECTS + 1):
            if self.rate_limiter is not None and retrieval:
                self.rate_limiter.acquire(what)
            log.debug("%s %s (%s)", method, url, what)
            try:
                response = self._http.request(method, url, content=content, headers=headers)
            except httpx.HTTPError as exc:
                raise errors.network_error(exc, what) from exc
            finally:
                self._last_request = time.monotonic()
            if not response.is_redirect:
                break
            url = urljoin(str(response.url), response.headers["location"])
            if response.status_code not in (307, 308):
                method, content, headers = "GET", None, None
        else:
            raise errors.status_error(response, f"{what} (more than {_MAX_REDIRECTS} redirects)")
        if response.status_code >= 400:
            raise errors.status_error(response, what)
        return response

    def _unexpected(self, content: bytes, what: str, exc: PageStructureError) -> JobError:
        """A response that does not fit the flow: the portal's rate-limit page, a page with the
        portal's messages (it refused the request), or a parser error."""
        try:
            doc = portal_pages.parse_page(content)
            rate_limited, messages = portal_pages.is_rate_limit_page(doc), portal_pages.portal_messages(doc)
        except (PageStructureError, etree.ParserError, ValueError):
            rate_limited, messages = False, []
        if rate_limited:
            return errors.rate_limited_error(what)
        if messages:
            return errors.portal_message_error(what, messages)
        return errors.parser_error(self.diagnostics_dir, content, what, exc)

    def _read(self, content: bytes, what: str, read: Callable[[html.HtmlElement], T]) -> T:
        try:
            return read(portal_pages.parse_page(content))
        except PageStructureError as exc:
            raise self._unexpected(content, what, exc) from exc

    def _load_page(self, method: str, url: str, what: str, data=None, *, retrieval: bool = True) -> _Page:
        response = self._request(method, url, what, data=data, retrieval=retrieval)
        page = _Page(str(response.url), response.content, self._read(response.content, what, lambda doc: doc))
        self._page = page
        return page

    def _partial(
        self,
        url: str,
        payload: list[tuple[str, str]],
        what: str,
        read: Callable[[portal_pages.PartialResponse], T],
        *,
        redirect_allowed: bool = False,
    ) -> T:
        """Post a PrimeFaces AJAX request and apply ``read`` to its partial response; error
        messages in its updates are the portal refusing the request."""
        response = self._request("POST", url, what, data=payload, headers=_AJAX_HEADERS)
        try:
            partial = portal_pages.parse_partial_response(response.content, redirect_allowed=redirect_allowed)
        except PageStructureError as exc:
            raise self._unexpected(response.content, what, exc) from exc
        if messages := partial.messages():
            raise errors.portal_message_error(what, messages)
        try:
            return read(partial)
        except PageStructureError as exc:
            raise self._unexpected(response.content, what, exc) from exc

    def _download(self, url: str, payload: list[tuple[str, str]], what: str) -> Download:
        response = self._request("POST", url, what, data=payload)
        disposition = response.headers.get("content-disposition", "")
        if "attachment" not in disposition.lower():
            exc = PageStructureError(f"expected a download, got {response.headers.get('content-type')!r}")
            raise self._unexpected(response.content, what, exc)
        media_type = response.headers.get("content-type", "application/octet-stream").split(";")[0].strip()
        download = Download(content=response.content, media_type=media_type, filename=_filename(disposition))
        _check_complete(download, what)
        return download

    # ------------------------------------------------------------------------- search

    def _navigate(self, link_component: str, what: str, *, retrieval: bool = True) -> _Page:
        """Follow a link of the navigation menu, from the current page or a new session's start page."""
        start = self._page
        if start is None or not _offers_navigation(start):
            # No page yet, or one without navigation (an error page, say): start a new session.
            self._http.cookies.clear()
            start = self._load_page("GET", self.base_url + "/", "open the start page", retrieval=False)
        form, params = self._read(
            start.content, what, lambda doc: portal_pages.navigation_to(doc, link_component, start.url)
        )
        return self._load_page("POST", form.action, what, data=form.payload(params), retrieval=retrieval)

    def _open_search_form(self) -> portal_pages.SearchForm:
        what = "open the advanced search"
        # The search form carries no register data: not a retrieval.
        page = self._navigate("erweiterteSucheLink", what, retrieval=False)
        return self._read(page.content, what, lambda doc: portal_pages.parse_search_form(doc, page.url))

    def run_search(self, criteria: SearchCriteria) -> list[ResultRow]:
        self._forget_stale_session()
        form = self._open_search_form()
        fields = {
            form.keywords_field: criteria.query,
            form.mode_field: form.mode_values[criteria.mode],
            form.register_number_field: criteria.register_number or "",
            form.results_per_page_field: str(_page_size(form.results_per_page, criteria.max_results)),
            form.submit_field: "",
        }
        register_type = criteria.register_type
        if register_type:
            if register_type not in form.register_types and register_type not in form.register_types.values():
                raise ValueError(f"the register has no register type {register_type!r}")
            fields[form.register_type_field] = form.register_types.get(register_type, register_type)
        if criteria.court:
            fields[form.court_field] = form.court_value(criteria.court)
        if criteria.include_deleted:
            fields[form.include_deleted_field] = "on"
        what = f"search {criteria.query!r}"
        drop = frozenset() if criteria.include_deleted else frozenset({form.include_deleted_field})
        page = self._load_page("POST", form.form.action, what, data=form.form.payload(fields, drop=drop))
        self._results = self._read(page.content, what, lambda doc: portal_pages.parse_results(doc, form.court_codes))
        self._results_form = (
            self._read(page.content, what, lambda doc: portal_pages.form_by_id(doc, self._results[0].form_id, page.url))
            if self._results
            else None
        )
        table = self._read(page.content, what, portal_pages.parse_result_table) if self._results else None
        self.total_results = table.row_count if table else 0
        for _ in range(criteria.max_pages - 1):
            if table is None or len(self._results) >= min(criteria.max_results, table.row_count):
                break
            self._next_result_page(table, form.court_codes, what)
        rows = [entry.row for entry in self._results[: criteria.max_results]]
        log.info("search %r (%s): %d of %d rows", criteria.query, criteria.mode.value, len(rows), self.total_results)
        return rows

    def _next_result_page(self, table: portal_pages.ResultTable, court_codes: dict[str, str], what: str) -> None:
        """The next page of the result table, as PrimeFaces' DataTable paginator requests it."""
        form = self._results_form
        assert form is not None, "a result table came with its form"
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
            entries = portal_pages.parse_result_rows(response.updates.get(table.table_id, ""), court_codes)
        except PageStructureError as exc:
            raise self._unexpected(response.updates.get(table.table_id, "").encode(), what, exc) from exc
        if response.view_state:
            self._results_form = form.with_view_state(response.view_state)
        self._results.extend(entries)
        if not entries:
            table.row_count = first  # the portal has no more rows than it served

    def _entry_for(self, row: ResultRow) -> portal_pages.ResultEntry:
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

    def _document_link(self, row: ResultRow, kind: str) -> tuple[portal_pages.Form, dict[str, str]]:
        self._forget_stale_session()
        entry = self._entry_for(row)
        if kind not in entry.links:
            raise JobError(
                FailureClass.INVALID_FILE,
                f"{row.court} {row.register_designation} offers no {kind} document",
                source=errors.SOURCE,
                code="no_document",
            )
        assert self._results_form is not None, "results came with their form"
        return self._results_form, entry.links[kind]

    # ------------------------------------------------------------------------- AD, CD, HD, SI, UT, VÖ

    def download(self, row: ResultRow, kind: str) -> Download:
        if kind == "DK":
            raise ValueError("DK is a tree of documents: list_documents and download_document fetch them")
        form, link = self._document_link(row, kind)
        what = f"download {kind} of {row.court} {row.register_designation}"
        if kind in _FILE_KINDS:
            return self._download(form.action, form.payload(link), what)
        page = self._load_page("POST", form.action, what, data=form.payload(link))
        name = unicodedata.normalize("NFKD", f"{row.register_designation} {kind}").encode("ascii", "ignore").decode()
        slug = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")
        return Download(content=page.content, media_type="text/html", filename=f"{slug}.html")

    def download_si(self, row: ResultRow) -> tuple[bytes, str]:
        download = self.download(row, "SI")
        return download.content, download.filename

    # ------------------------------------------------------------------------- DK tree

    def _open_tree(self, row: ResultRow) -> _OpenTree:
        self._forget_stale_session()
        if self._tree is not None and self._tree.row.same_entry(row):
            return self._tree
        form, link = self._document_link(row, "DK")
        what = f"open the documents of {row.court} {row.register_designation}"
        # The portal answers the DK link with a redirect to documents/welcome.xhtml?cid=N.
        page = self._load_page("POST", form.action, what, data=form.payload(link))
        tree = self._read(page.content, what, lambda doc: portal_pages.parse_document_tree(doc, page.url))
        self._tree = _OpenTree(row=row, tree=tree, expanded=set(tree.expanded))
        return self._tree

    def _tree_request(
        self,
        open_tree: _OpenTree,
        fields: dict[str, str],
        behaviour: portal_pages.Behaviour,
        what: str,
        read: Callable[[portal_pages.PartialResponse], T],
    ) -> T:
        tree = open_tree.tree
        payload = tree.form.payload(
            {
                "javax.faces.partial.ajax": "true",
                "javax.faces.source": behaviour.source,
                "javax.faces.partial.execute": behaviour.execute,
                "javax.faces.partial.render": behaviour.render,
                **fields,
            }
        )

        def read_and_track_view_state(response: portal_pages.PartialResponse) -> T:
            if response.view_state:
                tree.form = tree.form.with_view_state(response.view_state)
            return read(response)

        return self._partial(tree.form.action, payload, what, read_and_track_view_state)

    def _expand(self, open_tree: _OpenTree, node: DocumentNode) -> None:
        # PrimeFaces' Tree: the node in _expandNode and the expand event; the answer updates the
        # tree with the node's children.
        tree_id = open_tree.tree.tree_id
        what = f"expand {node.label!r} of {open_tree.row.register_designation}"
        expand = portal_pages.Behaviour(source=tree_id, execute=tree_id, updates=[tree_id])
        node.children = self._tree_request(
            open_tree,
            {
                "javax.faces.behavior.event": "expand",
                "javax.faces.partial.event": "expand",
                f"{tree_id}_expandNode": node.row_key,
            },
            expand,
            what,
            lambda response: portal_pages.parse_tree_nodes(response.fragment(tree_id)),
        )
        open_tree.expanded.add(node.row_key)

    def _load_folders(self, open_tree: _OpenTree, wanted: Callable[[DocumentNode], bool]) -> None:
        """Expand the folders not yet loaded that ``wanted`` accepts, until none is left."""
        pending = True
        while pending:
            pending = False
            for node in walk_nodes(open_tree.tree.nodes):
                if node.kind == "folder" and node.row_key not in open_tree.expanded and wanted(node):
                    self._expand(open_tree, node)
                    pending = True
                    break

    def list_documents(
        self, row: ResultRow, expand: Callable[[DocumentNode], bool] | None = None
    ) -> list[DocumentNode]:
        open_tree = self._open_tree(row)
        self._load_folders(open_tree, expand or (lambda node: True))
        return [node.model_copy(deep=True) for node in open_tree.tree.nodes]

    def download_document(self, row: ResultRow, node: DocumentNode) -> Download:
        if node.kind != "document":
            raise ValueError(f"{node.label!r} ({node.row_key}) is a folder, not a document")
        open_tree = self._open_tree(row)
        # A fresh session expands just the folders on the way to the node.
        self._load_folders(open_tree, lambda folder: node.row_key.startswith(folder.row_key + "_"))
        tree = open_tree.tree
        what = f"download {node.label!r} of {row.court} {row.register_designation}"
        selection = {
            "javax.faces.behavior.event": "select",
            "javax.faces.partial.event": "select",
            f"{tree.tree_id}_instantSelection": node.row_key,
            f"{tree.tree_id}_selection": node.row_key,
        }

        def controls_after_selection(response: portal_pages.PartialResponse) -> portal_pages.DownloadControls:
            # The panel the selection updated holds the button and radio, now enabled.
            for component in tree.select.updates:
                if component in response.updates:
                    fragment = response.fragment(component)
                    if fragment.xpath('.//button[@type="submit"] | .//input[@type="submit"]'):
                        return portal_pages.download_controls(fragment)
            return tree.controls

        controls = self._tree_request(open_tree, selection, tree.select, what, controls_after_selection)
        fields = {f"{tree.tree_id}_selection": node.row_key}
        if controls.format_field:
            if not controls.formats:
                raise JobError(
                    FailureClass.INVALID_FILE,
                    f"{what}: the register offers this node in no format",
                    source=errors.SOURCE,
                    code="no_format",
                )
            # "false" is the original file; some documents come only as a ZIP ("true").
            fields[controls.format_field] = "false" if "false" in controls.formats else controls.formats[0]
        fields[controls.button] = ""
        return self._download(tree.form.action, tree.form.payload(fields), what)

    # ------------------------------------------------------------------------- announcements

    def _open_announcements(self) -> portal_pages.AnnouncementForm:
        what = "open the register announcements"
        page = self._navigate("bekanntmachungenLink", what)
        return self._read(page.content, what, lambda doc: portal_pages.parse_announcement_form(doc, page.url))

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
        self._forget_stale_session()
        form = self._open_announcements()
        fields = {
            form.date_from_field: date_from.strftime("%d.%m.%Y"),
            form.date_to_field: date_to.strftime("%d.%m.%Y"),
            form.submit_field: "",
        }
        if state:
            fields[form.state_field] = form.state_value(state)
        if court:
            fields[form.court_field] = form.court_value(court)
        if category:
            if category not in form.categories:
                raise ValueError(f"the register has no announcement category {category!r}")
            fields[form.category_field] = category
        if seat and form.seat_field:
            fields[form.seat_field] = seat
        what = f"search announcements {date_from:%d.%m.%Y} to {date_to:%d.%m.%Y} {court or state or ''}".strip()
        page = self._load_page("POST", form.form.action, what, data=form.form.payload(fields))
        found = self._read(page.content, what, lambda doc: portal_pages.parse_announcements(doc, form.categories))
        self._announcements = (page, {a.id for a in found})
        log.info("%s: %d announcements", what, len(found))
        return found

    def announcement_detail(self, announcement: Announcement) -> AnnouncementDetail:
        """The page of an announcement of the last search (searching its day again if need be)."""
        self._forget_stale_session()
        if self._announcements is None or announcement.id not in self._announcements[1]:
            self.search_announcements(announcement.published, announcement.published)
        assert self._announcements is not None, "the search just made keeps its page"
        page, _ = self._announcements
        what = f"open announcement {announcement.id}"

        def command_and_form(doc) -> tuple[portal_pages.Behaviour, portal_pages.Form]:
            command = portal_pages.announcement_command(doc)
            if not command.form:
                raise PageStructureError("the remoteBekanntmachung command names no form")
            return command, portal_pages.form_by_id(doc, command.form, page.url)

        command, form = self._read(page.content, what, command_and_form)
        payload = form.payload(
            {
                "javax.faces.partial.ajax": "true",
                "javax.faces.source": command.source,
                "javax.faces.partial.execute": command.execute,
                "javax.faces.partial.render": command.render,
                command.source: command.source,
                "datum": announcement.portal_date,
                "id": announcement.id,
            }
        )
        redirect = self._partial(form.action, payload, what, lambda r: r.redirect, redirect_allowed=True)
        if not redirect:
            raise self._unexpected(b"", what, PageStructureError("the announcement command did not redirect"))
        detail = self._load_page("GET", urljoin(form.action, redirect), what)
        return self._read(detail.content, what, portal_pages.parse_announcement_detail)


def _offers_navigation(page: _Page) -> bool:
    try:
        portal_pages.navigation_to(page.doc, "erweiterteSucheLink", page.url)
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


def _check_complete(download: Download, what: str) -> None:
    """A cut-off file is the network's or the register's fault: fetching it again helps."""
    content = download.content
    if download.media_type == "application/pdf" and b"%%EOF" not in content[-1024:]:
        raise errors.truncated_error(what, "PDF without end marker")
    if download.media_type == "application/zip" and not zipfile.is_zipfile(io.BytesIO(content)):
        raise errors.truncated_error(what, "ZIP without its directory")
    if download.media_type.endswith("xml") or download.filename.endswith(".xml"):
        try:
            etree.fromstring(content)
        except etree.XMLSyntaxError as exc:
            raise errors.truncated_error(what, str(exc)) from exc
