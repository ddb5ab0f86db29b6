"""The sample register: an ASGI app that behaves like the register portal.

Sessions (cookie JSESSIONID) hold JSF-like views, each addressed by its view state; a post with
an unknown view state gets the "session expired" page, as on the portal. Where the portal's
behaviour is known (samples/portal, PrimeFaces' documented Tree and partial responses, the facts
of issue 14) this app does what the portal does: the DK link redirects to
documents/welcome.xhtml?cid=N; a node's children come only for ``_expandNode`` with the
``expand`` event; the select behaviour updates the ids it names; the Download button and the
format radio are on the page, disabled until the bean holds a selected document; some documents
come only as a ZIP; form errors are PrimeFaces messages on the page. Register announcements are
searched through ``bekanntMachungenForm`` and opened by the ``remoteBekanntmachung`` command.

Faults for tests are armed through ``/_sample/faults`` (see `Fault`); ``POST
/_sample/companies/{court}/{type}/{number}/documents`` makes a company file a new shareholder
list today, which the register announces.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import secrets
import unicodedata
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import date, datetime
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from orchestration.register.results import DOCUMENT_KINDS, SearchMode
from sample_register import html
from sample_register.announcements import CATEGORIES, STATES, Announcement, Announcements, legal_form_text
from sample_register.company import Company
from sample_register.corpus import Corpus
from sample_register.documents import (
    SHAREHOLDER_LIST_LABEL,
    Filing,
    TreeNode,
    document_tree,
    german_date,
    original_document,
    portal_filename,
    printout,
    si_document,
    zipped_document,
)

log = logging.getLogger(__name__)

SESSION_COOKIE = "JSESSIONID"
MAX_SESSIONS = 2000
MAX_VIEWS_PER_SESSION = 25  # like JSF's numberOfViewsInSession: old views expire
MODES = {"1": SearchMode.ALL, "2": SearchMode.ANY, "3": SearchMode.EXACT}
FAULT_KINDS = ("slow", "server_error", "too_many_requests", "rate_limit_page", "unexpected_page", "truncated")


@dataclass
class Fault:
    """A fault served instead of (or on top of) the next ``times`` matching responses.

    kind: ``slow`` (answer after ``delay_s``), ``server_error`` (HTTP ``status``, default 503),
    ``too_many_requests`` (HTTP 429), ``rate_limit_page`` (the portal's rate-limit page, HTTP 200),
    ``unexpected_page`` (a page the client cannot know, HTTP 200), ``truncated`` (a download cut in half). ``on`` picks the responses: ``any``, ``page``,
    ``ajax`` or ``download`` (the default for ``truncated``).
    """

    kind: str
    times: int = 1
    delay_s: float = 5.0
    status: int = 503
    on: str = "any"


@dataclass
class View:
    kind: str  # welcome, search, results, documents, announcements, or the document kind of a page it shows
    links: dict[str, tuple[Company, str]] = field(default_factory=dict)  # link id -> (company, document kind)
    company: Company | None = None
    action: str = ""  # where the view's forms post
    expanded: set[str] = field(default_factory=set)  # DK: the folders expanded so far
    selected: str | None = None  # DK: the row key selected in the bean
    found: list[Announcement] = field(default_factory=list)  # announcements: the results shown
    results: list[Company] = field(default_factory=list)  # a search: every result, for its further pages

    def company_shown(self) -> Company:
        """The company of a documents view, which is opened for one."""
        assert self.company is not None
        return self.company


@dataclass
class Session:
    number: int
    idt_base: int
    views: OrderedDict[str, View] = field(default_factory=OrderedDict)
    cid: int = 0
    # Pages reached by a redirect (GET), by their path and cid: the DK page of a row.
    redirects: dict[str, str] = field(default_factory=dict)
    announcement: Announcement | None = None  # the one einzelBekanntmachung shows

    def new_view(self, view: View) -> html.PageIds:
        token = f"{self.number}:{secrets.randbits(63) - 2**62}"
        self.views[token] = view
        while len(self.views) > MAX_VIEWS_PER_SESSION:
            self.views.popitem(last=False)
        self.cid += 1
        return html.PageIds(base=self.idt_base, view_state=token)

    def ids(self, token: str) -> html.PageIds:
        return html.PageIds(base=self.idt_base, view_state=token)


def _attachment(content: bytes, media_type: str, filename: str) -> Response:
    # The portal names the file in the plain filename parameter only (no RFC 5987 filename*).
    ascii_name = unicodedata.normalize("NFKD", filename).encode("ascii", "ignore").decode()
    return Response(
        content, media_type=media_type, headers={"Content-Disposition": f'attachment; filename="{ascii_name}"'}
    )


def si_filename(company: Company, when: datetime) -> str:
    """Like the portal's: ``BE-Berlin_Charlottenburg_HRB_248040+SI-20230514155133.xml``."""
    return portal_filename(company, "SI", when, "xml")


def _parse_german_date(text: str) -> date | None:
    try:
        return datetime.strptime(text.strip(), "%d.%m.%Y").date()
    except ValueError:
        return None


class SampleRegister:
    def __init__(self, corpus: Corpus, today: date | None = None) -> None:
        self.corpus = corpus
        self.sessions: OrderedDict[str, Session] = OrderedDict()
        self.faults: list[Fault] = []
        self._session_numbers = itertools.count(1)
        self._rng = random.Random()
        self.today = today or date.today()
        self.announcements = Announcements(corpus.companies, self.today)
        self.added: dict[tuple[str, str, str], tuple[Filing, ...]] = {}

    def tree(self, company: Company) -> TreeNode:
        return document_tree(company, self.added.get(company.key, ()))

    # ------------------------------------------------------------------------- sessions

    def _session(self, request: Request) -> Session | None:
        session = self.sessions.get(request.cookies.get(SESSION_COOKIE, ""))
        if session is not None:
            self.sessions.move_to_end(request.cookies[SESSION_COOKIE])
        return session

    def _new_session(self) -> tuple[str, Session]:
        session_id = secrets.token_hex(16).upper()
        session = Session(number=next(self._session_numbers), idt_base=self._rng.randint(100, 400))
        self.sessions[session_id] = session
        while len(self.sessions) > MAX_SESSIONS:
            self.sessions.popitem(last=False)
        return session_id, session

    # ------------------------------------------------------------------------- pages

    async def welcome(self, request: Request) -> Response:
        session = self._session(request)
        session_id = None
        if session is None:
            session_id, session = self._new_session()
        ids = session.new_view(View(kind="welcome"))
        response = HTMLResponse(html.welcome_page(ids))
        if session_id:
            response.set_cookie(SESSION_COOKIE, session_id, path="/rp_web", httponly=True)
        return response

    async def redirected_page(self, request: Request) -> Response:
        """GET of a page the portal redirected to: the DK page (documents/welcome.xhtml?cid=N)."""
        session = self._session(request)
        key = f"{request.url.path}?cid={request.query_params.get('cid', '')}"
        token = session.redirects.get(key) if session else None
        view = session.views.get(token) if session and token else None
        if session is None or token is None or view is None or view.company is None:
            return HTMLResponse(html.expired_page())
        return self._document_page(session.ids(token), view)

    async def announcement_detail(self, request: Request) -> Response:
        session = self._session(request)
        if session is None or session.announcement is None:
            return HTMLResponse(html.expired_page())
        ids = session.new_view(View(kind="announcement"))
        legal_form = legal_form_text(session.announcement.company)
        return HTMLResponse(html.announcement_detail_page(ids, session.announcement, legal_form))

    async def post(self, request: Request) -> Response:
        # Browsers post these forms URL-encoded; parsing them needs no multipart library.
        fields: list[tuple[str, str | UploadFile]] = list(
            parse_qsl((await request.body()).decode(), keep_blank_values=True)
        )
        form = FormData(fields)
        session = self._session(request)
        token = str(form.get(html.VIEW_STATE, ""))
        view = session.views.get(token) if session else None
        if session is None or view is None:
            return HTMLResponse(html.expired_page())
        if form.get("javax.faces.partial.ajax") == "true":
            if view.kind == "results" and form.get("javax.faces.source") == html.RESULTS_TABLE:
                return self._result_page(session, view, form)
            if view.kind == "announcements":
                return self._announcement_command(session, view, form)
            return await self._tree_request(session, token, view, form)
        if "naviForm" in form and any(key.endswith(":erweiterteSucheLink") for key in form):
            ids = session.new_view(View(kind="search"))
            return HTMLResponse(html.search_page(ids, session.cid, self.corpus.courts))
        if "naviForm" in form and any(key.endswith(":bekanntmachungenLink") for key in form):
            ids = session.new_view(View(kind="announcements"))
            return HTMLResponse(html.announcements_page(ids, self.corpus.courts, STATES, CATEGORIES))
        if form.get("form") == "form" and "form:btnSuche" in form:
            return self._search(session, form)
        if html.ANNOUNCEMENTS_FORM in form and f"{html.ANNOUNCEMENTS_FORM}:rrbSuche" in form:
            return self._announcement_search(session, form)
        if "ergebnissForm" in form and view.kind == "results":
            link = next((key for key in form if key in view.links), None)
            if link is not None:
                company, kind = view.links[link]
                return await self._document_link(session, company, kind)
        if "dk_form" in form and view.kind == "documents":
            return await self._dk_form(session, token, view, form)
        return HTMLResponse(html.message_page("Error", "The request could not be processed."), status_code=400)

    def _search(self, session: Session, form: FormData) -> Response:
        query = str(form.get("form:schlagwoerter", "")).strip()
        number = str(form.get("form:registerNummer", "")).strip()
        register_type = str(form.get("form:registerArt_input", "")) or None
        court_code = str(form.get("form:registergericht_input", "")) or None
        mode = MODES.get(str(form.get("form:schlagwortOptionen", "1")), SearchMode.ALL)
        errors = []
        if not query and not number:
            errors.append(("Search", "Please enter keywords or a register number."))
        elif mode is SearchMode.ANY and not (register_type or court_code or number):
            # As on the portal: "at least one keyword" needs a further criterion.
            errors.append(
                (
                    "Search",
                    'With "contain at least one keyword" please also choose a register type, '
                    "a register court or a register number.",
                )
            )
        if errors:
            ids = session.new_view(View(kind="search"))
            return HTMLResponse(html.search_page(ids, session.cid, self.corpus.courts, errors))
        found = self.corpus.search(
            query,
            mode,
            register_type=register_type,
            court_code=court_code,
            register_number=number or None,
            include_deleted=form.get("form:auchGeloeschte_input") == "on",
        )
        per_page = int(str(form.get("form:ergebnisseProSeite_input", "10")))
        shown = found[:per_page]
        view = View(kind="results", results=found)
        ids = session.new_view(view)
        self._link_rows(view, ids, 0, shown)
        return HTMLResponse(html.results_page(ids, session.cid, shown, len(found), per_page))

    @staticmethod
    def _link_rows(view: View, ids: html.PageIds, first: int, shown: list[Company]) -> None:
        for row, company in enumerate(shown, start=first):
            for k, kind in enumerate(DOCUMENT_KINDS):
                view.links[html.link_id(ids, row, k, kind)] = (company, kind)

    def _result_page(self, session: Session, view: View, form: FormData) -> Response:
        """A further page of the result table, as PrimeFaces' DataTable pages: an AJAX request with
        ``<table>_pagination``, ``_first`` and ``_rows``, answered with the page's rows as the
        table's update."""
        table = html.RESULTS_TABLE
        try:
            first, rows = int(str(form.get(f"{table}_first", ""))), int(str(form.get(f"{table}_rows", "")))
        except ValueError:
            return Response(html.partial_response({}), media_type="text/xml", status_code=400)
        if form.get(f"{table}_pagination") != "true" or first < 0 or rows not in html.RESULTS_PER_PAGE:
            return Response(html.partial_response({}), media_type="text/xml", status_code=400)
        ids = html.PageIds(base=session.idt_base, view_state=str(form.get(html.VIEW_STATE)))
        shown = view.results[first : first + rows]
        self._link_rows(view, ids, first, shown)
        state = {f"j_id1:{html.VIEW_STATE}:0": str(form.get(html.VIEW_STATE))}
        updates = {table: html.result_rows(ids, first, shown), **state}
        return Response(html.partial_response(updates), media_type="text/xml")

    async def _document_link(self, session: Session, company: Company, kind: str) -> Response:
        now = datetime.now()
        if kind == "SI":
            content = await run_in_threadpool(si_document, company)
            return _attachment(content, "text/xml; charset=UTF-8", si_filename(company, now))
        if kind == "DK":
            # The portal answers with a redirect to the document view of this conversation.
            view = View(kind="documents", company=company, expanded={"0", "0_0"})
            ids = session.new_view(view)
            path = "/rp_web/documents/welcome.xhtml"
            view.action = f"{path}?cid={session.cid}"
            session.redirects[view.action] = ids.view_state
            return RedirectResponse(view.action, status_code=302)
        if kind in html.DOWNLOAD_KINDS:
            pdf = await run_in_threadpool(printout, company, kind)
            return _attachment(pdf, "application/pdf", portal_filename(company, kind, now, "pdf"))
        ids = session.new_view(View(kind=kind, company=company))
        if kind == "VÖ":
            items = [a for a in self.announcements.items if a.company.key == company.key]
            text = "".join(f"<p>{html.german(a.published)} {a.category_label}: {a.text}</p>" for a in items)
        else:
            text = (
                f"<p>{company.name}</p><p>{company.seat}</p>"
                f"<p>Amtsgericht {company.court.name} {company.designation}</p>"
            )
        return HTMLResponse(html.layout(kind, "/rp_web/welcome.xhtml", ids, text))

    # ------------------------------------------------------------------------- DK

    def _zip_only(self, view: View) -> bool:
        node = self.tree(view.company_shown()).find(view.selected or "")
        return bool(node and node.filing and node.filing.zip_only)

    def _selected_node(self, view: View) -> TreeNode | None:
        return self.tree(view.company_shown()).find(view.selected) if view.selected else None

    def _document_page(self, ids: html.PageIds, view: View, errors=()) -> Response:
        page = html.document_page(
            ids,
            view.action,
            self.tree(view.company_shown()),
            frozenset(view.expanded),
            self._selected_node(view),
            self._zip_only(view),
            errors,
        )
        return HTMLResponse(page)

    async def _tree_request(self, session: Session, token: str, view: View, form: FormData) -> Response:
        """A PrimeFaces AJAX request of the tree: expand a node, or select one.

        Only what the request names in ``javax.faces.partial.render`` is rendered; a node's
        children come only with ``_expandNode`` and the ``expand`` behaviour event."""
        if view.kind != "documents" or form.get("javax.faces.source") != html.TREE:
            return Response(html.partial_response({}), media_type="text/xml", status_code=400)
        root = self.tree(view.company_shown())
        ids = session.ids(token)
        event = form.get("javax.faces.behavior.event")
        expand = form.get(f"{html.TREE}_expandNode")
        render = str(form.get("javax.faces.partial.render", "")).split()
        updates = {f"{html.INFOBOX}:messagesDK": html.messages(f"{html.INFOBOX}:messagesDK")}
        if event == "select":
            view.selected = str(form.get(f"{html.TREE}_instantSelection") or form.get(f"{html.TREE}_selection") or "")
        selected = self._selected_node(view)
        for component in render:
            if component == html.TREE and expand is not None and event == "expand":
                view.expanded.add(str(expand))
                node = root.find(str(expand))
                updates[html.TREE] = html.tree_nodes(node.children if node else ())
            elif component == html.TREE:
                # Without the expand request the tree is rendered as it stands, the node still collapsed.
                updates[html.TREE] = html.tree(root, frozenset(view.expanded), view.selected)
            elif component == html.DETAILS_PANEL:
                updates[html.DETAILS_PANEL] = html.details_panel(ids, selected, self._zip_only(view))
            elif component == html.INFOBOX:
                updates[html.INFOBOX] = html.infobox(html.PageIds(ids.base, token), view.action)
        updates[f"j_id1:{html.VIEW_STATE}:0"] = token
        return Response(html.partial_response(updates), media_type="text/xml")

    async def _dk_form(self, session: Session, token: str, view: View, form: FormData) -> Response:
        """A full post of dk_form: the Download button, or any other postback (which re-renders the page).

        The button acts only when the bean already holds a selected document: it is disabled
        until then, and JSF skips the action of a disabled button."""
        ids = session.ids(token)
        button = f"dk_form:{ids.idt(61)}"
        before = self._selected_node(view)
        selection = str(form.get(f"{html.TREE}_selection", ""))
        if selection:
            view.selected = selection
        node = self._selected_node(view)
        if button not in form or before is None or not before.is_document or node is None or node.filing is None:
            return self._document_page(ids, view)
        radio = form.get(html.FORMAT_RADIO)
        if radio not in ("true", "false"):
            return self._document_page(ids, view, [("Download", "Please choose a format.")])
        if radio == "false" and node.filing.zip_only:
            return self._document_page(ids, view, [("Download", "This document is available only as a ZIP file.")])
        now = datetime.now()
        company = view.company_shown()
        if radio == "true":
            content = await run_in_threadpool(zipped_document, company, node.filing)
            return _attachment(content, "application/zip", portal_filename(company, node.label, now, "zip"))
        content, media_type, extension = await run_in_threadpool(original_document, company, node.filing)
        return _attachment(content, media_type, portal_filename(company, node.label, now, extension))

    # ------------------------------------------------------------------------- announcements

    def _announcement_search(self, session: Session, form: FormData) -> Response:
        f = html.ANNOUNCEMENTS_FORM
        date_from = _parse_german_date(str(form.get(f"{f}:datum_von_input", "")))
        date_to = _parse_german_date(str(form.get(f"{f}:datum_bis_input", "")))
        if date_from is None or date_to is None or date_from > date_to:
            ids = session.new_view(View(kind="announcements"))
            errors = [("Date", "Please enter a valid date range (TT.MM.JJJJ).")]
            return HTMLResponse(html.announcements_page(ids, self.corpus.courts, STATES, CATEGORIES, errors=errors))
        found = self.announcements.search(
            date_from=date_from,
            date_to=date_to,
            state=str(form.get(f"{f}:land_input", "")),
            court_code=str(form.get(f"{f}:registergericht_input", "")),
            seat=str(form.get(f"{f}:sitz", "")),
            category=str(form.get(f"{f}:kategorie_input", "")),
        )
        ids = session.new_view(View(kind="announcements", found=found))
        return HTMLResponse(html.announcements_page(ids, self.corpus.courts, STATES, CATEGORIES, found))

    def _announcement_command(self, session: Session, view: View, form: FormData) -> Response:
        """remoteBekanntmachung: the announcement clicked; the portal answers with a redirect to its page."""
        announcement = next((a for a in view.found if a.id == form.get("id")), None)
        if announcement is None:
            return Response(html.partial_response({}), media_type="text/xml", status_code=400)
        session.announcement = announcement
        return Response(html.partial_redirect("/rp_web/einzelBekanntmachung/welcome.xhtml"), media_type="text/xml")

    # ------------------------------------------------------------------------- corpus changes

    async def file_document(self, request: Request) -> Response:
        """Test hook: the company files a new shareholder list today, and the register announces it."""
        p = request.path_params
        company = self.corpus.get(p["court"], p["register_type"], p["number"])
        if company is None:
            return JSONResponse({"error": "no such company"}, status_code=404)
        label = SHAREHOLDER_LIST_LABEL.format(date=german_date(self.today))
        added = self.added.get(company.key, ())
        filing = Filing(label, self.today, zlib.crc32(f"{company.key}|{len(added)}".encode()), shareholder_list=True)
        self.added[company.key] = (*added, filing)
        announcement = self.announcements.add_new_document(company, label, self.today)
        return JSONResponse({"label": label, "announcement_id": announcement.id})

    # ------------------------------------------------------------------------- faults

    async def with_faults(self, request: Request, handler) -> Response:
        response = await handler(request)
        if not self.faults:
            return response
        if "attachment" in response.headers.get("content-disposition", ""):
            category = "download"
        elif response.media_type == "text/xml":
            category = "ajax"
        else:
            category = "page"
        fault = next(
            (f for f in self.faults if f.on in ("any", category) and (f.kind != "truncated" or category == "download")),
            None,
        )
        if fault is None:
            return response
        fault.times -= 1
        if fault.times <= 0:
            self.faults.remove(fault)
        log.info("injecting fault %s into %s %s", fault.kind, request.method, request.url.path)
        if fault.kind == "slow":
            await asyncio.sleep(fault.delay_s)
            return response
        if fault.kind == "server_error":
            return HTMLResponse(html.message_page("Error", "Internal server error"), status_code=fault.status)
        if fault.kind == "too_many_requests":
            return HTMLResponse(html.rate_limit_page(), status_code=429, headers={"Retry-After": "60"})
        if fault.kind == "rate_limit_page":
            return HTMLResponse(html.rate_limit_page())
        if fault.kind == "unexpected_page":
            return HTMLResponse(html.message_page("Maintenance", "The register portal is being redesigned."))
        cut = response.body[: len(response.body) // 2]
        return Response(
            cut,
            media_type=response.media_type,
            headers={"Content-Disposition": response.headers["content-disposition"]},
        )

    async def arm_fault(self, request: Request) -> Response:
        spec = await request.json()
        if spec.get("kind") not in FAULT_KINDS:
            return JSONResponse({"error": f"kind must be one of {', '.join(FAULT_KINDS)}"}, status_code=400)
        spec.setdefault("on", "download" if spec["kind"] == "truncated" else "any")
        self.faults.append(Fault(**spec))
        return JSONResponse({"armed": len(self.faults)})

    async def clear_faults(self, request: Request) -> Response:
        self.faults.clear()
        return JSONResponse({"armed": 0})

    async def health(self, request: Request) -> Response:
        return JSONResponse({"companies": len(self.corpus), "sessions": len(self.sessions)})


def create_app(corpus: Corpus, today: date | None = None) -> Starlette:
    register = SampleRegister(corpus, today)

    def faulty(handler):
        async def endpoint(request: Request) -> Response:
            return await register.with_faults(request, handler)

        return endpoint

    async def root(request: Request) -> Response:
        return RedirectResponse("/rp_web/welcome.xhtml")

    app = Starlette(
        routes=[
            Route("/", root),
            Route("/rp_web/welcome.xhtml", faulty(register.welcome), methods=["GET"]),
            Route("/rp_web/documents/welcome.xhtml", faulty(register.redirected_page), methods=["GET"]),
            Route("/rp_web/einzelBekanntmachung/welcome.xhtml", faulty(register.announcement_detail), methods=["GET"]),
            Route("/rp_web/{page:path}", faulty(register.post), methods=["POST"]),
            Route("/_sample/faults", register.arm_fault, methods=["POST"]),
            Route("/_sample/faults", register.clear_faults, methods=["DELETE"]),
            Route("/_sample/health", register.health, methods=["GET"]),
            Route(
                "/_sample/companies/{court}/{register_type}/{number}/documents",
                register.file_document,
                methods=["POST"],
            ),
        ]
    )
    app.state.register = register
    return app
