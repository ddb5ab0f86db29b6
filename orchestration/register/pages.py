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
from orchestration.register.models import DOCUMENT_KINDS, DocumentNode, EarlierName, ResultRow, SearchMode

VIEW_STATE = "javax.faces.ViewState"

_SUBMIT_PARAM = re.compile(r"addSubmitParam\('([^']+)',\{([^}]*)\}\)")
_QUOTED_PAIR = re.compile(r"'([^']*)':'([^']*)'")
_DESIGNATION = re.compile(r"^(?P<court>.*?)\s+(?P<type>HRA|HRB|GnR|PR|VR|GsR)\s+(?P<number>\d+)(?:\s+(?P<suffix>[A-Za-z]{1,3}))?$")
_COURT_PREFIX = re.compile(r"^(amtsgericht|district court|registergericht)\s+", re.IGNORECASE)
_EARLIER_NAME = re.compile(r"^\d+\.\)\s*(?P<name>.+)$")
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
    return html.document_fromstring(content)


def text_of(element: html.HtmlElement) -> str:
    return " ".join(element.text_content().split())


def is_rate_limit_page(doc: html.HtmlElement) -> bool:
    return bool(_RATE_LIMIT_TEXT.search(text_of(doc)))


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

    def payload(self, overrides: dict[str, str] | None = None, *, drop: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
        """The default values with ``overrides`` replacing (or adding to) them."""
        overrides = overrides or {}
        kept = [(n, v) for n, v in self.values if n not in overrides and n not in drop]
        return kept + list(overrides.items())

    def with_view_state(self, view_state: str) -> Form:
        values = [(n, view_state if n == VIEW_STATE else v) for n, v in self.values]
        return Form(self.form_id, self.action, values)


def read_form(form: html.HtmlElement, page_url: str) -> Form:
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


def navigation_to_advanced_search(doc: html.HtmlElement, page_url: str) -> tuple[Form, dict[str, str]]:
    """The navigation form and the parameters of its "advanced search" link."""
    link = _one(_by_component_id(doc, "erweiterteSucheLink", "a"), "link to the advanced search")
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
    keywords = _one(_by_component_id(doc, "schlagwoerter", "input") + _by_component_id(doc, "schlagwoerter", "textarea"), "keyword field")
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


def _parse_result_row(tr: html.HtmlElement, court_codes: dict[str, str]) -> ResultEntry:
    inner = tr.xpath(".//table//tr")
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

    earlier: list[EarlierName] = []
    for line in inner[2:]:
        line_cells = line.xpath("./td")
        old = _EARLIER_NAME.match(text_of(line_cells[0])) if line_cells else None
        if old:
            seat = text_of(line_cells[1]) if len(line_cells) > 1 else ""
            earlier.append(EarlierName(name=old.group("name"), seat=seat or None))

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
        earlier_names=earlier,
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
    components = body.xpath('ancestor::div[contains(concat(" ", normalize-space(@class), " "), " ui-datatable ")][@id][1]')
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
class DocumentTree:
    form: Form
    tree_id: str
    select_render: str  # what the tree's select behaviour re-renders: the download panel
    nodes: list[DocumentNode]


def parse_tree_nodes(fragment_root: html.HtmlElement) -> list[DocumentNode]:
    """The tree nodes directly under ``fragment_root`` (a tree container or a children list)."""
    nodes = []
    for li in fragment_root.xpath('./li[@data-rowkey] | ./ul/li[@data-rowkey]'):
        label = text_of(_one(li.xpath('.//span[contains(@class, "ui-treenode-label")]'), "node label"))
        leaf = "ui-treenode-leaf" in (li.get("class") or "")
        children = li.xpath('./ul[contains(@class, "ui-treenode-children")]')
        nodes.append(
            DocumentNode(
                row_key=li.get("data-rowkey"),
                label=label,
                kind="document" if leaf else "folder",
                children=parse_tree_nodes(children[0]) if children else [],
            )
        )
    return nodes


def parse_document_tree(doc: html.HtmlElement, page_url: str) -> DocumentTree:
    tree = _one(doc.xpath('//div[contains(concat(" ", normalize-space(@class), " "), " ui-tree ")][@id]'), "document tree")
    tree_id = tree.get("id")
    form = read_form(_one(tree.xpath("ancestor::form[1]"), "form around the document tree"), page_url)
    behaviour = re.search(
        r'select:function\(ext,event\)\{PrimeFaces\.ab\(\{[^}]*\bs:"' + re.escape(tree_id) + r'"[^}]*\bu:"([^"]+)"',
        "\n".join(doc.xpath("//script/text()")),
    )
    if not behaviour:
        raise PageStructureError(f"tree {tree_id} has no select behaviour")
    container = _one(tree.xpath('./ul[contains(@class, "ui-tree-container")]'), "tree container")
    return DocumentTree(form=form, tree_id=tree_id, select_render=behaviour.group(1), nodes=parse_tree_nodes(container))


# ----------------------------------------------------------------------------- partial responses


@dataclass
class PartialResponse:
    updates: dict[str, str]

    @property
    def view_state(self) -> str | None:
        return next((v.strip() for k, v in self.updates.items() if VIEW_STATE in k), None)

    def fragment(self, component_id: str) -> html.HtmlElement:
        if component_id not in self.updates:
            raise PageStructureError(f"partial response does not update {component_id}")
        return html.fragment_fromstring(self.updates[component_id], create_parent="ul")


def parse_partial_response(content: bytes) -> PartialResponse:
    try:
        root = etree.fromstring(content)
    except etree.XMLSyntaxError as exc:
        raise PageStructureError(f"partial response is not XML ({exc})") from exc
    if root.tag != "partial-response":
        raise PageStructureError(f"expected a partial-response, got <{root.tag}>")
    error = root.find("error")
    if error is not None:
        raise PageStructureError(f"partial response reports an error: {' '.join(error.itertext()).strip()}")
    if root.find("redirect") is not None:
        raise PageStructureError("partial response redirects (session expired?)")
    return PartialResponse({u.get("id"): u.text or "" for u in root.iter("update")})


def button_in(fragment: html.HtmlElement) -> str:
    """The name of the (first) submit button in a fragment: the download button after a selection."""
    button = _one(fragment.xpath('.//button[@type="submit"] | .//input[@type="submit"]'), "download button")
    return button.get("name") or button.get("id")
