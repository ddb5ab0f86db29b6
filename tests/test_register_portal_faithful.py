"""The sample register behaves as the portal does in the DK document flow (issue table, rows 1 to 11),
checked on the wire, and our client copes with each behaviour."""

from __future__ import annotations

import re

import httpx
import pytest

from orchestration.register import PortalClient, SearchMode, SharedRateLimiter, portal_pages
from orchestration.register.results import walk_nodes
from orchestration.runtime import queue
from orchestration.runtime.failures import FailureClass, JobError
from orchestration.stages.shareholder_download import (
    leads_to_shareholder_lists,
    newest_shareholder_list,
    shareholder_list_file,
)
from outside_client import SELECT_RENDER, TREE_ID, click_link, doc_links, open_dk, search
from sample_register import start_sample_register_in_thread
from sample_register.documents import filings


@pytest.fixture(scope="module")
def sample_register(samples_dir):
    with start_sample_register_in_thread(samples_dir=samples_dir, generated=400) as server:
        yield server


@pytest.fixture
def client(sample_register, tmp_path):
    with PortalClient(sample_register.url, diagnostics_dir=tmp_path / "diagnostics") as client:
        yield client


def gmbh(corpus, *, zip_only: bool):
    """A generated GmbH whose current shareholder list is (or is not) offered only as a ZIP."""
    return next(
        c
        for c in corpus.companies
        if c.legal_form == "GmbH"
        and c.sample_file is None
        and not c.deleted
        and [f for f in filings(c) if f.shareholder_list][-1].zip_only is zip_only
        and len(corpus.search(c.name, SearchMode.EXACT)) == 1
    )


@pytest.fixture(scope="module")
def company(sample_register):
    return gmbh(sample_register.corpus, zip_only=False)


def tree_update(partial: str) -> str:
    return "".join(re.findall(r'<update id="dk_form:dktree"><!\[CDATA\[(.*?)\]\]></update>', partial, re.DOTALL))


# 1 ---------------------------------------------------------------------------------------------


def test_a_node_expands_with_expand_node_and_the_expand_event(sample_register, company):
    dk = open_dk(sample_register.url, company.name)

    children = tree_update(dk.tree_event("expand", "0_0", TREE_ID))
    old_style = dk._post(
        [
            ("javax.faces.partial.ajax", "true"),
            ("javax.faces.source", TREE_ID),
            ("javax.faces.partial.execute", TREE_ID),
            ("javax.faces.partial.render", TREE_ID),
            (f"{TREE_ID}_expand", "0_0_0"),
            ("dk_form", "dk_form"),
            ("javax.faces.ViewState", dk.viewstate),
        ],
        ajax=True,
    )[0].decode()

    # The children of "Dokumente zur Registernummer" are the category folders.
    assert 'data-rowkey="0_0_0"' in children and ">Liste der Gesellschafter</span>" in children
    # "_expand" without the event: the tree comes back as it was, the category still collapsed.
    assert 'data-rowkey="0_0_0"' in tree_update(old_style) and 'data-rowkey="0_0_0_0"' not in tree_update(old_style)


# 2, 3 ------------------------------------------------------------------------------------------


def test_the_select_behaviour_has_a_space_and_updates_several_ids(sample_register, company, client):
    br, results = search(sample_register.url, company.name)
    link_id, extra = doc_links(results, 0)["DK"]
    page = click_link(br, link_id, extra).read().decode()
    assert 'select:function(ext,event) {PrimeFaces.ab({s:"dk_form:dktree"' in page
    assert f'u:"{SELECT_RENDER}"' in page
    tree = portal_pages.parse_document_tree(
        portal_pages.parse_page(page.encode()), "http://x/rp_web/documents/welcome.xhtml?cid=1"
    )
    assert tree.select.updates == ["dk_form:detailsNodePanelGrid", "dk_form:dktree", "dk_formInfobox"]

    (row,) = client.search(company.name, SearchMode.EXACT)
    lists = [n for n in walk_nodes(client.list_documents(row)) if n.is_shareholder_list]
    assert client.download_document(row, lists[-1]).content[:4] in (b"%PDF", b"II*\x00", b"MM\x00*")


def test_the_select_response_updates_every_id_it_was_asked_for(sample_register, company):
    dk = open_dk(sample_register.url, company.name)
    dk.walk_tree()
    partial = portal_pages.parse_partial_response(dk.tree_event("select", "0_1", SELECT_RENDER).encode())
    assert {"dk_form:detailsNodePanelGrid", "dk_form:dktree", "dk_formInfobox"} <= set(partial.updates)


# 4, 5 ------------------------------------------------------------------------------------------


def test_button_and_radio_are_on_the_page_disabled_until_a_document_is_selected(sample_register, company):
    br, results = search(sample_register.url, company.name)
    link_id, extra = doc_links(results, 0)["DK"]
    page = portal_pages.parse_page(click_link(br, link_id, extra).read())
    controls = portal_pages.download_controls(page.xpath('//form[@id="dk_form"]')[0])
    assert (controls.format_field, controls.formats, controls.enabled) == ("dk_form:radio_dkbuttons", [], False)
    assert [r.get("value") for r in page.xpath('//input[@name="dk_form:radio_dkbuttons"]')] == ["false", "true"]

    dk = open_dk(sample_register.url, company.name)
    dk.walk_tree()
    # Pressing Download before a selection reached the bean: JSF skips the disabled button.
    body, headers = dk._post(
        [
            ("dk_form", "dk_form"),
            (f"{TREE_ID}_selection", "0_1"),
            ("dk_form:radio_dkbuttons", "false"),
            (dk.download_button, ""),
            ("javax.faces.ViewState", dk.viewstate),
        ],
        ajax=False,
    )
    assert "attachment" not in str(headers).lower() and b'id="dk_form:dktree"' in body
    # After the select the panel comes back with both formats and the button enabled.
    panel = portal_pages.parse_partial_response(dk.tree_event("select", "0_1", SELECT_RENDER).encode())
    after = portal_pages.download_controls(panel.fragment("dk_form:detailsNodePanelGrid"))
    assert (after.formats, after.enabled) == (["false", "true"], True)


# 6 ---------------------------------------------------------------------------------------------


def test_a_document_offered_only_as_zip(sample_register, client):
    company = gmbh(sample_register.corpus, zip_only=True)
    dk = open_dk(sample_register.url, company.name)
    current = dk.walk_tree()["0_1"]

    refused, headers = dk.download_leaf(current.rowkey, radio="false")
    zipped, zip_headers = dk.download_leaf(current.rowkey, radio="true")

    assert "attachment" not in str(headers).lower() and b"only as a ZIP file" in refused
    assert zipped[:4] == b"PK\x03\x04" and "application/zip" in str(zip_headers)
    # Our client picks the format the panel enables and the stage unpacks the list from the ZIP.
    (row,) = client.search(company.name, SearchMode.EXACT)
    download = client.download_document(row, newest_shareholder_list(client.list_documents(row)))
    assert download.media_type == "application/zip" and download.filename.endswith(".zip")
    inner = shareholder_list_file(download, "test", source="shareholder_download")
    assert inner.media_type in ("application/pdf", "image/tiff") and inner.content[:4] in (
        b"%PDF",
        b"II*\x00",
        b"MM\x00*",
    )


# 7 ---------------------------------------------------------------------------------------------


def test_tree_shape_categories_and_a_document_in_several_folders(client, company):
    (row,) = client.search(company.name, SearchMode.EXACT)
    (root,) = client.list_documents(row)

    assert (root.row_key, root.label) == ("0", "Dokumente zum Rechtsträger")
    register_folder = root.children[0]
    assert (register_folder.row_key, register_folder.label) == ("0_0", "Dokumente zur Registernummer")
    categories = {c.label: c for c in register_folder.children}
    assert {"Liste der Gesellschafter", "Gesellschaftsvertrag / Satzung / Statut", "Jahresabschluss / Bilanz"} <= set(
        categories
    )
    # An empty category is a leaf on the portal, but still a folder, not a document.
    assert (
        categories["Jahresabschluss / Bilanz"].kind == "folder" and not categories["Jahresabschluss / Bilanz"].children
    )
    current = root.children[1]
    in_category = [n for n in categories["Liste der Gesellschafter"].children if n.label == current.label]
    assert current.is_shareholder_list and len(in_category) == 1
    # The same document at both places: the same bytes, and the stage fetches it once.
    assert client.download_document(row, current).content == client.download_document(row, in_category[0]).content
    assert newest_shareholder_list([root]).row_key == in_category[0].row_key


# 8 ---------------------------------------------------------------------------------------------


def test_dk_opens_by_a_redirect_to_the_document_view(sample_register, company):
    with httpx.Client(base_url=sample_register.url, follow_redirects=True) as http:
        start = http.get("/")
        navigation, params = portal_pages.navigation_to(
            portal_pages.parse_page(start.content), "erweiterteSucheLink", str(start.url)
        )
        search_page = http.post(navigation.action, data=dict(navigation.payload(params)))
        form = portal_pages.parse_search_form(portal_pages.parse_page(search_page.content), str(search_page.url))
        results = http.post(
            form.form.action,
            data=dict(
                form.form.payload(
                    {
                        form.keywords_field: company.name,
                        form.mode_field: form.mode_values[SearchMode.EXACT],
                        form.submit_field: "",
                    }
                )
            ),
        )
        (entry,) = portal_pages.parse_results(portal_pages.parse_page(results.content))
        results_form = portal_pages.form_by_id(
            portal_pages.parse_page(results.content), entry.form_id, str(results.url)
        )
        response = http.post(
            results_form.action, data=dict(results_form.payload(entry.links["DK"])), follow_redirects=False
        )

    assert response.status_code == 302
    assert re.fullmatch(r"/rp_web/documents/welcome\.xhtml\?cid=\d+", response.headers["location"])


# 9 ---------------------------------------------------------------------------------------------


def test_files_are_named_as_the_portal_names_them(sample_register, company, client):
    dk = open_dk(sample_register.url, company.name)
    dk.walk_tree()
    _, headers = dk.download_leaf("0_1")
    disposition = {k.lower(): v for k, v in headers.items()}["content-disposition"]

    assert "filename*" not in disposition
    court = company.court.name.replace(" ", "_")
    pattern = (
        rf'attachment; filename="{company.court.state_abbreviation}-{re.escape(court)}_HRB_{company.register_number}'
        r'\+Liste_der_Gesellschafter_-_Aufnahme_in_den_R-\d{14}\.(pdf|tif)"'
    )
    assert re.fullmatch(pattern, disposition), disposition
    # Our client keeps the plain filename parameter as it is.
    (row,) = client.search(company.name, SearchMode.EXACT)
    filename = client.download_document(row, newest_shareholder_list(client.list_documents(row))).filename
    assert re.fullmatch(pattern, f'attachment; filename="{filename}"'), filename


# 10 --------------------------------------------------------------------------------------------


def test_earlier_names_in_a_nested_table_with_numbered_seats(sample_register, client):
    renamed = next(
        c
        for c in sample_register.corpus.companies
        if len(c.earlier_names) >= 1
        and not c.deleted
        and len(sample_register.corpus.search(c.name, SearchMode.EXACT)) == 1
    )
    _, results = search(sample_register.url, renamed.name)
    name, seat = renamed.earlier_names[0]
    row_markup = portal_pages.parse_page(results.encode()).xpath('//tr[@data-ri="0"]')[0]
    nested = row_markup.xpath(".//table//table//tr")
    assert nested and all(len(tr.xpath("./td")) == 3 for tr in nested)
    assert portal_pages.text_of(nested[0].xpath("./td")[1]) == f"1.) {seat}"

    (row,) = client.search(renamed.name, SearchMode.EXACT)
    assert (row.earlier_names[0].name, row.earlier_names[0].seat) == (name, seat)


# 11 --------------------------------------------------------------------------------------------


def test_a_portal_message_is_a_clear_permanent_error(client, tmp_path, engine):
    with pytest.raises(JobError) as caught:
        client.search("Apple", SearchMode.ANY)

    error = caught.value
    assert (error.failure_class, error.code) == (FailureClass.INVALID_FILE, "portal_message")
    with engine.connect() as conn:
        assert error.failure_class in queue.permanent_failure_classes(conn)
    assert "contain at least one keyword" in error.message and "register court" in error.message
    assert not (tmp_path / "diagnostics").exists()


# fault injection on the new flow ---------------------------------------------------------------


def test_a_truncated_zip_is_transient_and_the_next_attempt_gets_it(sample_register, client):
    company = gmbh(sample_register.corpus, zip_only=True)
    (row,) = client.search(company.name, SearchMode.EXACT)
    node = newest_shareholder_list(client.list_documents(row))
    httpx.post(sample_register.url + "/_sample/faults", json={"kind": "truncated"}).raise_for_status()

    with pytest.raises(JobError) as caught:
        client.download_document(row, node)

    assert (caught.value.failure_class, caught.value.code) == (FailureClass.DEPENDENCY_UNAVAILABLE, "truncated")
    assert client.download_document(row, node).content[:4] == b"PK\x03\x04"


def test_looking_for_shareholder_lists_expands_only_their_folders(sample_register, company, engine, tmp_path):
    class CountingLimiter(SharedRateLimiter):
        """Counts the tokens the client takes (the bucket's level also refills while the test runs)."""

        taken = 0

        def acquire(self, *args, **kwargs) -> float:
            self.taken += 1
            return super().acquire(*args, **kwargs)

    def retrievals(expand) -> tuple[int, list]:
        limiter = CountingLimiter(engine, f"count {expand}", 3600, burst=1000)
        with PortalClient(sample_register.url, diagnostics_dir=tmp_path, rate_limiter=limiter) as counted:
            (row,) = counted.search(company.name, SearchMode.EXACT)
            nodes = counted.list_documents(row, expand=expand)
        return limiter.taken, nodes

    everything, full = retrievals(None)
    narrow, nodes = retrievals(leads_to_shareholder_lists)

    categories = [n for n in full[0].children[0].children if n.children]
    # The non-empty categories other than the lists' are left closed: one retrieval each saved.
    assert everything - narrow == len(categories) - 1
    assert newest_shareholder_list(nodes).label == newest_shareholder_list(full).label
