"""Corrupt and hostile files are refused as invalid_file before they cost memory or time; the CLI
says so in one line."""

from __future__ import annotations

import io
import json
import struct
import zlib
from decimal import Decimal

import pytest
from click.testing import CliRunner
from PIL import Image

from orchestration.cli import main
from orchestration.runtime.failures import FailureClass, JobError
from orchestration.shareholders.page_reader import MAX_PAGE_PIXELS, MAX_PAGES, read_pages
from sample_register.shareholder_lists import generate_list


def _text_pdf() -> bytes:
    return generate_list(
        5, company_name="Muster GmbH", capital=Decimal("25000"), layout="per_share", form="text_pdf"
    ).content


def _png_bomb(side: int) -> bytes:
    """A bilevel PNG of side×side white pixels: a few hundred KiB that decode to side² pixels."""
    row = b"\x00" + b"\xff" * ((side + 7) // 8)
    compressor = zlib.compressobj(9)
    data = b"".join(compressor.compress(row) for _ in range(side)) + compressor.flush()

    def chunk(kind: bytes, payload: bytes) -> bytes:
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")


def _tiff_claiming(width: int, height: int) -> bytes:
    """A TIFF header announcing a huge bilevel page, with a few bytes of data behind it."""
    entries = [
        (256, 4, 1, width),
        (257, 4, 1, height),
        (258, 3, 1, 1),
        (259, 3, 1, 1),
        (262, 3, 1, 0),
        (273, 4, 1, 8 + 2 + 12 * 9 + 4),
        (277, 3, 1, 1),
        (278, 4, 1, height),
        (279, 4, 1, 16),
    ]
    ifd = struct.pack("<H", len(entries))
    for tag, kind, count, value in entries:
        packed = struct.pack("<HH", value, 0) if kind == 3 else struct.pack("<I", value)
        ifd += struct.pack("<HHI", tag, kind, count) + packed
    return b"II*\x00" + struct.pack("<I", 8) + ifd + struct.pack("<I", 0) + b"\x00" * 16


def _pdf_with_image(width: int, height: int) -> bytes:
    """A one-page PDF without text whose only content is an image of width×height pixels, stored
    as a tiny Flate stream."""
    data = zlib.compress(b"\x00" * 1024)
    drawing = b"q 595 0 0 842 0 0 cm /Im0 Do Q"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /XObject << /Im0 4 0 R >> >> "
        b"/Contents 5 0 R >>",
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 1 "
        b"/Filter /FlateDecode /Length %d >>\nstream\n" % (width, height, len(data)) + data + b"\nendstream",
        b"<< /Length %d >>\nstream\n" % len(drawing) + drawing + b"\nendstream",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def _assert_invalid(content: bytes, *words: str) -> None:
    with pytest.raises(JobError) as raised:
        read_pages(content)
    assert raised.value.failure_class == FailureClass.INVALID_FILE
    for word in words:
        assert word in raised.value.message


def test_broken_pdf():
    _assert_invalid(b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n", "broken PDF")


def test_truncated_pdf():
    content = _text_pdf()
    _assert_invalid(content[: len(content) // 2], "broken PDF")


def test_not_a_document():
    _assert_invalid(b"<html><body>Service unavailable</body></html>", "neither a PDF")


def test_decompression_bomb_png():
    bomb = _png_bomb(30_000)  # 900 M pixels in about 100 KiB
    assert len(bomb) < 1_000_000
    _assert_invalid(bomb, "decompression bomb")


def test_image_just_above_the_page_limit_is_refused_before_decoding():
    side = int(MAX_PAGE_PIXELS**0.5) + 100  # above our limit, below PIL's own error threshold
    _assert_invalid(_png_bomb(side), "pixels")


def test_huge_tiff_page():
    _assert_invalid(_tiff_claiming(200_000, 200_000), "decompression bomb")


def test_pdf_embedding_a_huge_image():
    _assert_invalid(_pdf_with_image(60_000, 60_000), "60000×60000")


def test_pdf_declaring_a_huge_image_it_never_draws():
    content = _pdf_with_image(60_000, 60_000).replace(b"/Im0 Do", b"/Im9 Do")
    _assert_invalid(content, "60000×60000")


def test_too_many_pages():
    pages = [Image.new("1", (20, 20), 1) for _ in range(MAX_PAGES + 1)]
    buffer = io.BytesIO()
    pages[0].save(buffer, "TIFF", save_all=True, append_images=pages[1:])
    _assert_invalid(buffer.getvalue(), "pages")


def test_truncated_tiff():
    scan = generate_list(5, company_name="Muster GmbH", capital=Decimal("25000"), layout="per_share", form="tiff")
    _assert_invalid(scan.content[: len(scan.content) // 3])


def test_cli_prints_the_list_as_json(tmp_path):
    path = tmp_path / "liste.pdf"
    path.write_bytes(_text_pdf())

    result = CliRunner().invoke(main, ["shareholders", "parse", str(path), "--capital", "25.000,00"])

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert {"shareholders", "total_nominal", "currency", "method", "validation"} <= set(document)
    assert document["method"] == "rules" and document["currency"] == "EUR"
    assert document["total_nominal"] == "25000.00"
    for holder in document["shareholders"]:
        assert holder["kind"] in ("person", "organisation") and holder["name"]
        Decimal(holder["nominal_total"])
        Decimal(holder["percentage"])
    assert document["validation"]["valid"] is True


@pytest.mark.parametrize(
    "content",
    [b"%PDF-1.4\ngarbage", _png_bomb(30_000), b"\x00" * 100],
    ids=["broken-pdf", "bomb", "zeros"],
)
def test_cli_refuses_a_bad_file_in_one_line(tmp_path, content):
    path = tmp_path / "liste.pdf"
    path.write_bytes(content)

    result = CliRunner().invoke(main, ["shareholders", "parse", str(path)])

    assert result.exit_code != 0
    message = result.stderr.strip()
    assert "invalid_file" in message and "\n" not in message
    assert result.stdout == ""


def test_cli_names_a_missing_tesseract(tmp_path, monkeypatch):
    import pytesseract

    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    path = tmp_path / "liste.tif"
    path.write_bytes(generate_list(5, company_name="M GmbH", capital=Decimal("25000"), form="tiff").content)

    result = CliRunner().invoke(main, ["shareholders", "parse", str(path)])

    assert result.exit_code != 0
    assert "dependency_unavailable" in result.stderr
