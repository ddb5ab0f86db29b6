"""Parsing the recorded real portal pages (samples/portal)."""

from __future__ import annotations

import pytest

from orchestration.register import pages
from orchestration.register.errors import PageStructureError

RESULTS_URL = "https://www.handelsregister.de/rp_web/sucheErgebnisse/welcome.xhtml?cid=1"


@pytest.fixture(scope="module")
def portal_dir(samples_dir):
    return samples_dir / "portal"


@pytest.fixture(scope="module")
def results_page(portal_dir):
    return pages.parse_page((portal_dir / "search_results.html").read_bytes())


def test_result_rows_of_the_recorded_search(results_page):
    entries = pages.parse_results(results_page, {"berlin (charlottenburg)": "F1103"})

    rows = [e.row for e in entries]
    assert [(r.name, r.register_type, r.register_number) for r in rows] == [
        ("arcneo GmbH", "HRB", "261478"),
        ("arcneo Projekt 1 GmbH", "HRB", "261447"),
    ]
    first = rows[0]
    assert (first.state, first.court, first.court_code, first.seat) == ("Berlin", "Berlin (Charlottenburg)", "F1103", "Berlin")
    assert first.status == "currently registered"
    # HD is shown without a link on this page: not available.
    assert first.documents == ["AD", "CD", "DK", "UT", "VÖ", "SI"]


def test_document_links_carry_their_ids_and_the_form_they_submit(results_page):
    entry = pages.parse_results(results_page)[1]

    assert entry.form_id == "ergebnissForm"
    (si_param,) = entry.links["SI"].items()
    assert si_param[0] == si_param[1] and si_param[0].startswith("ergebnissForm:selectedSuchErgebnisFormTable:1:")
    assert entry.links["DK"]["property"] == "Global.Dokumentart.DK"
    # Without a court list the code stays unknown rather than guessed.
    assert entry.row.court_code is None


def test_results_form_and_navigation_come_from_the_page(results_page):
    form = pages.form_by_id(results_page, "ergebnissForm", RESULTS_URL)
    assert form.action == RESULTS_URL
    assert form.view_state == "6337723330793113554:-8132795512117875890"

    navigation, params = pages.navigation_to(results_page, "erweiterteSucheLink", RESULTS_URL)
    assert navigation.form_id == "naviForm"
    assert params == {"naviForm:erweiterteSucheLink": "naviForm:erweiterteSucheLink", "target": "erweiterteSucheLink"}


def test_dk_tree_partial_response(portal_dir):
    response = pages.parse_partial_response((portal_dir / "dk_partial_expand.xml").read_bytes())

    nodes = pages.parse_tree_nodes(response.fragment("dk_form:dktree"))
    assert [(n.row_key, n.kind) for n in nodes] == [("0_0", "folder"), ("0_1", "document")]
    assert nodes[1].label == "Liste der Gesellschafter - Aufnahme in den Registerordner am 29.10.2024"
    assert nodes[1].is_shareholder_list and not nodes[0].is_shareholder_list
    assert response.view_state == "8320053560402606116:-2884620046521278132"


def test_pages_without_the_expected_structure_are_refused(portal_dir, results_page):
    announcements = pages.parse_page((portal_dir / "announcements_results.html").read_bytes())
    with pytest.raises(PageStructureError):
        pages.parse_results(announcements)
    with pytest.raises(PageStructureError):
        pages.parse_search_form(results_page, RESULTS_URL)
    with pytest.raises(PageStructureError):
        pages.parse_partial_response((portal_dir / "search_results.html").read_bytes())


def test_real_pages_are_not_mistaken_for_the_rate_limit_page(portal_dir):
    for name in ("search_results.html", "announcements_results.html", "announcement_detail.html"):
        assert not pages.is_rate_limit_page(pages.parse_page((portal_dir / name).read_bytes()))
