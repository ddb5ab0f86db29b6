"""Reading the portal's pages: JSF forms and view state, the advanced search form, the result
table, the DK tree and PrimeFaces partial responses.

Only the stable JSF component ids (``schlagwoerter``, ``registerArt``, ``dktree``…) anchor the
search; generated ids (``j_idt227``), form names, field names and option values are taken from
the page. Anything missing raises `PageStructureError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urljoin

from lxml import etree, html

from orchestration.register.errors import PageStructureError
from orchestration.register.results import (
    DOCUMENT_KINDS,
    Announcement,
    AnnouncementDetail,
    DocumentNode,
    EarlierName,
    ResultRow,
    SearchMode,
    german_date,
)

VIEW_STATE = "javax.faces.ViewState"

_SUBMIT_PARAM = re.compile(r"addSubmitParam\('([^']+)',\{([^}]*)\}\)")
_QUOTED_PAIR = re.compile(r"'([^']*)':'([^']*)'")
_DESIGNATION = re.compile(
    r"^(?P<court>.*?)\s+(?P<type>HRA|HRB|GnR|PR|VR|GsR)\s+(?P<number>\d+)(?:\s+(?P<suffix>[A-Za-z]{1,3}))?$"
)
_COURT_PREFIX = re.compile(r"^(amtsgericht|district court|registergericht)\s+", re.IGNORECASE)
_NUMBERED = re.compile(r"^\d+\.\)\s*(?P<text>.*)$")
_RATE_LIMIT_TEXT = re.compile(
    r"too many requests|zu viele (anfragen|abrufe)|maximal zulässige anzahl|maximum number of (requests|retrievals)",
    re.IGNORECASE,
)
# Labels of the keyword options in German and English, the portal's two main languages.
_MODE_LABELS = {
    SearchMode.ALL: re.compile(r"\ball\b|\balle\b", re.IGNORECASE),
    SearchMode.ANY: re.compile(r"at least one|mindestens ein", re.IGNORECASE),
    SearchMode.EXACT: re.compile(r"exact|genau", re.IGNORECASE),
}


def parse_page(content: bytes) -> html.HtmlElement:
    if not content.strip():
        raise PageStructureError("empty page")
    # The portal's pages are UTF-8 (JSF's default), also where a page does not declare it. A
    # parser per page: lxml parsers are not to be shared between threads.
    return html.document_fromstring(content, parser=html.HTMLParser(encoding="utf-8"))


def text_of(element: html.HtmlElement) -> str:
    return " ".join(element.text_content().split())


def is_rate_limit_page(doc: html.HtmlElement) -> bool:
    return bool(_RATE_LIMIT_TEXT.search(text_of(doc)))


def portal_messages(scope: html.HtmlElement) -> list[str]:
    """The error and fatal messages a PrimeFaces p:messages component shows ("summary: detail")."""
    found = []
    for severity in ("fatal", "error"):
        for item in scope.xpath(f'.//div[contains(@class, "ui-messages-{severity}")]//li'):
            parts = [text_of(span) for span in item.xpath(f'.//span[contains(@class, "ui-messages-{severity}-")]')]
            parts = [p for p in parts if p]
            if parts:
                found.append(": ".join(dict.fromkeys(parts)))
    return found


def _one(elements: list, what: str):
    if not elements:
        raise PageStructureError(f"no {what}")
    return elements[0]


def _by_component_id(scope: html.HtmlElement, component: str, tag: str = "*") -> list[html.HtmlElement]:
    """Elements whose JSF client id ends in ``:component``, e.g. ``form:registerArt_input``."""
    return scope.xpath(f'.//{tag}[substring(@id, string-length(@id) - {len(component)}) = ":{component}"]')


# ----------------------------------------------------------------------------- forms


@dataclass
class Form:
    """A JSF form: where it posts and the values a browser would send by default."""

    form_id: str
    action: str
    values: list[tuple[str, str]]

    @property
    def view_state(self) -> str:
        for name, value in self.values:
            if name == VIEW_STATE:
                return value
        raise PageStructureError(f"form {self.form_id} has no view state")

    def payload(
        self, overrides: dict[str, str] | None = None, *, drop: frozenset[str] = frozenset()
    ) -> list[tuple[str, str]]:
        """The default values with ``overrides`` replacing (or adding to) them."""
        overrides = overrides or {}
        kept = [(n, v) for n, v in self.values if n not in overrides and n not in drop]
        return kept + list(overrides.items())

    def with_view_state(self, view_state: str) -> Form:
        values = [(n, view_state if n == VIEW_STATE else v) for n, v in self.values]
        return Form(self.form_id, self.action, values)


def read_form(form: html.FormElement, page_url: str) -> Form:
    form_id = form.get("id") or form.get("name")
    if not form_id or form.get("action") is None:
        raise PageStructureError("a form without id or action")
    return Form(form_id, urljoin(page_url, form.get("action")), list(form.form_values()))


def form_by_id(doc: html.HtmlElement, form_id: str, page_url: str) -> Form:
    return read_form(_one(doc.xpath(f'//form[@id="{form_id}"]'), f"form {form_id}"), page_url)


def submit_params(element: html.HtmlElement) -> tuple[str, dict[str, str]]:
    """The form a command link submits and the parameters it adds (from its onclick)."""
    match = _SUBMIT_PARAM.search(element.get("onclick") or "")
    if not match:
        raise PageStructureError(f"link {element.get('id')!r} submits no parameters")
    return match.group(1), dict(_QUOTED_PAIR.findall(match.group(2)))


def navigation_to(doc: html.HtmlElement, link_component: str, page_url: str) -> tuple[Form, dict[str, str]]:
    """The navigation form and the parameters of one of its links (``erweiterteSucheLink``,
    ``bekanntmachungenLink``…)."""
    link = _one(_by_component_id(doc, link_component, "a"), f"navigation link {link_component}")
    form_id, params = submit_params(link)
    return form_by_id(doc, form_id, page_url), params


# ----------------------------------------------------------------------------- advanced search


@dataclass
class SearchForm:
    form: Form
    keywords_field: str
    mode_field: str
    mode_values: dict[SearchMode, str]
    register_type_field: str
    register_types: dict[str, str]  # shown value -> submitted value
    court_field: str
    courts: dict[str, str]  # court code -> court name
    register_number_field: str
    include_deleted_field: str
    results_per_page_field: str
    results_per_page: list[int]
    submit_field: str

    def court_value(self, court: str) -> str:
        """The option value of a court given by code or by name."""
        if court in self.courts:
            return court
        wanted = court.casefold()
        for code, name in self.courts.items():
            if name.casefold() == wanted:
                return code
        raise ValueError(f"the register knows no court {court!r}")

    @property
    def court_codes(self) -> dict[str, str]:
        """Court names (casefolded) to codes: what the result table shows to what the form takes."""
        return {name.casefold(): code for code, name in self.courts.items()}


def _options(select: html.HtmlElement) -> list[tuple[str, str]]:
    return [(o.get("value", ""), text_of(o)) for o in select.xpath(".//option")]


def parse_search_form(doc: html.HtmlElement, page_url: str) -> SearchForm:
    keywords = _one(
        _by_component_id(doc, "schlagwoerter", "input") + _by_component_id(doc, "schlagwoerter", "textarea"),
        "keyword field",
    )
    form_element = _one(keywords.xpath("ancestor::form[1]"), "form around the keyword field")
    form = read_form(form_element, page_url)

    mode_values: dict[SearchMode, str] = {}
    radios = form_element.xpath('.//input[@type="radio" and contains(@name, "schlagwortOptionen")]')
    for radio in radios:
        label = _one(form_element.xpath(f'.//label[@for="{radio.get("id")}"]'), f"label of {radio.get('id')}")
        for mode, pattern in _MODE_LABELS.items():
            if mode not in mode_values and pattern.search(text_of(label)):
                mode_values[mode] = radio.get("value")
                break
    if set(mode_values) != set(SearchMode):
        raise PageStructureError(f"keyword options found: {sorted(mode_values)}")

    register_type = _one(_by_component_id(form_element, "registerArt_input", "select"), "register type select")
    court = _one(_by_component_id(form_element, "registergericht_input", "select"), "court select")
    number = _one(_by_component_id(form_element, "registerNummer", "input"), "register number field")
    deleted = _one(_by_component_id(form_element, "auchGeloeschte_input", "input"), "include-deleted checkbox")
    per_page = _one(_by_component_id(form_element, "ergebnisseProSeite_input", "select"), "results-per-page select")
    submit = _one(_by_component_id(form_element, "btnSuche"), "search button")
    return SearchForm(
        form=form,
        keywords_field=keywords.get("name"),
        mode_field=radios[0].get("name"),
        mode_values=mode_values,
        register_type_field=register_type.get("name"),
        register_types={label: value for value, label in _options(register_type) if value},
        court_field=court.get("name"),
        courts={value: label for value, label in _options(court) if value},
        register_number_field=number.get("name"),
        include_deleted_field=deleted.get("name"),
        results_per_page_field=per_page.get("name"),
        results_per_page=sorted(int(v) for v, _ in _options(per_page) if v.isdigit()),
        submit_field=submit.get("name") or submit.get("id"),
    )


# ----------------------------------------------------------------------------- result table


@dataclass
class ResultEntry:
    """A row as shown, plus the parameters that post each of its document links."""

    row: ResultRow
    form_id: str
    links: dict[str, dict[str, str]] = field(default_factory=dict)


def _result_table_body(doc: html.HtmlElement) -> html.HtmlElement:
    bodies = doc.xpath('//tbody[contains(concat(" ", normalize-space(@class), " "), " ui-datatable-data ")]')
    return _one(bodies, "result table")


def _numbered(text: str) -> str | None:
    """ "Alte Firma GmbH" of "1.) Alte Firma GmbH"; None for text without the numbering."""
    match = _NUMBERED.match(text)
    return match.group("text").strip() if match else None


def _earlier_names(tr: html.HtmlElement) -> list[EarlierName]:
    """Earlier names and seats: rows whose first cell is numbered "1.) …" (the portal nests them in
    a table of 3-cell rows and numbers the seat too, "1.) Berlin")."""
    earlier = []
    for line in tr.xpath(".//tr[not(.//tr)]"):
        cells = line.xpath("./td")
        name = _numbered(text_of(cells[0])) if cells else None
        if not name:
            continue
        seat_text = text_of(cells[1]) if len(cells) > 1 else ""
        seat = _numbered(seat_text) if _NUMBERED.match(seat_text) else seat_text
        earlier.append(EarlierName(name=name, seat=seat or None))
    return earlier


def _parse_result_row(tr: html.HtmlElement, court_codes: dict[str, str]) -> ResultEntry:
    inner = tr.xpath("./td/table/tbody/tr | ./td/table/tr")
    if len(inner) < 2:
        raise PageStructureError(f"result row {tr.get('data-ri')} has {len(inner)} lines, expected at least 2")
    heading = _one(inner[0].xpath("./td"), "register cell")
    state = (heading.text or "").strip()
    designation = text_of(_one(heading.xpath("./span"), "court and register number"))
    match = _DESIGNATION.match(designation)
    if not match:
        raise PageStructureError(f"cannot read court and register number from {designation!r}")
    court = _COURT_PREFIX.sub("", match.group("court")).strip()

    cells = inner[1].xpath("./td")
    if len(cells) < 4:
        raise PageStructureError(f"result row {tr.get('data-ri')} has {len(cells)} cells, expected 4")
    name_cell, seat_cell, status_cell, links_cell = cells[0], cells[1], cells[2], cells[3]

    links: dict[str, dict[str, str]] = {}
    form_id = ""
    for anchor in links_cell.xpath(".//a"):
        kind = text_of(anchor)
        if kind in DOCUMENT_KINDS:
            form_id, links[kind] = submit_params(anchor)

    row = ResultRow(
        state=state,
        court=court,
        court_code=court_codes.get(court.casefold()),
        register_type=match.group("type"),
        register_number=match.group("number"),
        register_suffix=match.group("suffix"),
        name=text_of(name_cell),
        seat=text_of(seat_cell) or None,
        status=text_of(status_cell),
        documents=[k for k in DOCUMENT_KINDS if k in links],
        earlier_names=_earlier_names(tr),
    )
    return ResultEntry(row=row, form_id=form_id, links=links)


def parse_results(doc: html.HtmlElement, court_codes: dict[str, str] | None = None) -> list[ResultEntry]:
    """Rows of the result table; ``court_codes`` maps court names (casefolded) to codes.

    A table without rows (the portal's "no records found") is an empty list.
    """
    body = _result_table_body(doc)
    codes = court_codes or {}
    return [_parse_result_row(tr, codes) for tr in body.xpath("./tr[@data-ri]")]


_ROW_COUNT = r"PrimeFaces\.cw\(\s*\"DataTable\"\s*,[^{]*\{\s*id\s*:\s*\"%s\"[^;]*?\browCount\s*:\s*(\d+)"


@dataclass
class ResultTable:
    """What paging the result table needs: its component id, page size and row count."""

    table_id: str
    rows_per_page: int
    row_count: int


def parse_result_table(doc: html.HtmlElement) -> ResultTable:
    """The result table's DataTable widget: its paginator's ``rows`` and ``rowCount``."""
    body = _result_table_body(doc)
    components = body.xpath(
        'ancestor::div[contains(concat(" ", normalize-space(@class), " "), " ui-datatable ")][@id][1]'
    )
    table = _one(components, "result table component")
    table_id = table.get("id")
    scripts = "\n".join(doc.xpath("//script/text()"))
    count = re.search(_ROW_COUNT % re.escape(table_id), scripts)
    rows = re.search(r"PrimeFaces\.cw\(\s*\"DataTable\"[^;]*?paginator\s*:\s*\{[^}]*?\brows\s*:\s*(\d+)", scripts)
    shown = len(body.xpath("./tr[@data-ri]"))
    # Without a paginator the table holds every row on one page.
    return ResultTable(table_id, int(rows.group(1)) if rows else shown, int(count.group(1)) if count else shown)


def parse_result_rows(rows_markup: str, court_codes: dict[str, str] | None = None) -> list[ResultEntry]:
    """Rows of a further result page: the ``<tr>`` elements a DataTable page request returns."""
    body = f'<tbody class="ui-datatable-data">{rows_markup}</tbody>'
    doc = html.document_fromstring(f"<html><body><table>{body}</table></body></html>")
    return parse_results(doc, court_codes)


# ----------------------------------------------------------------------------- DK tree


@dataclass
class Behaviour:
    """A PrimeFaces AJAX behaviour (``PrimeFaces.ab({s:…, e:…, p:…, u:…})``): its source, the ids it
    executes and the ids it updates (``u``, space-separated on the portal)."""

    source: str
    execute: str
    updates: list[str]
    form: str | None = None  # ``f``: the form whose fields the request carries

    @property
    def render(self) -> str:
        return " ".join(self.updates)


@dataclass
class DownloadControls:
    """What the DK page offers for downloading the selected document."""

    button: str  # the Download button's name
    format_field: str | None  # the format radio: "false" the original file, "true" a ZIP
    formats: list[str]  # the radio's enabled values
    enabled: bool  # whether the button is enabled


@dataclass
class DocumentTree:
    form: Form
    tree_id: str
    select: Behaviour
    nodes: list[DocumentNode]
    expanded: set[str]  # folders the page shows expanded, children included
    controls: DownloadControls


_SELECT_BEHAVIOUR = re.compile(
    r"\bselect\s*:\s*function\s*\(\s*ext\s*,\s*event\s*\)\s*\{\s*PrimeFaces\.ab\(\{(?P<args>[^}]*)\}"
)
_BEHAVIOUR_ARG = re.compile(r'\b(?P<key>[a-z]+)\s*:\s*"(?P<value>[^"]*)"')


def parse_tree_nodes(fragment_root: html.HtmlElement) -> list[DocumentNode]:
    """The tree nodes directly under ``fragment_root`` (a tree container or a children list).

    A node is a document when PrimeFaces marks its type ``doc``; a node without children that is
    not (an empty category) is a folder. Without a type, leaves count as documents."""
    nodes = []
    for li in fragment_root.xpath("./li[@data-rowkey] | ./ul/li[@data-rowkey]"):
        label = text_of(_one(li.xpath('./span//span[contains(@class, "ui-treenode-label")]'), "node label"))
        node_type = li.get("data-nodetype")
        leaf = "ui-treenode-leaf" in (li.get("class") or "")
        is_document = node_type == "doc" if node_type else leaf
        children = li.xpath('./ul[contains(@class, "ui-treenode-children")]')
        nodes.append(
            DocumentNode(
                row_key=li.get("data-rowkey"),
                label=label,
                kind="document" if is_document else "folder",
                children=parse_tree_nodes(children[0]) if children else [],
            )
        )
    return nodes


def expanded_row_keys(fragment_root: html.HtmlElement) -> set[str]:
    """Row keys of folders shown expanded (their children are in the markup), and of empty folders."""
    keys = set(fragment_root.xpath('.//li[@data-rowkey][./span[@aria-expanded="true"]]/@data-rowkey'))
    return keys | set(fragment_root.xpath('.//li[@data-rowkey][contains(@class, "ui-treenode-leaf")]/@data-rowkey'))


def download_controls(scope: html.HtmlElement) -> DownloadControls:
    """The Download button and the format radio within ``scope`` (the page or an update of its panel)."""
    buttons = scope.xpath('.//button[@type="submit"] | .//input[@type="submit"]')
    button = next(
        (b for b in buttons if "download" in text_of(b).casefold() or "download" in (b.get("value") or "").casefold()),
        buttons[0] if buttons else None,
    )
    if button is None:
        raise PageStructureError("no download button")
    radios = scope.xpath('.//input[@type="radio"]')
    return DownloadControls(
        button=button.get("name") or button.get("id"),
        format_field=radios[0].get("name") if radios else None,
        formats=[r.get("value") for r in radios if r.get("disabled") is None],
        enabled=button.get("disabled") is None,
    )


def parse_behaviour(scripts: str, event: str, source: str) -> Behaviour:
    """The ``select`` behaviour of component ``source`` in the page's scripts."""
    for match in _SELECT_BEHAVIOUR.finditer(scripts):
        args = {m.group("key"): m.group("value") for m in _BEHAVIOUR_ARG.finditer(match.group("args"))}
        if args.get("s") == source:
            return Behaviour(
                source=source, execute=args.get("p", source), updates=args.get("u", source).split(), form=args.get("f")
            )
    raise PageStructureError(f"tree {source} has no {event} behaviour")


def parse_document_tree(doc: html.HtmlElement, page_url: str) -> DocumentTree:
    tree = _one(
        doc.xpath('//div[contains(concat(" ", normalize-space(@class), " "), " ui-tree ")][@id]'), "document tree"
    )
    tree_id = tree.get("id")
    form_element = _one(tree.xpath("ancestor::form[1]"), "form around the document tree")
    form = read_form(form_element, page_url)
    select = parse_behaviour("\n".join(doc.xpath("//script/text()")), "select", tree_id)
    container = _one(tree.xpath('./ul[contains(@class, "ui-tree-container")]'), "tree container")
    return DocumentTree(
        form=form,
        tree_id=tree_id,
        select=select,
        nodes=parse_tree_nodes(container),
        expanded=expanded_row_keys(container),
        controls=download_controls(form_element),
    )


# ----------------------------------------------------------------------------- partial responses


@dataclass
class PartialResponse:
    updates: dict[str, str]
    redirect: str | None = None

    @property
    def view_state(self) -> str | None:
        return next((v.strip() for k, v in self.updates.items() if VIEW_STATE in k), None)

    def fragment(self, component_id: str) -> html.HtmlElement:
        if component_id not in self.updates:
            raise PageStructureError(f"partial response does not update {component_id}")
        return html.fragment_fromstring(self.updates[component_id], create_parent="div")

    def messages(self) -> list[str]:
        """Error messages in any update (the portal's p:messages components)."""
        found: list[str] = []
        for key, content in self.updates.items():
            if VIEW_STATE not in key and "ui-messages" in content:
                found += portal_messages(html.fragment_fromstring(content, create_parent="div"))
        return found


def parse_partial_response(content: bytes, *, redirect_allowed: bool = False) -> PartialResponse:
    try:
        root = etree.fromstring(content)
    except etree.XMLSyntaxError as exc:
        raise PageStructureError(f"partial response is not XML ({exc})") from exc
    if root.tag != "partial-response":
        # An element's tag is a str; lxml's stubs type it as any tag name lxml accepts, bytes included.
        raise PageStructureError(f"expected a partial-response, got <{root.tag}>")  # type: ignore[str-bytes-safe]
    error = root.find("error")
    if error is not None:
        raise PageStructureError(f"partial response reports an error: {' '.join(error.itertext()).strip()}")
    redirect = root.find("redirect")
    if redirect is not None and not redirect_allowed:
        raise PageStructureError("partial response redirects (session expired?)")
    return PartialResponse(
        {u.get("id", ""): u.text or "" for u in root.iter("update")},
        redirect.get("url") if redirect is not None else None,
    )


# ----------------------------------------------------------------------------- announcements


@dataclass
class AnnouncementForm:
    form: Form
    date_from_field: str
    date_to_field: str
    state_field: str
    states: dict[str, str]  # value -> name
    court_field: str
    courts: dict[str, str]  # code -> name
    seat_field: str | None
    category_field: str
    categories: dict[str, str]  # value -> label
    submit_field: str

    def state_value(self, state: str) -> str:
        if state in self.states:
            return state
        return next((v for v, name in self.states.items() if name.casefold() == state.casefold()), None) or _unknown(
            "state", state
        )

    def court_value(self, court: str) -> str:
        if court in self.courts:
            return court
        return next((c for c, name in self.courts.items() if name.casefold() == court.casefold()), None) or _unknown(
            "court", court
        )


def _unknown(what: str, value: str) -> str:
    raise ValueError(f"the register's announcements know no {what} {value!r}")


def parse_announcement_form(doc: html.HtmlElement, page_url: str) -> AnnouncementForm:
    date_from = _one(_by_component_id(doc, "datum_von_input", "input"), "announcement date-from field")
    form_element = _one(date_from.xpath("ancestor::form[1]"), "form around the announcement search")
    state = _one(_by_component_id(form_element, "land_input", "select"), "state select")
    court = _one(_by_component_id(form_element, "registergericht_input", "select"), "court select")
    category = _one(_by_component_id(form_element, "kategorie_input", "select"), "category select")
    seat = _by_component_id(form_element, "sitz", "input")
    submit = _one(_by_component_id(form_element, "rrbSuche"), "announcement search button")
    return AnnouncementForm(
        form=read_form(form_element, page_url),
        date_from_field=date_from.get("name"),
        date_to_field=_one(_by_component_id(form_element, "datum_bis_input", "input"), "date-to field").get("name"),
        state_field=state.get("name"),
        states={value: label for value, label in _options(state) if value},
        court_field=court.get("name"),
        courts={value: label for value, label in _options(court) if value},
        seat_field=seat[0].get("name") if seat else None,
        category_field=category.get("name"),
        categories={value: label for value, label in _options(category) if value},
        submit_field=submit.get("name") or submit.get("id"),
    )


_FIRE = re.compile(r"fireBekanntmachung\d*\(\s*'(?P<date>[^']*)'\s*,\s*'(?P<id>[^']+)'\s*\)")
_REMOTE = re.compile(r"remoteBekanntmachung\s*=\s*function\s*\(\s*\)\s*\{\s*PrimeFaces\.ab\(\{(?P<args>[^}]*)\}")


def _court_line(line: str) -> tuple[str, str, re.Match | None]:
    """ "Bayern Amtsgericht München HRB 242458": state, court and the register designation."""
    state, _, rest = line.partition(" ")
    match = _DESIGNATION.match(rest)
    court = _COURT_PREFIX.sub("", match.group("court") if match else rest).strip()
    return state, court, match


def parse_announcements(doc: html.HtmlElement, categories: dict[str, str] | None = None) -> list[Announcement]:
    """The results of an announcement search, day by day; ``categories`` maps values to labels.

    A page with the data list but no entries is an empty list; a page without it is refused."""
    data = _one(doc.xpath('//dl[substring(@id, string-length(@id) - 14) = "datalistId_list"]'), "announcement list")
    codes = {label.casefold(): value for value, label in (categories or {}).items()}
    found = []
    published = None
    for block in data.xpath("./dt | ./dd"):
        if block.tag == "dt":
            published = german_date(text_of(block))
            continue
        for anchor in block.xpath("./a"):
            fire = _FIRE.search(anchor.get("onclick") or "")
            label = anchor.xpath("./label")
            if not fire or not label or published is None:
                continue
            lines = [" ".join(t.split()) for t in label[0].xpath(".//text()") if t.strip()]
            if len(lines) < 3:
                raise PageStructureError(f"announcement {fire.group('id')} has {len(lines)} lines, expected 3")
            state, court, designation = _court_line(lines[1])
            name, dash, seat = lines[2].rpartition(" – ")  # the portal's dash
            found.append(
                Announcement(
                    id=fire.group("id"),
                    published=published,
                    category=lines[0],
                    category_code=codes.get(lines[0].casefold()),
                    state=state,
                    court=court,
                    register_type=designation.group("type") if designation else None,
                    register_number=designation.group("number") if designation else None,
                    register_suffix=designation.group("suffix") if designation else None,
                    name=name if dash else lines[2],
                    seat=(seat if dash else None) or None,
                    portal_date=fire.group("date"),
                )
            )
    return found


def announcement_command(doc: html.HtmlElement) -> Behaviour:
    """The remote command (``remoteBekanntmachung``) that opens an announcement."""
    match = _REMOTE.search("\n".join(doc.xpath("//script/text()")))
    if not match:
        raise PageStructureError("no remoteBekanntmachung command")
    args = {m.group("key"): m.group("value") for m in _BEHAVIOUR_ARG.finditer(match.group("args"))}
    if "s" not in args:
        raise PageStructureError("the remoteBekanntmachung command names no source")
    return Behaviour(
        source=args["s"], execute=args.get("p", args["s"]), updates=args.get("u", args["s"]).split(), form=args.get("f")
    )


def parse_announcement_detail(doc: html.HtmlElement) -> AnnouncementDetail:
    panel = _one(doc.xpath('//*[@id="rrbPanel_content"]'), "announcement panel")
    labels = [t for t in (text_of(label) for label in panel.xpath(".//label")) if t]
    entered = None
    if "(Eintragungsdatum)" in labels:
        i = labels.index("(Eintragungsdatum)")
        entered = german_date(labels[i - 1]) if i else None
        labels = labels[: i - 1] + labels[i + 1 :]
    if len(labels) < 4:
        raise PageStructureError(f"announcement page has {len(labels)} lines, expected at least 4")
    rest = labels[3:]
    return AnnouncementDetail(
        published=german_date(labels[0]),
        court_line=labels[1],
        category=labels[2],
        entered=entered,
        name=rest[0],
        legal_form=rest[1] if len(rest) > 3 else None,
        seat=rest[2] if len(rest) > 3 else None,
        text="\n\n".join(rest[3:] if len(rest) > 3 else rest[1:]),
    )
