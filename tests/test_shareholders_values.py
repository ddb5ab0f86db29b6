"""Cells into values, as notaries print them and OCR reads them."""

from __future__ import annotations

from decimal import Decimal

import pytest

from orchestration.shareholders.cell_values import amounts_in, currency_in, percentages_in, running_numbers_in
from orchestration.shareholders.columns import Role, roles
from orchestration.shareholders.firms import firm_name, is_organisation, register_of, seat_of


@pytest.mark.parametrize(
    ("cell", "amounts"),
    [
        ("5.500,00 €", ["5500.00"]),
        ("EUR 3.834.700,-", ["3834700.00"]),
        ("12.500,--", ["12500.00"]),
        ("Je EUR 1,00", ["1.00"]),
        ("EUR 25.000", ["25000.00"]),
        ("EUR I", ["1.00"]),  # OCR's I for a 1
        ("11,569.00", ["11569.00"]),  # English notation
        ("1,00 EUR je 0,004 %", ["1.00"]),  # the percentage is not an amount
        ("12.500,-- (50 %)", ["12500.00"]),
    ],
)
def test_amounts(cell, amounts):
    assert amounts_in(cell) == [Decimal(a) for a in amounts]


def test_a_number_cell_with_its_nominal_amount_keeps_the_running_number_apart():
    assert amounts_in("1 105.000,00 EUR", need_mark=True) == [Decimal("105000.00")]


@pytest.mark.parametrize(
    ("cell", "numbers"),
    [
        ("1 – 6.250", [("1", "6250")]),
        ("19.814 – 21.438", [("19814", "21438")]),
        ("1 bis 25.000", [("1", "25000")]),
        ("1-25.000", [("1", "25000")]),
        ("1 bis.11.964", [("1", "11964")]),  # a speck after "bis" read as a dot
        ("1. 3.", [("1", None), ("3", None)]),
        ("3.1", [("3.1", None)]),
        ("l", [("1", None)]),
        ("1:2", [("1.2", None)]),  # a section number's dot read as a colon
        ("T", [("7", None)]),  # a lone 7 read as a letter
    ],
)
def test_running_numbers_and_ranges(cell, numbers):
    assert running_numbers_in(cell) == numbers


@pytest.mark.parametrize(
    ("cell", "bare", "values"),
    [
        ("95,45%", False, ["95.45"]),
        ("(25 %)", False, ["25"]),
        ("< 1 %", False, [None]),
        ("33,33 %*", False, ["33.33"]),
        ("10,72.%", False, ["10.72"]),  # a speck before the sign read as a dot
        ("66,66", True, ["66.66"]),  # a column headed "in %"
    ],
)
def test_percentages(cell, bare, values):
    assert [value for value, _ in percentages_in(cell, bare=bare)] == [Decimal(v) if v else None for v in values]


@pytest.mark.parametrize(
    ("text", "organisation"),
    [
        ("Rodekohr Holding GmbH & Co. KG, AG Walsrode HRA 203278", True),
        ("Muster Stiftung", True),
        ("Muster Bau eG", True),
        ("Muster UG (haftungsbeschränkt)", True),
        ("Double You Meubelcollectie B.V.", True),
        ("Apple Distribution International Limited", True),
        ("Amazon Europe Core S.à r.l.", True),
        ("Muster Aktiengesellschaft, Sitz Bonn", True),
        ("Stadt Musterhausen, vertreten durch den Oberbürgermeister", True),
        ("Freistaat Bayern", True),
        ("Mustermann, Erika, geb. 01.01.1970, Musterstadt", False),
        ("Mustermann, Erika, Am Markt 5, Stadtallendorf", False),
    ],
)
def test_persons_and_organisations_by_legal_form(text, organisation):
    assert is_organisation(text) is organisation


def test_firm_seat_and_register():
    text = "Daimler Truck Financial Services GmbH, Sitz Stuttgart, Amtsgericht Stuttgart, HRB 778756"
    assert firm_name(text) == "Daimler Truck Financial Services GmbH"
    assert seat_of(text) == "Stuttgart"
    assert register_of(text) == {
        "register_court": "Stuttgart",
        "register_type": "HRB",
        "register_number": "778756",
        "register_country": "DE",
    }


@pytest.mark.parametrize(
    ("text", "court", "register_type", "number"),
    [
        # the court on a line of its own after the number
        (
            "Muster GmbH mit dem Sitz in Bruchhausen-Vilsen HRB 206723 – Amtsgericht Walsrode",
            "Walsrode",
            "HRB",
            "206723",
        ),
        ("Muster GmbH & Co. KG, AG Walsrode HRA 203278", "Walsrode", "HRA", "203278"),
        (
            "Muster GmbH & Co. KG mit Sitz in München, eingetragen im Handelsregister des Amtsgerichts München "
            "unter HRA 102655",
            "München",
            "HRA",
            "102655",
        ),
        ("Muster GmbH, Sitz Bonn, HRB 1234 (AG Bonn)", "Bonn", "HRB", "1234"),
    ],
)
def test_a_german_register_with_its_court_before_or_after_the_number(text, court, register_type, number):
    register = register_of(text)

    assert (register["register_court"], register["register_type"], register["register_number"]) == (
        court,
        register_type,
        number,
    )


@pytest.mark.parametrize(
    ("text", "seat_column", "seat"),
    [
        ("Muster GmbH (AG Bremen HRB 12343)", "28237 Bremen", "Bremen"),
        (
            "Muster GmbH & Co. KG, AG Walsrode HRA 203278",
            "Alte Drift 1, 27305 Bruchhausen-Vilsen",
            "Bruchhausen-Vilsen",
        ),
        ("Muster B.V.", "4817ZH Breda/ Niederlande", "Breda, Niederlande"),
        ("Muster GmbH", "Bremen", "Bremen"),
        ("Muster Limited mit Sitz in Cork, Irland, eingetragen im Companies Registration Office", "", "Cork, Irland"),
        ("Muster S.à r.l. mit Sitz in Luxemburg / with seat in Luxembourg", "", "Luxemburg"),
        ("Muster gGmbH, Bremen mit einer Stammeinlage von", "", "Bremen"),
        ("Muster e.V., Bremen (Amtsgericht Bremen VR 1234)", "", "Bremen"),
        ("Muster GmbH, Alte Drift 1", "", None),
    ],
)
def test_a_seat_in_the_cell_or_its_own_column(text, seat_column, seat):
    assert seat_of(text, seat_column) == seat


def test_a_foreign_register_number_after_the_word_nummer():
    text = "Muster S. à r. l. mit dem Sitz in Luxemburg, eingetragen im RCS Luxemburg unter der Nummer B 180022"

    register = register_of(text)

    assert (register["register_court"], register["register_number"], register["register_country"]) == (
        "RCS Luxemburg",
        "B180022",
        "LU",
    )


@pytest.mark.parametrize(
    ("text", "number", "country"),
    [
        ("Reinhardt Verwaltungs GmbH, Sitz: Düsseldorf, Amtsgericht Düsseldorf, HRB.167012", "167012", "DE"),
        ("Muster GmbH, Amtsgericht Köln, HRB: 4711", "4711", "DE"),
        (
            "Stey Beteiligungs S.à r.l., mit dem Sitz in Luxemburg, eingetragen im R.C.S. Luxemburg, unter. B 108139",
            "B108139",
            "LU",
        ),
    ],
)
def test_a_register_with_a_speck_read_as_a_dot(text, number, country):
    register = register_of(text)

    assert (register["register_number"], register["register_country"]) == (number, country)
    assert firm_name(text).endswith(("GmbH", "S.à r.l."))


def test_a_foreign_register_number_after_its_label():
    # The wording of a real list's cell (its holder a firm, not a person).
    text = (
        "Amazon Europe Core SARL mit dem Sitz in Luxemburg, eingetragen im RCS Luxemburg unter der HR-Nummer B 180022"
    )
    register = register_of(text)

    assert (register["register_court"], register["register_number"]) == ("RCS Luxemburg", "B180022")
    assert register["register_country"] == "LU"


def test_foreign_register_and_the_luxembourg_form_as_ocr_reads_it():
    text = "Amazon Europe Core S.ä rr.l. mit dem Sitz in Luxemburg, eingetragen im RCS Luxemburg unter B 180022"
    assert firm_name(text) == "Amazon Europe Core S.à r.l."
    assert firm_name("Stey Beteiligungs S.a r.. mit dem Sitz in Luxemburg") == "Stey Beteiligungs S.à r.l."
    assert seat_of(text) == "Luxemburg"
    assert register_of(text)["register_number"] == "B180022"
    assert register_of(text)["register_country"] == "LU"


@pytest.mark.parametrize(
    ("cell", "firm", "court", "number", "country"),
    [
        (
            "Lumière Distribution SAS, Handelsregister: Greffe du Tribunal de Commerce de Lyon, "
            "Registrierungsnummer: 812 345 678 R.C.S. Lyon, Sitz: Lyon, Frankreich",
            "Lumière Distribution SAS",
            "Greffe du Tribunal de Commerce de Lyon",
            "812345678",
            "FR",
        ),
        (
            "Nordlicht Holding B.V., Sitz: Amsterdam, Niederlande, Kamer van Koophandel, KvK-nummer 34123456",
            "Nordlicht Holding B.V.",
            "Kamer van Koophandel",
            "34123456",
            "NL",
        ),
        (
            "Thames Ventures Limited, registered with Companies House under Company No. 09876543, "
            "seat: London, United Kingdom",
            "Thames Ventures Limited",
            "Companies House",
            "09876543",
            "GB",
        ),
        (
            "Alpen Beteiligungs GmbH, Sitz: Wien, Österreich, Firmenbuch FN 123456 a, Handelsgericht Wien",
            "Alpen Beteiligungs GmbH",
            "Firmenbuch",
            "FN123456a",
            "AT",
        ),
        (
            "Helvetia Invest AG, Sitz: Zug, Schweiz, Handelsregister des Kantons Zug, CHE-123.456.789",
            "Helvetia Invest AG",
            "Handelsregister des Kantons Zug",
            "CHE-123.456.789",
            "CH",
        ),
    ],
)
def test_foreign_companies_by_their_registers(cell, firm, court, number, country):
    assert is_organisation(cell)
    assert firm_name(cell) == firm
    register = register_of(cell)
    assert (register["register_court"], register["register_number"], register["register_country"]) == (
        court,
        number,
        country,
    )
    assert register["register_type"] is None


@pytest.mark.parametrize(
    "firm",
    [
        "Lumière SASU",
        "Société Lumière par actions simplifiée",
        "Iberia Capital S.L.",
        "Roma Partecipazioni S.p.A.",
        "Milano Servizi S.r.l.",
        "Nordic Invest AB",
        "Dansk Holding A/S",
        "Fjord Invest AS",
        "Suomi Capital Oy",
        "Acme Holdings Inc.",
        "Acme Ventures LLC",
        "Acme Corp.",
        "Thames Ventures PLC",
        "Brabant N.V.",
        "Stichting Administratiekantoor Muster",
        "Muster Foundation",
    ],
)
def test_foreign_legal_forms(firm):
    assert is_organisation(firm)


def test_currency():
    assert currency_in("50.000,00 DM") == "DEM"
    assert currency_in("25.000,00 €") == "EUR"


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("Lfd. Nr. + Nennbetrag des Geschäftsanteils", {Role.NUMBER, Role.NOMINAL}),
        ("Prozentuale Beteili- gung des Nennbetra- ges am Stammkapital", {Role.PERCENT}),
        ("Prozentualer Gesamtum- fang der Beteiligung des Gesellschafters", {Role.PERCENT_TOTAL}),
        ("Summe der Stammein- lagen der Gesellschafter", {Role.NOMINAL_TOTAL}),
        ("Nennbetrag in Euro (= % vom Stammkapital)", {Role.NOMINAL}),
        ("Stück GA*", {Role.COUNT}),
        ("Nennbetrag je Stück in EUR", {Role.NOMINAL}),
        ("bisherige lfd. Nr. GA*", {Role.IGNORED}),
        ("Veränderungsspalte", {Role.CHANGES}),
        ("Zwischensumme (in % des Stammkapitals)", {Role.SUBTOTAL}),
        ("Summe der Nominal- beträge in EUR", {Role.NOMINAL_TOTAL}),
        ("Gesamtumfang der Beteiligung in %", {Role.PERCENT_TOTAL}),
        ("Summeider' Nennbetfäge", {Role.NOMINAL_TOTAL}),  # as OCR read a shaded heading
        ("Wohnort / Sitz", {Role.DETAIL}),
    ],
)
def test_columns_by_their_headings(heading, expected):
    assert roles(heading) == expected
