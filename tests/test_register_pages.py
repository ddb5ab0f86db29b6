"""Parsing the recorded real portal pages (samples/portal)."""

from __future__ import annotations

import pytest

from orchestration.register import portal_pages
from orchestration.register.errors import PageStructureError

RESULTS_URL = "https://www.handelsregister.de/rp_web/sucheErgebnisse/welcome.xhtml?cid=1"


@pytest.fixture(scope="module")
def portal_dir(samples_dir):
    return samples_dir / "portal"


@pytest.fixture(scope="module")
def results_page(portal_dir):
    return portal_pages.parse_page((portal_dir / "search_results.html").read_bytes())


def test_result_rows_of_the_recorded_search(results_page):
    entries = portal_pages.parse_results(results_page, {"berlin (charlottenburg)": "F1103"})

    rows = [e.row for e in entries]
    assert [(r.name, r.register_type, r.register_number) for r in rows] == [
        ("arcneo GmbH", "HRB", "261478"),
        ("arcneo Projekt 1 GmbH", "HRB", "261447"),
    ]
    first = rows[0]
    assert (first.state, first.court, first.court_code, first.seat) == (
        "Berlin",
        "Berlin (Charlottenburg)",
        "F1103",
        "Berlin",
    )
    assert first.status == "currently registered"
    # HD is shown without a link on this page: not available.
    assert first.documents == ["AD", "CD", "DK", "UT", "VÖ", "SI"]


def test_document_links_carry_their_ids_and_the_form_they_submit(results_page):
    entry = portal_pages.parse_results(results_page)[1]

    assert entry.form_id == "ergebnissForm"
    (si_param,) = entry.links["SI"].items()
    assert si_param[0] == si_param[1] and si_param[0].startswith("ergebnissForm:selectedSuchErgebnisFormTable:1:")
    assert entry.links["DK"]["property"] == "Global.Dokumentart.DK"
    # Without a court list the code stays unknown rather than guessed.
    assert entry.row.court_code is None


def test_results_form_and_navigation_come_from_the_page(results_page):
    form = portal_pages.form_by_id(results_page, "ergebnissForm", RESULTS_URL)
    assert form.action == RESULTS_URL
    assert form.view_state == "6337723330793113554:-8132795512117875890"

    navigation, params = portal_pages.navigation_to(results_page, "erweiterteSucheLink", RESULTS_URL)
    assert navigation.form_id == "naviForm"
    assert params == {"naviForm:erweiterteSucheLink": "naviForm:erweiterteSucheLink", "target": "erweiterteSucheLink"}


def test_dk_tree_partial_response(portal_dir):
    response = portal_pages.parse_partial_response((portal_dir / "dk_partial_expand.xml").read_bytes())

    nodes = portal_pages.parse_tree_nodes(response.fragment("dk_form:dktree"))
    assert [(n.row_key, n.kind) for n in nodes] == [("0_0", "folder"), ("0_1", "document")]
    assert nodes[1].label == "Liste der Gesellschafter - Aufnahme in den Registerordner am 29.10.2024"
    assert nodes[1].is_shareholder_list and not nodes[0].is_shareholder_list
    assert response.view_state == "8320053560402606116:-2884620046521278132"


def test_pages_without_the_expected_structure_are_refused(portal_dir, results_page):
    announcements = portal_pages.parse_page((portal_dir / "announcements_results.html").read_bytes())
    with pytest.raises(PageStructureError):
        portal_pages.parse_results(announcements)
    with pytest.raises(PageStructureError):
        portal_pages.parse_search_form(results_page, RESULTS_URL)
    with pytest.raises(PageStructureError):
        portal_pages.parse_partial_response((portal_dir / "search_results.html").read_bytes())


def test_real_pages_are_not_mistaken_for_the_rate_limit_page(portal_dir):
    for name in ("search_results.html", "announcements_results.html", "announcement_detail.html"):
        assert not portal_pages.is_rate_limit_page(portal_pages.parse_page((portal_dir / name).read_bytes()))


# ----------------------------------------------------------------------------- announcements


def test_announcement_results_of_the_recording(portal_dir):
    doc = portal_pages.parse_page((portal_dir / "announcements_results.html").read_bytes())
    categories = {"2": "Registerbekanntmachung nach dem Umwandlungsgesetz", "3": "Einreichung neuer Dokumente"}

    found = portal_pages.parse_announcements(doc, categories)

    assert [(a.id, a.published.isoformat()) for a in found] == [
        ("167692", "2026-08-20"),
        ("167660", "2026-08-20"),
        ("167694", "2026-08-20"),
        ("167394", "2026-08-19"),
        ("167490", "2026-08-19"),
        ("167462", "2026-08-19"),
    ]
    first = found[0]
    assert (first.category, first.category_code, first.state, first.court) == (
        "Registerbekanntmachung nach dem Umwandlungsgesetz",
        "2",
        "Bayern",
        "München",
    )
    assert (first.register_type, first.register_number, first.name, first.seat) == (
        "HRB",
        "242458",
        "75cl Distribution GmbH",
        "München",
    )
    assert first.portal_date == "Thu Aug 20 00:00:00 CEST 2026"
    assert (found[1].category, found[1].category_code) == ("Löschungsankündigung", None)
    assert (found[3].court, found[3].register_type, found[3].register_number) == (
        "Berlin (Charlottenburg)",
        "HRA",
        "1950",
    )
    assert found[4].name.startswith('"VEPRO" Gesellschaft') and found[4].seat == "Braunschweig"
    assert portal_pages.announcement_command(doc).source == "bekanntMachungenForm:j_idt173"


def test_announcement_details_of_the_recordings(portal_dir):
    merger = portal_pages.parse_announcement_detail(
        portal_pages.parse_page((portal_dir / "announcement_detail.html").read_bytes())
    )
    deletion = portal_pages.parse_announcement_detail(
        portal_pages.parse_page((portal_dir / "announcement_detail_loeschung.html").read_bytes())
    )

    assert (merger.published.isoformat(), merger.entered.isoformat()) == ("2026-08-20", "2026-08-19")
    assert merger.court_line == "Bayern Amtsgericht München HRB 242458"
    assert (merger.category, merger.name, merger.legal_form, merger.seat) == (
        "Registerbekanntmachung nach dem Umwandlungsgesetz",
        "75cl Distribution GmbH",
        "Gesellschaft mit beschränkter Haftung",
        "München",
    )
    assert merger.text.startswith("Den Gläubigern der an der Verschmelzung beteiligten Rechtsträger")
    assert deletion.entered is None and deletion.category == "Löschungsankündigung"
    assert (deletion.name, deletion.seat) == ("Hossy Bau GmbH", "Berlin")
    assert deletion.text.startswith("Bei der nachstehenden Gesellschaft wird das Amtslöschungsverfahren")


def test_the_portals_select_behaviour_and_messages(results_page):
    script = (
        'PrimeFaces.cw("Tree","widget_dk_form_dktree",{id:"dk_form:dktree",behaviors:{select:function(ext,event) '
        '{PrimeFaces.ab({s:"dk_form:dktree",e:"select",f:"dk_form",p:"dk_form:dktree",'
        'u:"dk_form:detailsNodePanelGrid dk_form:dktree dk_formInfobox"},ext);}}});'
    )
    behaviour = portal_pages.parse_behaviour(script, "select", "dk_form:dktree")
    assert behaviour.updates == ["dk_form:detailsNodePanelGrid", "dk_form:dktree", "dk_formInfobox"]
    assert behaviour.render == "dk_form:detailsNodePanelGrid dk_form:dktree dk_formInfobox"

    assert portal_pages.portal_messages(results_page) == []
    box = portal_pages.parse_page(
        b'<html><body><div id="form:messages" class="ui-messages ui-widget"><div class="ui-messages-error ui-corner-all">'
        b'<ul><li><span class="ui-messages-error-summary">Suche</span><span class="ui-messages-error-detail">'
        b"Bitte weiteres Suchkriterium angeben.</span></li></ul></div></div></body></html>"
    )
    assert portal_pages.portal_messages(box) == ["Suche: Bitte weiteres Suchkriterium angeben."]
