"""Scanned shareholder lists: Tesseract with orientation detection. OCR is slow, so each test
reads one page."""

from __future__ import annotations

from decimal import Decimal

import pytesseract
import pytest

from orchestration.runtime.failures import FailureClass, JobError
from orchestration.shareholders.page_reader import read_pages
from orchestration.shareholders.parse import extract_shareholders, parse_shareholder_list
from orchestration.shareholders.tables import read_tables
from sample_register.shareholder_lists import generate_list

# Tesseract reads a scanned page per test, seconds each.
pytestmark = pytest.mark.slow

CAPITAL = Decimal("25000")


def _scan(layout: str, form: str, rotation: int):
    """The first generated single-page scan turned by ``rotation`` degrees."""
    for seed in range(80):
        generated = generate_list(seed, company_name="Muster GmbH", capital=CAPITAL, layout=layout, form=form)
        if generated.rotation == rotation:
            return generated
    raise AssertionError(f"no {layout} {form} turned by {rotation} among 80 seeds")


# Names may pick up a stray character from scanner specks; the numbers that carry the ownership may not.
EXACT_FIELDS = {
    "kind",
    "birth_date",
    "register_type",
    "register_number",
    "shares",
    "nominal_total",
    "percentage_below_one",
}


def _assert_read_as_generated(result, generated) -> None:
    assert len(result.shareholders) == len(generated.expected.shareholders)
    for got, truth in zip(result.shareholders, generated.expected.shareholders):
        assert got.model_dump(include=EXACT_FIELDS) == truth.model_dump(include=EXACT_FIELDS)
        read = " ".join(filter(None, (got.name, got.residence, got.seat, got.register_court)))
        for part in (truth.first_name, truth.last_name, truth.residence, truth.seat, truth.register_court):
            assert part is None or part in read
        if got.percentage != truth.percentage:
            assert not result.validation.valid  # a misread percentage is flagged, not passed off
    assert result.total_nominal == CAPITAL


@pytest.mark.parametrize(
    ("layout", "form", "rotation"),
    [("per_share", "tiff", 90), ("corporate", "scan_pdf", 180), ("ranges", "scan_pdf", 0)],
    ids=["tiff-turned-90", "landscape-pdf-upside-down", "ranges-upright"],
)
def test_scanned_list_is_turned_upright_and_read(layout, form, rotation):
    generated = _scan(layout, form, rotation)

    pages = read_pages(generated.content)
    result = extract_shareholders(read_tables(pages), capital=CAPITAL, method="rules")

    assert [page.source for page in pages] == ["ocr"]
    assert pages[0].rotation == rotation
    _assert_read_as_generated(result, generated)


def test_missing_tesseract_fails_scans_but_not_text_pdfs(monkeypatch):
    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    scan = generate_list(1, company_name="Muster GmbH", capital=CAPITAL, layout="per_share", form="tiff")
    text = generate_list(1, company_name="Muster GmbH", capital=CAPITAL, layout="per_share", form="text_pdf")

    with pytest.raises(JobError) as raised:
        parse_shareholder_list(scan.content)

    assert raised.value.failure_class == FailureClass.DEPENDENCY_UNAVAILABLE
    assert "Tesseract" in raised.value.message
    assert parse_shareholder_list(text.content, method="rules").shareholders


def test_lone_running_numbers_are_read_again_until_they_read_as_numbers():
    # Typed without rules, the numbers 3 and 4 stand alone beside wide white space: read with the
    # page they come out as a sign and a letter ("=", "u"), read alone as one line they are numbers.
    generated = generate_list(5003, company_name="Bench 3 GmbH", capital=CAPITAL, layout="english", form="scan_pdf")

    result = parse_shareholder_list(generated.content, capital=CAPITAL, method="rules")

    assert [s.number for h in result.shareholders for s in h.shares] == ["1", "2", "3", "4", "5"]
    _assert_read_as_generated(result, generated)
    assert result.validation.status == "verified"


def test_numbers_under_pale_row_rules_are_read_column_by_column():
    # Holders are parted by pale grey rules and the table has no column rules: read with the
    # page, the lone "4" under such a rule came out as an "s"; its column read alone gives it.
    generated = generate_list(5016, company_name="Bench 16 GmbH", capital=CAPITAL, layout="corporate", form="scan_pdf")

    result = parse_shareholder_list(generated.content, capital=CAPITAL, method="rules")

    assert [s.number for h in result.shareholders for s in h.shares] == ["1", "2", "3.1", "3.2", "4", "5", "6"]
    _assert_read_as_generated(result, generated)
    assert result.validation.status == "verified"


def test_a_section_number_read_uncertainly_is_read_again_enlarged_and_keeps_its_dot():
    # Read with the page, "1.1" came out as "1" with its dot and last digit lost; read again
    # on its own at twice the size, it is "1.1".
    generated = generate_list(5030, company_name="Bench 30 GmbH", capital=CAPITAL, layout="corporate", form="scan_pdf")

    result = parse_shareholder_list(generated.content, capital=CAPITAL, method="rules")

    assert [s.number for s in result.shareholders[0].shares] == ["1.1", "1.2"]
    _assert_read_as_generated(result, generated)
    assert result.validation.status == "verified"
