"""The sample register: an ASGI app that behaves like the register portal.

Sessions (cookie JSESSIONID) hold JSF-like views, each addressed by its view state; a post with
an unknown view state gets the "session expired" page, as on the portal. Faults for tests are
armed through ``/_sample/faults`` (see `Fault`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import secrets
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import parse_qsl, quote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from orchestration.register.models import DOCUMENT_KINDS, SearchMode
from orchestration.register.sample import html
from orchestration.register.sample.company import Company
from orchestration.register.sample.corpus import Corpus
from orchestration.register.sample.documents import document_tree, si_document, simple_pdf, tree_document

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
    kind: str  # welcome, search, results, documents, or the document kind of a page it shows
    links: dict[str, tuple[Company, str]] = field(default_factory=dict)  # link id -> (company, document kind)
    company: Company | None = None
    found: list[Company] = field(default_factory=list)  # every result of a search, for its further pages


@dataclass
class Session:
    number: int
    idt_base: int
    views: OrderedDict[str, View] = field(default_factory=OrderedDict)
    cid: int = 0

    def new_view(self, view: View) -> html.PageIds:
        token = f"{self.number}:{secrets.randbits(63) - 2**62}"
        self.views[token] = view
        while len(self.views) > MAX_VIEWS_PER_SESSION:
            self.views.popitem(last=False)
        self.cid += 1
        return html.PageIds(base=self.idt_base, view_state=token)


def _attachment(content: bytes, media_type: str, filename: str) -> Response:
    ascii_name = unicodedata.normalize("NFKD", filename).encode("ascii", "ignore").decode()
    disposition = f"attachment; filename=\"{ascii_name}\"; filename*=UTF-8''{quote(filename)}"
    return Response(content, media_type=media_type, headers={"Content-Disposition": disposition})


def si_filename(company: Company, when: datetime) -> str:
    """Like the portal's: ``BE-Berlin_Charlottenburg_HRB_248040+SI-20230514155133.xml``."""
    court = company.court.name.replace(" (", "_").replace(")", "").replace(" ", "_")
    return f"{company.court.state_abbreviation}-{court}_{company.register_type}_{company.register_number}+SI-{when:%Y%m%d%H%M%S}.xml"


class SampleRegister:
    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus
        self.sessions: OrderedDict[str, Session] = OrderedDict()
        self.faults: list[Fault] = []
        self._session_numbers = itertools.count(1)
        self._rng = random.Random()

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

    async def post(self, request: Request) -> Response:
        # Browsers post these forms URL-encoded; parsing them needs no multipart library.
        form = FormData(parse_qsl((await request.body()).decode(), keep_blank_values=True))
        session = self._session(request)
        view = session.views.get(str(form.get(html.VIEW_STATE, ""))) if session else None
        if session is None or view is None:
            return HTMLResponse(html.expired_page())
        if form.get("javax.faces.partial.ajax") == "true":
            if view.kind == "results" and form.get("javax.faces.source") == html.RESULTS_TABLE:
                return self._result_page(session, view, form)
            return await self._tree_request(session, view, form)
        if "naviForm" in form and any(key.endswith(":erweiterteSucheLink") for key in form):
            ids = session.new_view(View(kind="search"))
            return HTMLResponse(html.search_page(ids, session.cid, self.corpus.courts))
        if form.get("form") == "form" and "form:btnSuche" in form:
            return self._search(session, form)
        if "ergebnissForm" in form and view.kind == "results":
            link = next((key for key in form if key in view.links), None)
            if link is not None:
                company, kind = view.links[link]
                return await self._document_link(session, company, kind)
        if "dk_form" in form and view.kind == "documents":
            return await self._tree_download(view, form)
        return HTMLResponse(html.message_page("Error", "The request could not be processed."), status_code=400)

    def _search(self, session: Session, form: FormData) -> Response:
        query = str(form.get("form:schlagwoerter", "")).strip()
        number = str(form.get("form:registerNummer", "")).strip()
        if not query and not number:
            ids = session.new_view(View(kind="search"))
            return HTMLResponse(html.search_page(ids, session.cid, self.corpus.courts, "Please enter keywords or a register number."))
        found = self.corpus.search(
            query,
            MODES.get(str(form.get("form:schlagwortOptionen", "1")), SearchMode.ALL),
            register_type=str(form.get("form:registerArt_input", "")) or None,
            court_code=str(form.get("form:registergericht_input", "")) or None,
            register_number=number or None,
            include_deleted=form.get("form:auchGeloeschte_input") == "on",
        )
        per_page = int(form.get("form:ergebnisseProSeite_input", "10"))
        shown = found[:per_page]
        view = View(kind="results", found=found)
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
        shown = view.found[first : first + rows]
        self._link_rows(view, ids, first, shown)
        state = {f"j_id1:{html.VIEW_STATE}:0": str(form.get(html.VIEW_STATE))}
        updates = {table: html.result_rows(ids, first, shown), **state}
        return Response(html.partial_response(updates), media_type="text/xml")

    async def _document_link(self, session: Session, company: Company, kind: str) -> Response:
        if kind == "SI":
            content = await run_in_threadpool(si_document, company)
            return _attachment(content, "text/xml; charset=UTF-8", si_filename(company, datetime.now()))
        if kind == "DK":
            ids = session.new_view(View(kind="documents", company=company))
            return HTMLResponse(html.document_page(ids, session.cid, document_tree(company)))
        if kind in html.DOWNLOAD_KINDS:
            pdf = simple_pdf(f"{kind} {company.name}", [f"Amtsgericht {company.court.name} {company.designation}"])
            return _attachment(pdf, "application/pdf", f"{kind}_{company.register_type}_{company.register_number}.pdf")
        ids = session.new_view(View(kind=kind))
        return HTMLResponse(html.layout(kind, "/rp_web/welcome.xhtml", ids, f"<p>{kind}: {company.name}</p>"))

    async def _tree_request(self, session: Session, view: View, form: FormData) -> Response:
        if view.kind != "documents" or form.get("javax.faces.source") != html.TREE:
            return Response(html.partial_response({}), media_type="text/xml", status_code=400)
        root = document_tree(view.company)
        state = {f"j_id1:{html.VIEW_STATE}:0": str(form.get(html.VIEW_STATE))}
        expand = form.get(f"{html.TREE}_expand")
        if expand is not None:
            node = root.find(str(expand))
            children = node.children if node else ()
            updates = {"dk_formInfobox:messagesDK": '<div id="dk_formInfobox:messagesDK" class="ui-messages ui-widget" aria-live="polite"></div>',
                       html.TREE: html.tree_nodes(children), **state}  # fmt: skip
            return Response(html.partial_response(updates), media_type="text/xml")
        if form.get("javax.faces.behavior.event") == "select":
            node = root.find(str(form.get(f"{html.TREE}_selection", "")))
            ids = html.PageIds(base=session.idt_base, view_state=str(form.get(html.VIEW_STATE)))
            panel = html.download_button(ids, node.label) if node and not node.is_folder else ""
            return Response(html.partial_response({html.DOWNLOAD_PANEL: panel, **state}), media_type="text/xml")
        return Response(html.partial_response(state), media_type="text/xml")

    async def _tree_download(self, view: View, form: FormData) -> Response:
        row_key = str(form.get(f"{html.TREE}_selection", ""))
        document = await run_in_threadpool(tree_document, view.company, row_key)
        if document is None:
            return HTMLResponse(html.message_page("Error", "Please select a document."), status_code=400)
        return _attachment(*document)

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
        fault = next((f for f in self.faults if f.on in ("any", category) and (f.kind != "truncated" or category == "download")), None)
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
        return Response(cut, media_type=response.media_type, headers={"Content-Disposition": response.headers["content-disposition"]})

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


def create_app(corpus: Corpus) -> Starlette:
    register = SampleRegister(corpus)

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
            Route("/rp_web/{page:path}", faulty(register.post), methods=["POST"]),
            Route("/_sample/faults", register.arm_fault, methods=["POST"]),
            Route("/_sample/faults", register.clear_faults, methods=["DELETE"]),
            Route("/_sample/health", register.health, methods=["GET"]),
        ]
    )
    app.state.register = register
    return app
