"""Shareholder rows from table cells: rows over several lines, several shares per shareholder,
subtotals, ranges, the changes column, lists numbered by entry."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from orchestration.shareholders.page_layout import Page, Word
from orchestration.shareholders.parse import extract_shareholders
from orchestration.shareholders.rows import extract
from orchestration.shareholders.tables import read_tables
from shareholder_tables import table

RULED = ["Lfd. Nr.", "Gesellschafter", "Nennbetrag in EUR", "Prozent je Anteil", "Gesamtbeteiligung", "Veränderungen"]


def test_a_shareholder_over_several_lines_and_shares_with_a_subtotal():
    read = extract(
        table(
            RULED,
            [
                ["1", "Muster Holding GmbH", "10.000,00", "40 %", "60 %", "Abtretung von der Beispiel AG"],
                ["", "mit Sitz in Köln", "", "", "", "(UR-Nr. 12/2020)"],
                ["", "Amtsgericht Köln HRB 1234", "", "", "", ""],
                ["2", "", "5.000,00", "20 %", "", ""],
                ["", "", "15.000,00", "", "", ""],
                ["3", "Beispiel Verwaltungs AG, Sitz Bonn", "10.000,00", "40 %", "40 %", ""],
            ],
        )
    )

    first, second = read.shareholders
    assert (first.kind, first.name, first.seat, first.register_number) == (
        "organisation",
        "Muster Holding GmbH",
        "Köln",
        "1234",
    )
    assert [share.number for share in first.shares] == ["1", "2"]
    assert first.nominal_total == Decimal("15000.00")
    assert first.percentage == Decimal("60")
    assert (second.name, second.nominal_total) == ("Beispiel Verwaltungs AG", Decimal("10000.00"))
    assert read.total_nominal == Decimal("25000.00")


def test_rows_naming_the_same_shareholder_again_are_one_shareholder():
    read = extract(
        table(
            RULED,
            [
                ["1.", "Muster Beteiligungs GmbH", "32.000,00", "66,66", "80", ""],
                ["3.", "Muster Beteiligungs GmbH", "6.400,00", "13,33", "80", "Teilung Geschäftsanteil Nr. 2"],
                ["4.", "Beispiel Holding GmbH", "9.600,00", "20", "20", ""],
            ],
        )
    )

    assert [(h.name, h.nominal_total, h.percentage) for h in read.shareholders] == [
        ("Muster Beteiligungs GmbH", Decimal("38400.00"), Decimal("80")),
        ("Beispiel Holding GmbH", Decimal("9600.00"), Decimal("20")),
    ]


def test_a_range_of_one_euro_shares():
    read = extract(
        table(
            ["Lfd. Nr.", "Nennbeträge der einzelnen Geschäftsanteile", "Gesellschafter", "Summe der Stammeinlagen"],
            [["1 bis 25.000", "Je EUR 1,00", "Muster Holding GmbH", "EUR 25.000,00"]],
        )
    )

    [holder] = read.shareholders
    assert [(s.number, s.last_number, s.nominal, s.count) for s in holder.shares] == [
        ("1", "25000", Decimal("1.00"), 25000)
    ]
    assert holder.nominal_total == Decimal("25000.00")


def test_an_old_list_numbered_by_entry_with_an_unlabelled_sum_and_no_percentages():
    checked = extract_shareholders(
        table(
            ["Gesellschafter", "Betrag der übernommenen Stammeinlage"],
            [
                ["1. Muster Verein e.V., Bremen", ""],
                ["(Amtsgericht Bremen VR 1234)", ""],
                ["mit einer Stammeinlage von", "EUR 24.900,00"],
                ["2. Beispiel gGmbH, Bremen", ""],
                ["mit einer Stammeinlage von", "EUR 100,00"],
                ["", "EUR 25.000,00"],
            ],
            rows_ruled=False,
        ),
        capital=Decimal("25000"),
        method="rules",
    )

    assert [(h.name, h.nominal_total, h.percentage, h.percentage_derived) for h in checked.shareholders] == [
        ("Muster Verein e.V.", Decimal("24900.00"), Decimal("99.60"), True),
        ("Beispiel gGmbH", Decimal("100.00"), Decimal("0.40"), True),
    ]
    assert [s.number for h in checked.shareholders for s in h.shares] == ["1", "2"]
    assert checked.total_nominal == Decimal("25000.00")
    assert checked.validation.status == "verified"


def test_a_list_that_misses_the_capital_needs_review():
    checked = extract_shareholders(
        table(RULED, [["1", "Muster Holding GmbH, Bonn", "25.000,00", "100 %", "100 %", ""]]),
        capital=Decimal("50000"),
        method="rules",
    )

    assert checked.validation.status == "needs_review"
    assert [c.name for c in checked.validation.failed] == [
        "nominal_sum_matches_capital",
        "percentages_match_nominal",
        "share_percentages_match_nominal",
    ]


def _words(y: float, cells: list[tuple[float, str]]) -> list[Word]:
    """One line of a page: each cell's text at its left edge, a word box per word."""
    words = []
    for x, text in cells:
        for word in text.split():
            words.append(Word(word, x, y, x + 12 * len(word), y + 20, 92.0))
            x += 12 * len(word) + 8
    return words


def test_a_table_goes_on_over_a_page_without_repeating_its_heading():
    columns = [40.0, 200.0, 900.0, 1200.0]
    first = Page(
        number=1,
        width=1400,
        height=2000,
        words=_words(100, [(400, "Liste der Gesellschafter")])
        + _words(200, list(zip(columns, ["Lfd. Nr.", "Gesellschafter", "Nennbetrag", "Beteiligung"], strict=True)))
        + _words(260, list(zip(columns, ["1", "Muster Holding GmbH", "10.000,00", "40 %"], strict=True)))
        + _words(300, list(zip(columns, ["2", "Beispiel AG", "5.000,00", "20 %"], strict=True))),
    )
    second = Page(
        number=2,
        width=1400,
        height=2000,
        words=_words(60, [(650, "- 2 -")])
        + _words(120, list(zip(columns, ["3", "Dritte Verwaltungs GmbH", "10.000,00", "40 %"], strict=True)))
        + _words(180, [(columns[1], "Summe"), (columns[2], "25.000,00"), (columns[3], "100 %")])
        + _words(260, [(columns[0], "Musterstadt, den 1. Juli 2024")]),
    )

    read = extract(read_tables([first, second]))

    assert [h.name for h in read.shareholders] == ["Muster Holding GmbH", "Beispiel AG", "Dritte Verwaltungs GmbH"]
    assert read.total_nominal == Decimal("25000.00")


def test_a_typed_list_headed_only_by_shareholder_and_shares():
    columns = [40.0, 800.0]
    page = Page(
        number=1,
        width=1400,
        height=2000,
        words=_words(200, list(zip(columns, ["Gesellschafter", "Geschäftsanteile"], strict=True)))
        + _words(260, list(zip(columns, ["1. Muster Holding GmbH, Köln", "EUR 20.000,00"], strict=True)))
        + _words(300, list(zip(columns, ["2. Beispiel AG, Bonn", "EUR 5.000,00"], strict=True)))
        + _words(360, [(columns[0], "Stammkapital"), (columns[1], "EUR 25.000,00")]),
    )

    read = extract(read_tables([page]))

    assert [(h.name, h.nominal_total) for h in read.shareholders] == [
        ("Muster Holding GmbH", Decimal("20000.00")),
        ("Beispiel AG", Decimal("5000.00")),
    ]
    assert read.total_nominal == Decimal("25000.00")


SEVERAL_RANGES = [
    "Lfd. Nr. der Geschäftsanteile",
    "Gesellschafter",
    "Nennbetrag je Geschäftsanteil in EUR",
    "Zwischensumme in EUR",
    "Summe der Nominalbeträge in EUR",
    "Gesamtumfang der Beteiligung in %",
    "Veränderungen",
]


def test_a_holder_of_several_ranges_with_intermediate_sums_and_totals():
    checked = extract_shareholders(
        table(
            SEVERAL_RANGES,
            [
                [
                    "1 – 6.250",
                    "Lumière Distribution SAS",
                    "je 1,00",
                    "6.250,00 (25 %)",
                    "7.875,00",
                    "31,5 %",
                    "Nr. 19.814 – 21.438",
                ],
                ["", "Handelsregister: Greffe du Tribunal", "", "", "", "", "erworben von der"],
                ["", "de Commerce de Lyon, Registrierungs-", "", "", "", "", "Beispiel Verwaltungs GmbH"],
                ["", "nummer: 812 345 678 R.C.S. Lyon", "", "", "", "", ""],
                ["", "Sitz: Lyon, Frankreich", "", "", "", "", ""],
                ["19.814 – 21.438", "", "je 1,00", "1.625,00 (6,5 %)", "", "", ""],
                ["6.251 – 14.625", "Mustermann, Erika", "je 1,00", "8.375,00 (33,5 %)", "10.125,00", "40,5 %", ""],
                ["", "geb. 01.01.1970, Köln", "", "", "", "", ""],
                ["21.439 – 23.188", "", "je 1,00", "1.750,00 (7 %)", "", "", ""],
                [
                    "14.626 – 19.813",
                    "Beispiel Verwaltungs GmbH",
                    "je 1,00",
                    "5.188,00 (20,75 %)",
                    "7.000,00",
                    "28 %",
                    "",
                ],
                ["", "Sitz Bonn, Amtsgericht Bonn HRB 1234", "", "", "", "", ""],
                ["23.189 – 25.000", "", "je 1,00", "1.812,00 (7,25 %)", "", "", ""],
            ],
        ),
        capital=Decimal("25000"),
        method="rules",
    )

    assert [(h.kind, h.nominal_total, h.percentage) for h in checked.shareholders] == [
        ("organisation", Decimal("7875.00"), Decimal("31.5")),
        ("person", Decimal("10125.00"), Decimal("40.5")),
        ("organisation", Decimal("7000.00"), Decimal("28")),
    ]
    assert [[(s.number, s.last_number, s.percentage) for s in h.shares] for h in checked.shareholders] == [
        [("1", "6250", Decimal("25")), ("19814", "21438", Decimal("6.5"))],
        [("6251", "14625", Decimal("33.5")), ("21439", "23188", Decimal("7"))],
        [("14626", "19813", Decimal("20.75")), ("23189", "25000", Decimal("7.25"))],
    ]
    french = checked.shareholders[0]
    assert (french.name, french.seat) == ("Lumière Distribution SAS", "Lyon, Frankreich")
    assert (french.register_court, french.register_number, french.register_country, french.register_type) == (
        "Greffe du Tribunal de Commerce de Lyon",
        "812345678",
        "FR",
        None,
    )
    assert french.changes == "Nr. 19.814 – 21.438 erworben von der Beispiel Verwaltungs GmbH"
    assert checked.total_nominal == Decimal("25000.00")
    assert checked.validation.status == "verified"


def test_intermediate_sums_labelled_under_the_amount_without_total_columns():
    read = extract(
        table(
            ["Lfd. Nr.", "Gesellschafter", "Nennbetrag in EUR", "Veränderungen"],
            [
                ["1 – 6.250", "Muster Holding GmbH, Sitz Köln", "je 1,00", ""],
                ["", "", "Zwischensumme: 6.250,00 (25 %)", ""],
                ["19.814 – 21.438", "", "je 1,00", ""],
                ["", "", "Zwischensumme: 1.625,00 (6,5 %)", ""],
                ["6.251 – 19.813", "Beispiel AG, Sitz Bonn", "je 1,00", ""],
                ["", "", "Zwischensumme: 13.563,00 (54,25 %)", ""],
                ["21.439 – 25.000", "", "je 1,00", ""],
                ["", "", "Zwischensumme: 3.562,00 (14,25 %)", ""],
            ],
        )
    )

    assert [(h.nominal_total, h.percentage) for h in read.shareholders] == [
        (Decimal("7875.00"), Decimal("31.5")),
        (Decimal("17125.00"), Decimal("68.5")),
    ]
    assert read.total_nominal == Decimal("25000.00")
    assert not read.total_stated  # no intermediate sum is taken for the list's total


def test_a_share_beside_a_foreign_register_line_belongs_to_the_company_above():
    read = extract(
        table(
            ["Lfd. Nr.", "Gesellschafter", "Nennbetrag in EUR", "Gesamtbeteiligung"],
            [
                ["1", "Dupont Conseil SAS", "5.000,00", "50 %"],
                ["2", "Handelsregister: Greffe du Tribunal de Commerce de Lyon,", "5.000,00", ""],
                ["", "Registrierungsnummer: 812 345 678 R.C.S. Lyon,", "", ""],
                ["", "Sitz: Lyon, Frankreich", "", ""],
                ["3", "Beispiel GmbH, Sitz Bonn", "10.000,00", "50 %"],
            ],
            rows_ruled=False,
        )
    )

    french, german = read.shareholders
    assert (french.name, french.nominal_total, french.register_number) == (
        "Dupont Conseil SAS",
        Decimal("10000.00"),
        "812345678",
    )
    assert german.name == "Beispiel GmbH"


def test_a_register_the_reader_cannot_read_is_a_cell_for_review():
    # "HRB 167012" as OCR may read it, with a speck for a dot and the type lost
    checked = extract_shareholders(
        table(
            RULED,
            [
                [
                    "1",
                    "Muster Verwaltungs GmbH, Sitz: Düsseldorf, Amtsgericht Düsseldorf, H.RB 167012",
                    "25.000,00",
                    "100 %",
                    "100 %",
                    "",
                ]
            ],
        ),
        capital=Decimal("25000"),
        method="rules",
    )

    [holder] = checked.shareholders
    assert holder.register_number is None
    assert checked.validation.status == "needs_review"
    assert [c.name for c in checked.validation.failed] == ["read_confidently"]
    assert "Amtsgericht Düsseldorf" in checked.low_confidence_cells[0].text


def test_a_section_number_or_a_percentage_that_lost_its_dot_is_read_with_it():
    # "1.2" read as "12", "7,5 %" read as "75 %": OCR loses thin dots and commas
    read = extract(
        table(
            RULED,
            [
                [
                    "1.1",
                    "Muster Holding GmbH, Sitz: Köln, Amtsgericht Köln, HRB 4711",
                    "4.903,00",
                    "19,6 %",
                    "45,7 %",
                    "",
                ],
                ["12", "", "1.878,00", "75 %", "", ""],
                ["1.3", "", "4.644,00", "18,6 %", "", ""],
                ["2", "Beispiel AG, Sitz: Bonn, Amtsgericht Bonn, HRB 815", "13.575,00", "54,3 %", "54,3 %", ""],
            ],
        )
    )

    first, second = read.shareholders
    assert [(s.number, s.percentage) for s in first.shares] == [
        ("1.1", Decimal("19.6")),
        ("1.2", Decimal("7.5")),
        ("1.3", Decimal("18.6")),
    ]
    assert [s.number for s in second.shares] == ["2"]


def test_a_firm_with_letters_a_scan_cannot_tell_apart_is_for_review():
    # "Koch II Invest GmbH" as OCR reads a sans-serif scan: "II" and "Il" are the same strokes.
    cells = ["1", "Koch Il Invest GmbH, Sitz: Bonn, Amtsgericht Bonn, HRB 1234", "25.000,00", "100 %", "100 %", ""]
    scanned = table(RULED, [cells])
    typed = table(RULED, [cells])
    typed.pages = [replace(page, source="text_layer") for page in typed.pages]

    from_scan = extract_shareholders(scanned, capital=Decimal("25000"), method="rules")
    from_text = extract_shareholders(typed, capital=Decimal("25000"), method="rules")

    assert from_scan.validation.status == "needs_review"
    assert [c.name for c in from_scan.validation.failed] == ["read_confidently"]
    assert "Koch Il Invest GmbH" in from_scan.low_confidence_cells[0].text
    assert from_text.validation.status == "verified"
