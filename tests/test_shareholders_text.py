"""Shareholder lists with a text layer: every generated layout is read back as its truth."""

from __future__ import annotations

import io
from decimal import Decimal

import pdfplumber
import pytest
from reportlab.pdfgen.canvas import Canvas

from orchestration.runtime.failures import FailureClass, JobError
from orchestration.shareholders.page_reader import read_pages
from orchestration.shareholders.parse import parse_shareholder_list
from sample_register.shareholder_lists import LAYOUTS, generate_list

CAPITAL = Decimal("25000")


def _generated(seed: int, layout: str, capital: Decimal = CAPITAL):
    return generate_list(
        seed,
        company_name="Muster Handels GmbH",
        capital=capital,
        register="Amtsgericht Köln, HRB 4711",
        layout=layout,
        form="text_pdf",
    )


def _content(result) -> dict:
    return result.model_dump(mode="json", exclude={"method", "validation"})


def _first(layout: str, wanted) -> tuple[int, object]:
    """The first seed whose generated list has a feature, so a test names the feature, not a seed."""
    for seed in range(60):
        generated = _generated(seed, layout)
        if wanted(generated.expected):
            return seed, generated
    raise AssertionError(f"no {layout} list with the feature among 60 seeds")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_text_layer_list_is_read_as_generated(layout, seed):
    generated = _generated(seed, layout)

    result = parse_shareholder_list(generated.content, capital=CAPITAL, method="rules")

    assert _content(result) == _content(generated.expected)
    assert result.method == "rules"
    assert result.validation.valid, result.validation.failed


def test_text_pages_are_not_sent_to_ocr():
    pages = read_pages(_generated(1, "multipage").content)

    assert len(pages) == 3
    assert {page.source for page in pages} == {"text_layer"}


def test_capital_with_cents_from_a_currency_conversion():
    capital = Decimal("25564.59")
    for layout in ("per_share", "ranges"):
        generated = _generated(4, layout, capital)

        result = parse_shareholder_list(generated.content, capital=capital, method="rules")

        assert _content(result) == _content(generated.expected)
        assert sum(holder.nominal_total for holder in result.shareholders) == capital


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("capital", [Decimal(1), Decimal(3)])
def test_an_ug_with_fewer_euros_of_capital_than_a_list_has_holders_has_a_list_read_as_generated(layout, capital):
    # Each holder holds at least a whole euro: a 1 € UG's list names one holder, a 3 € UG's at most
    # three (a multipage list has sixteen or more holders otherwise).
    generated = _generated(5, layout, capital)

    result = parse_shareholder_list(generated.content, capital=capital, method="rules")

    assert 1 <= len(result.shareholders) <= capital
    assert sum(holder.nominal_total for holder in result.shareholders) == capital
    assert _content(result) == _content(generated.expected)


def test_ranges_of_one_euro_shares():
    generated = _generated(2, "ranges")

    result = parse_shareholder_list(generated.content, method="rules")

    first = result.shareholders[0].shares[0]
    assert first.number == "1" and first.last_number is not None
    assert first.nominal == Decimal("1.00")
    assert result.shareholders[0].nominal_total == Decimal(first.last_number)


def test_shares_numbered_in_sections():
    _seed, generated = _first(
        "per_share", lambda truth: any("." in share.number for holder in truth.shareholders for share in holder.shares)
    )

    result = parse_shareholder_list(generated.content, method="rules")

    numbers = [share.number for holder in result.shareholders for share in holder.shares]
    assert any(number.endswith(".1") for number in numbers) and any(number.endswith(".2") for number in numbers)
    assert numbers == [share.number for holder in generated.expected.shareholders for share in holder.shares]


def test_below_one_percent_keeps_the_statement_and_derives_the_number():
    generated = _generated(1, "multipage")  # multi-page lists always have a small holder

    result = parse_shareholder_list(generated.content, capital=CAPITAL, method="rules")

    small = [holder for holder in result.shareholders if holder.percentage_below_one]
    assert small
    for holder in small:
        assert holder.percentage == (holder.nominal_total * 100 / CAPITAL).quantize(Decimal("0.01"))
        assert holder.percentage < 1


def test_corporate_shareholders_with_seat_and_register():
    generated = _generated(3, "corporate")

    result = parse_shareholder_list(generated.content, method="rules")

    organisations = [holder for holder in result.shareholders if holder.kind == "organisation"]
    assert organisations
    truth = {holder.name: holder for holder in generated.expected.shareholders}
    for holder in organisations:
        expected = truth[holder.name]
        assert (holder.seat, holder.register_court, holder.register_type, holder.register_number) == (
            expected.seat,
            expected.register_court,
            expected.register_type,
            expected.register_number,
        )
        assert holder.first_name is None and holder.birth_date is None


def test_english_headings_and_number_format():
    generated = _generated(2, "english")

    result = parse_shareholder_list(generated.content, method="rules")

    assert result.currency == "EUR"
    assert result.total_nominal == CAPITAL
    assert [holder.name for holder in result.shareholders] == [
        holder.name for holder in generated.expected.shareholders
    ]


def test_pdf_without_a_shareholder_table_is_a_parser_error():
    buffer = io.BytesIO()
    canvas = Canvas(buffer)
    canvas.drawString(72, 750, "Sehr geehrte Damen und Herren, anbei erhalten Sie die Unterlagen zur Anmeldung.")
    canvas.drawString(72, 730, "Mit freundlichen Grüßen, Ihr Notariat am Marktplatz 12, 50667 Köln")
    canvas.save()

    with pytest.raises(JobError) as raised:
        parse_shareholder_list(buffer.getvalue(), method="rules")

    assert raised.value.failure_class == FailureClass.PARSER_ERROR


def test_generation_is_deterministic_and_scans_carry_no_text():
    first = generate_list(9, company_name="A GmbH", capital=CAPITAL, layout="corporate", form="scan_pdf")
    again = generate_list(9, company_name="A GmbH", capital=CAPITAL, layout="corporate", form="scan_pdf")
    other = generate_list(10, company_name="A GmbH", capital=CAPITAL, layout="corporate", form="scan_pdf")

    assert first.content == again.content and first.expected == again.expected
    assert first.content != other.content
    assert first.media_type == "application/pdf" and first.filename.endswith(".pdf")
    with pdfplumber.open(io.BytesIO(first.content)) as pdf:
        assert not (pdf.pages[0].extract_text() or "").strip()
