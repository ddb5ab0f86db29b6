"""A register client written the way independent public clients talk to the portal, to check that
the sample register serves them as the portal does. It shares no code with our client.

It follows the request flow of the open-source ``handelsregister-cli`` (its docs/DESIGN.md and
``portal.py``/``dk.py``, whose flows were verified against the live portal): a mechanize browser
submits the forms as a browser would; the DK tree is walked breadth-first from ``0`` with
PrimeFaces partial AJAX posts of exactly these fields, in this order::

    javax.faces.partial.ajax=true
    javax.faces.source=dk_form:dktree
    javax.faces.partial.execute=dk_form:dktree
    javax.faces.partial.render=<dk_form:dktree, or for a select the three ids below>
    javax.faces.behavior.event=<expand|select>
    javax.faces.partial.event=<expand|select>
    dk_form:dktree_expandNode=<rowkey>      (expand)  /  dk_form:dktree_instantSelection=<rowkey>  (select)
    dk_form=dk_form
    dk_form:dktree_selection=<"" | rowkey>
    dk_form:dktree_scrollState=0,0
    javax.faces.ViewState=<the latest view state>

with ``Faces-Request: partial/ajax`` and ``X-Requested-With: XMLHttpRequest``; the tree nodes are
taken from the CDATA of ``<update id="dk_form:dktree…">`` by regular expression. A leaf is
downloaded by a select (render ``dk_form:detailsNodePanelGrid dk_form:dktree dk_formInfobox``)
and then a plain form post of ``dk_form``, the selection, the scroll state, the format radio
(``false`` the original, ``true`` a ZIP, as a second public client, a Node.js crawler, sends it)
and the Download button, found on the DK page by its text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlencode, urljoin

import mechanize
from lxml import html

TREE_ID = "dk_form:dktree"
SELECT_RENDER = "dk_form:detailsNodePanelGrid dk_form:dktree dk_formInfobox"
_TREE_UPDATE = re.compile(r'<update id="dk_form:dktree[^"]*"><!\[CDATA\[(.*?)\]\]></update>', re.DOTALL)
_VIEW_STATE_UPDATE = re.compile(r"ViewState[^>]*><!\[CDATA\[(.*?)\]\]>")


@dataclass
class Node:
    rowkey: str
    label: str
    leaf: bool


def browser() -> mechanize.Browser:
    br = mechanize.Browser()
    br.set_handle_robots(False)
    br.set_handle_refresh(False)
    br.addheaders = [("User-Agent", "outside-client-test"), ("Accept-Language", "de-DE,de;q=0.9")]
    return br


def search(base_url: str, keywords: str, mode: str = "3") -> tuple[mechanize.Browser, str]:
    """Start page → naviForm with the advanced-search link injected → the search form → results."""
    br = browser()
    br.open(base_url)
    br.select_form(name="naviForm")
    br.form.new_control("hidden", "naviForm:erweiterteSucheLink", {"value": "naviForm:erweiterteSucheLink"})
    br.submit()
    br.select_form(name="form")
    br["form:schlagwoerter"] = keywords
    br["form:schlagwortOptionen"] = [mode]
    return br, br.submit().read().decode("utf-8")


def doc_links(results_html: str, row: int) -> dict[str, tuple[str, dict[str, str]]]:
    """{label: (link id, extra params)}: the command links of a result row, ``property`` from onclick."""
    doc = html.fromstring(results_html)
    links = {}
    for a in doc.xpath(f'//a[starts-with(@id, "ergebnissForm:selectedSuchErgebnisFormTable:{row}:")]'):
        span = a.find("span")
        if span is None:
            continue
        extra = {}
        if match := re.search(r"'property':'([^']*)'", a.get("onclick", "")):
            extra = {"property": match.group(1), "property2": ""}
        links[span.text_content().strip()] = (a.get("id"), extra)
    return links


def click_link(br: mechanize.Browser, link_id: str, extra: dict[str, str]):
    br.select_form(name="ergebnissForm")
    br.form.new_control("hidden", link_id, {"value": link_id})
    for key, value in extra.items():
        br.form.new_control("hidden", key, {"value": value})
    return br.submit()


class DkPage:
    def __init__(self, br: mechanize.Browser, page_html: str) -> None:
        self.br = br
        doc = html.fromstring(page_html)
        (form,) = doc.xpath('//form[@id="dk_form"]')
        self.action = urljoin(br.geturl(), form.get("action"))
        self.viewstate = form.xpath('.//input[@name="javax.faces.ViewState"]/@value')[0]
        self.download_button = next(
            b.get("id") for b in form.xpath(".//button") if "download" in b.text_content().lower()
        )
        radios = form.xpath('.//input[@type="radio"]')
        self.radio_name = radios[0].get("name") if radios else "dk_form:radio_dkbuttons"

    def _post(self, data: list[tuple[str, str]], ajax: bool) -> tuple[bytes, dict]:
        request = mechanize.Request(self.action, data=urlencode(data))
        if ajax:
            request.add_header("Faces-Request", "partial/ajax")
            request.add_header("X-Requested-With", "XMLHttpRequest")
        request.add_header("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8")
        response = self.br.open(request)
        payload = response.read()
        if ajax and (match := _VIEW_STATE_UPDATE.search(payload.decode("utf-8", "replace"))):
            self.viewstate = match.group(1)
        return payload, dict(response.info().items())

    def tree_event(self, event: str, rowkey: str, render: str) -> str:
        data = [
            ("javax.faces.partial.ajax", "true"),
            ("javax.faces.source", TREE_ID),
            ("javax.faces.partial.execute", TREE_ID),
            ("javax.faces.partial.render", render),
            ("javax.faces.behavior.event", event),
            ("javax.faces.partial.event", event),
            (f"{TREE_ID}_{'expandNode' if event == 'expand' else 'instantSelection'}", rowkey),
            ("dk_form", "dk_form"),
            (f"{TREE_ID}_selection", rowkey if event == "select" else ""),
            (f"{TREE_ID}_scrollState", "0,0"),
            ("javax.faces.ViewState", self.viewstate),
        ]
        return self._post(data, ajax=True)[0].decode("utf-8", "replace")

    def walk_tree(self) -> dict[str, Node]:
        """Breadth-first: expand every non-leaf until no new nodes appear."""
        nodes: dict[str, Node] = {}
        queue, expanded = ["0"], set()
        while queue:
            rowkey = queue.pop(0)
            if rowkey in expanded:
                continue
            expanded.add(rowkey)
            payload = "".join(_TREE_UPDATE.findall(self.tree_event("expand", rowkey, TREE_ID)))
            if not payload.strip():
                continue
            for li in html.fragment_fromstring(payload, create_parent="ul").xpath(
                './/li[contains(@class, "ui-treenode")]'
            ):
                node = Node(
                    li.get("data-rowkey"),
                    li.xpath('.//span[contains(@class, "ui-treenode-label")]')[0].text_content().strip(),
                    "ui-treenode-leaf" in li.get("class", ""),
                )
                if node.rowkey not in nodes:
                    nodes[node.rowkey] = node
                    if not node.leaf:
                        queue.append(node.rowkey)
        return nodes

    def download_leaf(self, rowkey: str, radio: str = "false") -> tuple[bytes, dict]:
        self.tree_event("select", rowkey, render=SELECT_RENDER)
        data = [
            ("dk_form", "dk_form"),
            (f"{TREE_ID}_selection", rowkey),
            (f"{TREE_ID}_scrollState", "0,0"),
            (self.radio_name, radio),
            (self.download_button, ""),
            ("javax.faces.ViewState", self.viewstate),
        ]
        return self._post(data, ajax=False)


def open_dk(base_url: str, company_name: str) -> DkPage:
    br, results = search(base_url, company_name)
    link_id, extra = doc_links(results, 0)["DK"]
    return DkPage(br, click_link(br, link_id, extra).read().decode("utf-8"))
