"""A PDF whose text layer reads poorly (a scanner's own OCR) is read again by our OCR of its
rendered pages, and the result says which reading it is; a good text layer is never OCRed."""

from __future__ import annotations

import io
import json
from decimal import Decimal

import pypdfium2
import pytest
from click.testing import CliRunner
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen.canvas import Canvas

from orchestration.cli import main
from orchestration.runtime.failures import JobError
from orchestration.shareholders.page_reader import read_pages
from orchestration.shareholders.parse import extract_shareholders, parse_shareholder_list
from orchestration.shareholders.tables import read_tables
from sample_register.shareholder_lists import POOR_TEXT_LAYER, generate_list

# Tesseract reads the rendered pages of the PDFs whose text layer reads poorly, seconds a page.
pytestmark = pytest.mark.slow

CAPITAL = Decimal("25000")
READ_EXACTLY = {"kind", "name", "register_type", "register_number", "shares", "nominal_total", "percentage"}


def _generated(form: str):
    return generate_list(3, company_name="Muster GmbH", capital=CAPITAL, layout="corporate", form=form)


@pytest.fixture(scope="module")
def poor_text_layer():
    """A scanned list whose invisible text layer misreads a third of its letters and digits."""
    generated = _generated(POOR_TEXT_LAYER)
    pages = read_pages(generated.content)
    assert {page.source for page in pages} == {"text_layer"}
    try:
        by_text_layer = extract_shareholders(read_tables(pages), capital=CAPITAL, method="rules")
    except JobError:
        by_text_layer = None
    assert by_text_layer is None or not by_text_layer.validation.valid, "the text layer must read wrong"
    return generated


def test_a_poor_text_layer_is_read_again_by_ocr(poor_text_layer):
    result = parse_shareholder_list(poor_text_layer.content, capital=CAPITAL, method="rules")

    assert (result.source, result.ocr_fallback) == ("ocr", "used")
    assert result.validation.status == "verified", result.validation.failed
    assert [holder.model_dump(include=READ_EXACTLY) for holder in result.shareholders] == [
        holder.model_dump(include=READ_EXACTLY) for holder in poor_text_layer.expected.shareholders
    ]
    assert result.total_nominal == CAPITAL


def test_the_cli_says_the_list_was_read_by_ocr_instead_of_its_text_layer(poor_text_layer, tmp_path):
    path = tmp_path / "liste.pdf"
    path.write_bytes(poor_text_layer.content)

    result = CliRunner().invoke(main, ["shareholders", "parse", str(path), "--capital", "25000", "--method", "rules"])

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["source"], document["ocr_fallback"]) == ("ocr", "used")
    assert "read from: ocr (OCR fallback for the text layer: used)" in result.stderr


def test_a_text_layer_that_verifies_is_not_read_by_ocr():
    generated = _generated("text_pdf")

    result = parse_shareholder_list(generated.content, capital=CAPITAL, method="rules")

    assert result.validation.status == "verified"
    assert (result.source, result.ocr_fallback) == ("text_layer", None)


def _as_images(generated, *, stamp: bool = False, text_page: str | None = None) -> bytes:
    """The pages of ``generated`` as images; with ``stamp`` a text layer on each that holds only
    the scanner's stamp, with ``text_page`` a last page of that text."""
    scan = pypdfium2.PdfDocument(generated.content)
    buffer = io.BytesIO()
    canvas = Canvas(buffer, invariant=1)
    canvas.setFont("Helvetica", 8)
    try:
        for number, page in enumerate(scan, 1):
            width, height = page.get_size()
            canvas.setPageSize((width, height))
            canvas.drawImage(ImageReader(page.render(scale=300 / 72, grayscale=True).to_pil()), 0, 0, width, height)
            if stamp:
                canvas.drawString(20, 20, f"Gescannt am 01.12.2026 mit Scanner 4711, Seite {number}")
            canvas.showPage()
    finally:
        scan.close()
    if text_page:
        canvas.setFont("Helvetica", 10)
        canvas.drawString(40, 700, text_page)
        canvas.showPage()
    canvas.save()
    return buffer.getvalue()


def test_a_text_layer_without_the_table_is_read_by_ocr():
    generated = _generated("text_pdf")
    content = _as_images(generated, stamp=True)
    with pytest.raises(JobError, match="no shareholder table"):
        extract_shareholders(read_tables(read_pages(content)), capital=CAPITAL, method="rules")

    result = parse_shareholder_list(content, capital=CAPITAL, method="rules")

    assert (result.source, result.ocr_fallback) == ("ocr", "used")
    assert result.validation.status == "verified", result.validation.failed
    assert [holder.model_dump(include=READ_EXACTLY) for holder in result.shareholders] == [
        holder.model_dump(include=READ_EXACTLY) for holder in generated.expected.shareholders
    ]


def test_a_table_read_by_ocr_is_not_read_again_for_a_text_layer_elsewhere():
    """A scanned list with the notary's certificate as text on its own page: the table comes from
    OCR already, so a check it fails is no reason to OCR the certificate."""
    generated = _generated("text_pdf")
    certificate = "Bescheinigung gemäß § 40 Abs. 2 GmbHG: Die Liste entspricht den Veränderungen."
    content = _as_images(generated, text_page=certificate)
    assert [page.source for page in read_pages(content)] == ["ocr", "text_layer"]

    result = parse_shareholder_list(content, capital=Decimal("50000"), method="rules")

    assert result.validation.status == "needs_review"
    assert (result.source, result.ocr_fallback) == ("ocr", None)
