"""The sample register's markup, modelled on the recorded portal pages (samples/portal): JSF forms
with `javax.faces.ViewState`, PrimeFaces widgets and their ids, the result table, the DK tree
and partial responses. Generated ids (``j_idtNNN``) differ between sessions, as on the portal.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from html import escape
from zoneinfo import ZoneInfo

from orchestration.register.results import DOCUMENT_KINDS
from sample_register.company import Company
from sample_register.courts import Court
from sample_register.documents import TreeNode

VIEW_STATE = "javax.faces.ViewState"
RESULTS_TABLE = "ergebnissForm:selectedSuchErgebnisFormTable"
TREE = "dk_form:dktree"
DETAILS_PANEL = "dk_form:detailsNodePanelGrid"
FORMAT_RADIO = "dk_form:radio_dkbuttons"
INFOBOX = "dk_formInfobox"
# What the tree's select behaviour updates on the portal: several ids, space-separated.
SELECT_UPDATES = f"{DETAILS_PANEL} {TREE} {INFOBOX}"
# The format radio: "false" the original file (PDF or TIFF), "true" a ZIP.
FORMAT_OPTIONS = (("false", "Originaldokument (PDF/TIFF)"), ("true", "ZIP-Datei"))
# Labels of the keyword options and their values (schlagwortOptionen).
KEYWORD_OPTIONS = (
    ("1", "contain all keywords"),
    ("2", "contain at least one keyword"),
    ("3", "contain the exact name of the company"),
)
RESULTS_PER_PAGE = (10, 25, 50, 100)
# Kinds whose link downloads at once; the others open a page (property Global.Dokumentart.*).
DOWNLOAD_KINDS = frozenset({"AD", "CD", "HD", "SI"})


@dataclass
class PageIds:
    """Generated component ids of one rendered page, numbered from a per-session base."""

    base: int
    view_state: str
    forms: int = field(default=0)

    def idt(self, offset: int) -> str:
        return f"j_idt{self.base + offset}"

    def state_input(self) -> str:
        number = self.forms
        self.forms += 1
        return (
            f'<input type="hidden" name="{VIEW_STATE}" id="j_id1:{VIEW_STATE}:{number}" '
            f'value="{escape(self.view_state)}" autocomplete="off">'
        )


def _form(form_id: str, action: str, ids: PageIds, body: str) -> str:
    return (
        f'<form id="{form_id}" name="{form_id}" method="post" action="{escape(action)}" '
        f'enctype="application/x-www-form-urlencoded">\n<input type="hidden" name="{form_id}" value="{form_id}">\n'
        f"{ids.state_input()}\n{body}</form>"
    )


def _submit_link(form_id: str, link_id: str, text: str, extra: dict[str, str] | None = None, css: str = "") -> str:
    params = {link_id: link_id, **(extra or {})}
    js_params = ",".join(f"'{escape(k)}':'{escape(v)}'" for k, v in params.items())
    return (
        f'<a id="{link_id}" href="#" class="ui-commandlink ui-widget {css}" '
        f"onclick=\"PrimeFaces.addSubmitParam('{form_id}',{{{js_params}}}).submit('{form_id}');return false;\">{text}</a>"
    )


def _navigation(action: str, ids: PageIds) -> str:
    links = (
        ("welcomeLinkAdmin", "Homepage"),
        ("normaleSucheLink", "Normal search"),
        ("erweiterteSucheLink", "Advanced search"),
        ("bekanntmachungenLink", "Register announcements"),
    )
    items = "".join(
        '<li class="ui-menuitem ui-widget ui-corner-all" role="menuitem">'
        + _submit_link(
            "naviForm",
            f"naviForm:{name}",
            f'<span class="ui-menuitem-text"><span>{label}</span></span>',
            {"target": name},
            "ui-menuitem-link ui-corner-all rpNavMainMenuItem",
        )
        + "</li>"
        for name, label in links
    )
    menu = f'<div id="naviForm:rpNavMainMenuID" class="ui-menu ui-widget rpNavMainMenu" role="menu"><ul class="ui-menu-list ui-helper-reset">{items}</ul></div>\n'
    return _form("naviForm", action, ids, menu)


def layout(title: str, action: str, ids: PageIds, content: str) -> str:
    return (
        '<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head id="mainHead">'
        '<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />'
        f"<title>Registerportal | {escape(title)}</title></head>\n"
        '<body id="mainBody"><div id="page-wrapper" class="ui-fluid">\n'
        f'<div id="navi">{_navigation(action, ids)}</div>\n'
        f'<div id="contentID"><div id="contentHeader" class="contentHeader"><h1>{escape(title)}</h1></div>\n'
        f'<div id="contentInhalt">{content}</div></div>\n'
        '<div id="footer"><p id="footerVersionP">Sample register: an imitation of the common register portal of the German federal states.</p></div>'
        "</div></body></html>\n"
    )


def welcome_page(ids: PageIds) -> str:
    text = "<p>Welcome to the common register portal of the German federal states.</p>"
    return layout("Homepage", "/rp_web/welcome.xhtml", ids, text)


# ----------------------------------------------------------------------------- advanced search


def _select(component: str, options: list[tuple[str, str]], selected: str = "", form_id: str = "form") -> str:
    rendered = "".join(
        f'<option value="{escape(v)}"{" selected" if v == selected else ""}>{escape(label)}</option>'
        for v, label in options
    )
    return (
        f'<div id="{form_id}:{component}" class="ui-selectonemenu ui-widget ui-state-default ui-corner-all">'
        f'<div class="ui-helper-hidden-accessible"><select id="{form_id}:{component}_input" name="{form_id}:{component}_input" '
        f'tabindex="-1" autocomplete="off">{rendered}</select></div></div>'
    )


def _radio_cells(
    name: str, options: Iterable[tuple[str, str]], *, checked: str | None, disabled: Collection[str] = ()
) -> str:
    """The cells of a PrimeFaces SelectOneRadio: one hidden-accessible input and label per option."""
    off, off_label = ' disabled="disabled"', ' class="ui-state-disabled"'
    return "".join(
        f'<td><div class="ui-radiobutton ui-widget"><div class="ui-helper-hidden-accessible">'
        f'<input id="{name}:{i}" name="{name}" type="radio" value="{value}"'
        f"{' checked' if value == checked else ''}{off if value in disabled else ''}></div></div>"
        f'<label for="{name}:{i}"{off_label if value in disabled else ""}>{label}</label></td>'
        for i, (value, label) in enumerate(options)
    )


def messages(component_id: str, errors: Iterable[tuple[str, str]] = ()) -> str:
    """A PrimeFaces p:messages component showing ``errors`` (summary, detail)."""
    items = "".join(
        '<li role="alert" aria-atomic="true">'
        f'<span class="ui-messages-error-summary">{escape(summary)}</span>'
        f'<span class="ui-messages-error-detail">{escape(detail)}</span></li>'
        for summary, detail in errors
    )
    box = (
        '<div class="ui-messages-error ui-corner-all"><a href="#" class="ui-messages-close" '
        'onclick="$(this).parent().slideUp();return false;"><span class="ui-icon ui-icon-close"></span></a>'
        f'<span class="ui-messages-error-icon"></span><ul>{items}</ul></div>'
        if items
        else ""
    )
    return f'<div id="{component_id}" class="ui-messages ui-widget" aria-live="polite">{box}</div>'


def search_page(ids: PageIds, cid: int, courts: list[Court], errors: Iterable[tuple[str, str]] = ()) -> str:
    radios = _radio_cells("form:schlagwortOptionen", KEYWORD_OPTIONS, checked=KEYWORD_OPTIONS[0][0])
    register_types = [("", "- all -")] + [(t, t) for t in ("HRA", "HRB", "GnR", "PR", "VR")]
    court_options = [("", "- all -")] + [(c.code, c.name) for c in courts]
    body = (
        f"{messages('form:messages', errors)}\n"
        '<label for="form:schlagwoerter">Keywords</label>'
        '<textarea id="form:schlagwoerter" name="form:schlagwoerter" rows="3" cols="20" maxlength="1000" '
        'class="ui-inputfield ui-inputtextarea ui-widget ui-state-default ui-corner-all"></textarea>\n'
        f'<table id="form:schlagwortOptionen" class="ui-selectoneradio ui-widget" role="radiogroup"><tbody><tr>{radios}</tr></tbody></table>\n'
        '<div id="form:aenlichLautendeSchlagwoerterBoolChkbox" class="ui-chkbox ui-widget"><div class="ui-helper-hidden-accessible">'
        '<input id="form:aenlichLautendeSchlagwoerterBoolChkbox_input" name="form:aenlichLautendeSchlagwoerterBoolChkbox_input" type="checkbox"></div></div>'
        '<label for="form:aenlichLautendeSchlagwoerterBoolChkbox_input">Similar-sounding keywords</label>\n'
        '<div id="form:auchGeloeschte" class="ui-chkbox ui-widget"><div class="ui-helper-hidden-accessible">'
        '<input id="form:auchGeloeschte_input" name="form:auchGeloeschte_input" type="checkbox"></div></div>'
        '<label for="form:auchGeloeschte_input">Also find deleted companies</label>\n'
        f'<label for="form:registerArt_input">Register type</label>{_select("registerArt", register_types)}\n'
        '<label for="form:registerNummer">Register number</label>'
        '<input id="form:registerNummer" name="form:registerNummer" type="text" class="ui-inputfield ui-inputtext ui-widget">\n'
        f'<label for="form:registergericht_input">Register court</label>{_select("registergericht", court_options)}\n'
        f'<label for="form:ergebnisseProSeite_input">Results per page</label>'
        f"{_select('ergebnisseProSeite', [(str(n), str(n)) for n in RESULTS_PER_PAGE], '10')}\n"
        '<button id="form:btnSuche" name="form:btnSuche" class="ui-button ui-widget ui-state-default ui-corner-all '
        'ui-button-text-only" type="submit"><span class="ui-button-text ui-c">Find</span></button>\n'
    )
    return layout(
        "Advanced search",
        f"/rp_web/erweitertesuche/welcome.xhtml?cid={cid}",
        ids,
        _form("form", f"/rp_web/erweitertesuche/welcome.xhtml?cid={cid}", ids, body),
    )


# ----------------------------------------------------------------------------- results


def link_id(ids: PageIds, row: int, kind_index: int, kind: str) -> str:
    suffix = "fade_" if kind in DOWNLOAD_KINDS else "fade1_"
    return f"{RESULTS_TABLE}:{row}:{ids.idt(14)}:{kind_index}:{suffix}"


def _result_row(ids: PageIds, index: int, company: Company) -> str:
    links = []
    for k, kind in enumerate(DOCUMENT_KINDS):
        label = f'<span class="underlinedText">{escape(kind)}</span>'
        if kind == "HD" and not company.deleted:
            # Like the portal: no historical printout for most current entries, shown without a link.
            links.append(
                f'<span id="{RESULTS_TABLE}:{index}:{ids.idt(14)}:{k}:fade2_" class="dokumentList notUnderlinedText">HD</span>'
            )
        elif kind in DOWNLOAD_KINDS:
            links.append(_submit_link("ergebnissForm", link_id(ids, index, k, kind), label, css="dokumentList"))
        else:
            links.append(
                _submit_link(
                    "ergebnissForm",
                    link_id(ids, index, k, kind),
                    label,
                    {"property2": "", "property": f"Global.Dokumentart.{kind}"},
                    "dokumentList",
                )
            )
    earlier = ""
    if company.earlier_names:
        # As on the portal: a nested table of 3-cell rows; the seat is numbered like the name.
        lines = "".join(
            '<tr class="ui-widget-content" role="row">'
            f'<td role="gridcell" class="ui-panelgrid-cell" colspan="5"><span class="marginLeft20 fontSize85">{n}.) {escape(name)}</span></td>'
            f'<td role="gridcell" class="ui-panelgrid-cell"><span class="verticalText fontSize85">{n}.) {escape(seat)}</span></td>'
            '<td role="gridcell" class="ui-panelgrid-cell"></td></tr>'
            for n, (name, seat) in enumerate(company.earlier_names, start=1)
        )
        earlier = (
            '<tr class="ui-widget-content ui-panelgrid-even" role="row"><td role="gridcell" class="ui-panelgrid-cell" colspan="9">'
            f'<table id="{RESULTS_TABLE}:{index}:{ids.idt(16)}" class="ui-panelgrid ui-widget" role="grid"><tbody>{lines}</tbody></table></td></tr>'
        )
    status = "deleted" if company.deleted else "currently registered"
    return (
        f'<tr data-ri="{index}" class="ui-widget-content ui-datatable-{"even" if index % 2 == 0 else "odd"}" role="row">'
        f'<td role="gridcell" colspan="9" class="borderBottom3"><table id="{RESULTS_TABLE}:{index}:{ids.idt(0)}" class="ui-panelgrid ui-widget" role="grid"><tbody>'
        '<tr class="ui-widget-content ui-panelgrid-even borderBottom1" role="row">'
        f'<td role="gridcell" class="ui-panelgrid-cell fontTableNameSize" colspan="5">{escape(company.court.state)}  '
        f'<span class="fontWeightBold"> District court {escape(company.court.name)} {escape(company.designation)}  </span></td></tr>'
        '<tr class="ui-widget-content ui-panelgrid-odd" role="row">'
        f'<td role="gridcell" class="ui-panelgrid-cell paddingBottom20Px" colspan="5"><span class="marginLeft20">{escape(company.name)}</span></td>'
        f'<td role="gridcell" class="ui-panelgrid-cell sitzSuchErgebnisse"><span class="verticalText ">{escape(company.seat)}</span></td>'
        f'<td role="gridcell" class="ui-panelgrid-cell" style="text-align: center;padding-bottom: 20px;"><span class="verticalText">{status}</span></td>'
        f'<td role="gridcell" class="ui-panelgrid-cell textAlignLeft paddingBottom20Px" colspan="2">'
        f'<div id="{RESULTS_TABLE}:{index}:{ids.idt(13)}" class="ui-outputpanel ui-widget linksPanel">{"".join(links)}</div></td></tr>'
        f"{earlier}</tbody></table></td></tr>"
    )


def result_rows(ids: PageIds, first: int, shown: list[Company]) -> str:
    """The rows of one result page, numbered from ``first`` as the portal numbers them (data-ri)."""
    return "".join(_result_row(ids, first + i, c) for i, c in enumerate(shown))


def results_page(ids: PageIds, cid: int, shown: list[Company], total: int, per_page: int) -> str:
    if shown:
        rows = result_rows(ids, 0, shown)
        current = f"1-{len(shown)} of {total} records"
    else:
        rows = '<tr class="ui-widget-content ui-datatable-empty-message"><td colspan="9">No records found.</td></tr>'
        current = "0 records"
    headers = "".join(
        f'<th id="{RESULTS_TABLE}:{ids.idt(20 + 2 * i)}" class="ui-state-default" role="columnheader" aria-label="{h}" scope="col">'
        f'<span class="ui-column-title">{h}</span></th>'
        for i, h in enumerate(("State", "Court", "Type of register", "Register number", "Registered office", "Status"))
    )
    options = "".join(
        f'<option value="{n}"{" selected" if n == per_page else ""}>{n}</option>' for n in RESULTS_PER_PAGE
    )
    table = (
        '<div id="ergebnissForm:messages" class="ui-messages ui-widget" aria-live="polite"></div>'
        f'<div id="{RESULTS_TABLE}" class="ui-datatable ui-widget borderless tabelshadow">'
        f'<div id="{RESULTS_TABLE}_paginator_top" class="ui-paginator ui-paginator-top ui-widget-header" role="navigation">'
        f'<span class="ui-paginator-current">{current}</span>'
        f'<select id="{RESULTS_TABLE}:j_id2" name="{RESULTS_TABLE}_rppDD" class="ui-paginator-rpp-options" autocomplete="off">{options}</select></div>'
        f'<div class="ui-datatable-tablewrapper"><table role="grid"><thead id="{RESULTS_TABLE}_head"><tr role="row">{headers}</tr></thead>'
        f'<tbody id="{RESULTS_TABLE}_data" class="ui-datatable-data ui-widget-content">{rows}</tbody></table></div></div>'
        # The DataTable widget as PrimeFaces writes it: its paginator knows the page size and row count.
        f'<script id="{RESULTS_TABLE}_s" type="text/javascript">$(function(){{PrimeFaces.cw("DataTable","suchErgebnisTable",'
        f"{{id:\"{RESULTS_TABLE}\",paginator:{{id:['{RESULTS_TABLE}_paginator_top'],rows:{per_page},rowCount:{total},page:0,"
        "currentPageTemplate:'{startRecord}-{endRecord} of {totalRecords} records'}});});</script>\n"
    )
    action = f"/rp_web/sucheErgebnisse/welcome.xhtml?cid={cid}"
    return layout("Search Result", action, ids, _form("ergebnissForm", action, ids, table))


# ----------------------------------------------------------------------------- DK tree


def _tree_node(node: TreeNode, expanded: frozenset[str], selected: str | None) -> str:
    state = "ui-treenode-selected" if node.row_key == selected else "ui-treenode-unselected"
    highlight = " ui-state-highlight" if node.row_key == selected else ""
    aria_selected = "true" if node.row_key == selected else "false"
    label = f'<span class="ui-treenode-label ui-corner-all" tabindex="-1" role="treeitem">{escape(node.label)}</span>'
    node_type = "doc" if node.is_document else "list"
    if not node.children:
        # Documents, and categories without documents: PrimeFaces renders every node without children as a leaf.
        return (
            f'<li id="{TREE}:{node.row_key}" data-rowkey="{node.row_key}" data-nodetype="{node_type}" '
            f'class="ui-treenode ui-treenode-leaf {state}"><span class="ui-treenode-content ui-tree-selectable{highlight}" '
            f'role="treeitem" aria-selected="{aria_selected}"><span class="ui-tree-toggler ui-icon ui-icon-transparent"></span>'
            f"<span></span>{label}</span></li>"
        )
    is_open = node.row_key in expanded
    children = "".join(_tree_node(c, expanded, selected) for c in node.children) if is_open else ""
    hidden = "" if is_open else ' style="display:none"'
    return (
        f'<li id="{TREE}:{node.row_key}" data-rowkey="{node.row_key}" data-nodetype="{node_type}" '
        f'class="ui-treenode ui-treenode-parent {state}"><span class="ui-treenode-content ui-tree-selectable{highlight}" '
        f'role="treeitem" aria-expanded="{"true" if is_open else "false"}" aria-selected="{aria_selected}">'
        f'<span class="ui-tree-toggler ui-icon ui-icon-triangle-1-{"s" if is_open else "e"}"></span><span></span>{label}</span>'
        f'<ul class="ui-treenode-children" role="group"{hidden}>{children}</ul></li>'
    )


def tree_nodes(nodes: tuple[TreeNode, ...], expanded: frozenset[str] = frozenset(), selected: str | None = None) -> str:
    """Markup of tree nodes; the children of a collapsed folder arrive when it is expanded."""
    return "".join(_tree_node(node, expanded, selected) for node in nodes)


def tree(root: TreeNode, expanded: frozenset[str], selected: str | None) -> str:
    """The tree widget as PrimeFaces renders it, with its script (what an update of the tree carries)."""
    widget = TREE.replace(":", "_")
    return (
        f'<div id="{TREE}" class="ui-tree ui-widget ui-widget-content ui-corner-all" role="tree" aria-multiselectable="false">'
        f'<ul class="ui-tree-container" role="tree">{tree_nodes((root,), expanded, selected)}</ul>'
        f'<input type="hidden" id="{TREE}_selection" name="{TREE}_selection" autocomplete="off" value="{escape(selected or "")}">'
        f'<input type="hidden" id="{TREE}_scrollState" name="{TREE}_scrollState" autocomplete="off" value="0,0"></div>'
        f'<script id="{TREE}_s" type="text/javascript">$(function(){{PrimeFaces.cw("VerticalTree","widget_{widget}",'
        f'{{id:"{TREE}",widgetVar:"widget_{widget}",dynamic:true,cache:false,selectionMode:"single",'
        # The portal writes a space before the brace of the select behaviour.
        f'behaviors:{{select:function(ext,event) {{PrimeFaces.ab({{s:"{TREE}",e:"select",f:"dk_form",p:"{TREE}",'
        f'u:"{SELECT_UPDATES}"}},ext);}}}}}});}});</script>'
    )


def details_panel(ids: PageIds, node: TreeNode | None, zip_only: bool) -> str:
    """The panel with the selected document, the format radio and the Download button.

    Radio and button are disabled until a document is selected; a document offered only as a ZIP
    has the original-file option disabled."""
    chosen = node is not None and node.is_document
    enabled = {"false": chosen and not zip_only, "true": chosen}
    checked = next((value for value, _ in FORMAT_OPTIONS if enabled[value]), None)
    disabled = {value for value, _ in FORMAT_OPTIONS if not enabled[value]}
    radios = _radio_cells(FORMAT_RADIO, FORMAT_OPTIONS, checked=checked, disabled=disabled)
    button = f"dk_form:{ids.idt(61)}"
    button_disabled = "" if chosen else ' disabled="disabled"'
    return (
        f'<table id="{DETAILS_PANEL}" class="ui-panelgrid ui-widget" role="grid"><tbody>'
        '<tr class="ui-widget-content" role="row"><td role="gridcell" class="ui-panelgrid-cell">Document</td>'
        f'<td role="gridcell" class="ui-panelgrid-cell"><span id="dk_form:selectedNode">{escape(node.label) if chosen and node is not None else "-"}</span></td></tr>'
        '<tr class="ui-widget-content" role="row"><td role="gridcell" class="ui-panelgrid-cell">Format</td>'
        f'<td role="gridcell" class="ui-panelgrid-cell"><table id="{FORMAT_RADIO}" class="ui-selectoneradio ui-widget" role="radiogroup">'
        f"<tbody><tr>{radios}</tr></tbody></table></td></tr>"
        '<tr class="ui-widget-content" role="row"><td role="gridcell" class="ui-panelgrid-cell" colspan="2">'
        f'<button id="{button}" name="{button}" class="ui-button ui-widget ui-state-default ui-corner-all ui-button-text-only'
        f'{"" if chosen else " ui-state-disabled"}" type="submit"{button_disabled} '
        'onclick="PrimeFaces.monitorDownload(function(){ pfWait.start(); }, function(){ pfWait.stop(); });">'
        '<span class="ui-button-text ui-c">Download</span></button></td></tr></tbody></table>'
    )


def infobox(ids: PageIds, action: str, errors: Iterable[tuple[str, str]] = ()) -> str:
    return _form(INFOBOX, action, ids, messages(f"{INFOBOX}:messagesDK", errors) + "\n")


def document_page(
    ids: PageIds,
    action: str,
    root: TreeNode,
    expanded: frozenset[str],
    selected: TreeNode | None,
    zip_only: bool,
    errors: Iterable[tuple[str, str]] = (),
) -> str:
    body = tree(root, expanded, selected.row_key if selected else None) + details_panel(ids, selected, zip_only) + "\n"
    return layout("Document view", action, ids, infobox(ids, action, errors) + _form("dk_form", action, ids, body))


def partial_response(updates: dict[str, str]) -> str:
    body = "".join(f'<update id="{escape(k)}"><![CDATA[{v}]]></update>' for k, v in updates.items())
    return f"<?xml version='1.0' encoding='UTF-8'?>\n<partial-response><changes>{body}</changes></partial-response>"


def partial_redirect(url: str) -> str:
    """A partial response that sends the browser to ``url`` (JSF's ajax navigation)."""
    return f"<?xml version='1.0' encoding='UTF-8'?>\n<partial-response><redirect url=\"{escape(url)}\"></redirect></partial-response>"


# ----------------------------------------------------------------------------- errors


def message_page(title: str, message: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />'
        f'<title>Registerportal | {escape(title)}</title></head><body id="mainBody"><div class="error-content">'
        f'<div class="error-row"><span class="error-message-text">{escape(title)}</span></div>'
        f'<div class="error-details-text">{escape(message)}</div></div></body></html>\n'
    )


def rate_limit_page() -> str:
    return message_page(
        "Too many requests",
        "You have exceeded the maximum number of retrievals per hour permitted by the terms of use. Please try again later.",
    )


def expired_page() -> str:
    return message_page("Session expired", "Your session has expired. Please start a new search from the homepage.")


# ----------------------------------------------------------------------------- announcements

ANNOUNCEMENTS_FORM = "bekanntMachungenForm"
_BERLIN = ZoneInfo("Europe/Berlin")


def java_date(day: date) -> str:
    """How the portal's links write a date: Java's Date.toString, e.g. "Thu Aug 20 00:00:00 CEST 2026"."""
    midnight = datetime.combine(day, datetime.min.time(), _BERLIN)
    return midnight.strftime("%a %b %d %H:%M:%S %Z %Y")


def _announcement_fields(ids: PageIds, courts: list[Court], states: dict[str, str], categories: dict[str, str]) -> str:
    f = ANNOUNCEMENTS_FORM
    calendar = "".join(
        f'<label for="{f}:{name}_input">{label}</label><span id="{f}:{name}" class="ui-calendar">'
        f'<input id="{f}:{name}_input" name="{f}:{name}_input" type="text" class="ui-inputfield ui-widget ui-state-default ui-corner-all" '
        'placeholder="TT.MM.JJJJ"></span>\n'
        for name, label in (("datum_von", "Date from"), ("datum_bis", "Date to"))
    )
    return (
        calendar
        + f'<label for="{f}:land_input">State</label>{_select("land", [("", "- all -"), *states.items()], form_id=f)}\n'
        + f'<label for="{f}:registergericht_input">Register court</label>'
        + f"{_select('registergericht', [('', '- all -')] + [(c.code, c.name) for c in courts], form_id=f)}\n"
        + f'<label for="{f}:sitz">Registered office</label><input id="{f}:sitz" name="{f}:sitz" type="text" class="ui-inputfield">\n'
        + f'<label for="{f}:kategorie_input">Category</label>{_select("kategorie", [("", "- all -"), *categories.items()], form_id=f)}\n'
        + f'<button id="{f}:rrbSuche" name="{f}:rrbSuche" class="ui-button ui-widget ui-state-default ui-corner-all ui-button-text-only" '
        'type="submit"><span class="ui-button-text ui-c">Find</span></button>\n'
    )


def announcements_page(
    ids: PageIds,
    courts: list[Court],
    states: dict[str, str],
    categories: dict[str, str],
    found: list | None = None,
    errors: Iterable[tuple[str, str]] = (),
) -> str:
    """The announcements search; with ``found``, its results as the portal lists them (a data list by date)."""
    f = ANNOUNCEMENTS_FORM
    action = "/rp_web/bekanntmachungen.xhtml"
    body = messages(f"{f}:messages", errors) + "\n" + _announcement_fields(ids, courts, states, categories)
    if found is not None:
        days: dict[date, list] = {}
        for announcement in found:
            days.setdefault(announcement.published, []).append(announcement)
        blocks = []
        for d, (day, items) in enumerate(days.items()):
            links = []
            for i, a in enumerate(items):
                link = f"{f}:datalistId:{d}:{ids.idt(75)}:{i}:{ids.idt(76)}"
                label = f"{f}:datalistId:{d}:{ids.idt(75)}:{i}:{ids.idt(77)}"
                links.append(
                    f'<a class="ui-commandlink ui-widget" href="#" id="{link}" '
                    f"onclick=\"fireBekanntmachung{i}('{java_date(day)}', '{a.id}');;PrimeFaces.ab({{s:&quot;{link}&quot;,f:&quot;{f}&quot;}});return false;\">"
                    f'<label class="ui-outputlabel ui-widget" id="{label}">{escape(a.category_label)}<br/>{escape(a.court_line)}<br/>'
                    f"{escape(a.company.name)} – {escape(a.company.seat)}</label></a><br/><br/>"
                    f"<script>function fireBekanntmachung{i}(datum, id){{remoteBekanntmachung([{{name:'datum', value:datum}}, {{name:'id', value:id}}]);}}</script>"
                )
            blocks.append(
                f'<dt class="ui-datalist-item"><span id="{f}:datalistId:{d}:datumId">{german(day)}</span><br/></dt>'
                f"<dd>{''.join(links)}</dd>"
            )
        body += (
            f'<div id="{f}:datalistId_content" class="ui-datalist-content">'
            f'<dl class="ui-datalist-data" id="{f}:datalistId_list">{"".join(blocks)}</dl></div>\n'
        )
    remote = f"{f}:{ids.idt(73)}"
    script = (
        f'<script>remoteBekanntmachung = function() {{PrimeFaces.ab({{s:"{remote}",f:"{f}",p:"{f}",u:"{f}",'
        "pa:arguments[0]});}</script>"
    )
    return layout("Register announcements", action, ids, _form(f, action, ids, body) + script)


def german(day: date) -> str:
    return day.strftime("%d.%m.%Y")


def announcement_detail_page(ids: PageIds, announcement, legal_form: str) -> str:
    """One announcement, as einzelBekanntmachung/welcome.xhtml shows it."""
    a = announcement
    entered = (
        f'<label class="ui-outputlabel ui-widget" id="{ids.idt(58)}"><br/><br/></label>'
        f'<label class="ui-outputlabel ui-widget" id="{ids.idt(59)}">{german(a.entered)}</label>'
        f'<label class="ui-outputlabel ui-widget" id="{ids.idt(60)}">(Eintragungsdatum)</label><br/><br/>'
        if a.entered
        else "<br/><br/>"
    )
    panel = (
        '<div id="rrbOutputPanel"><div class="ui-panel ui-widget ui-widget-content ui-corner-all" data-widget="widget_rrbPanel" id="rrbPanel">'
        '<div class="ui-panel-titlebar ui-widget-header ui-helper-clearfix ui-corner-all" id="rrbPanel_header">'
        '<span class="ui-panel-title">Rechtsträgerbasierte RB - Einzeldarstellung -</span></div>'
        '<div class="ui-panel-content ui-widget-content" id="rrbPanel_content">'
        f'<label class="ui-outputlabel ui-widget" id="{ids.idt(52)}">{german(a.published)} (Bekanntmachungsdatum)</label><br/><br/>'
        f'<label class="ui-outputlabel ui-widget" id="{ids.idt(55)}">{escape(a.court_line)}</label>'
        '<div class="ui-outputpanel ui-widget" id="rrbNichtgeloschtOutputPanel"><br/>'
        f'<label class="ui-outputlabel ui-widget" id="{ids.idt(57)}">{escape(a.category_label)}</label>{entered}'
        f'<label class="ui-outputlabel ui-widget" id="{ids.idt(62)}">{escape(a.company.name)}</label><br/>'
        f'<label class="ui-outputlabel ui-widget" id="{ids.idt(64)}">{escape(legal_form)}</label><br/>'
        f'<label class="ui-outputlabel ui-widget" id="{ids.idt(66)}">{escape(a.company.seat)}</label><br/><br/>'
        f'<label class="ui-outputlabel ui-widget" id="{ids.idt(68)}">{escape(a.text)}</label></div></div></div></div>'
    )
    return layout("Register announcement", "/rp_web/einzelBekanntmachung/welcome.xhtml", ids, panel)
