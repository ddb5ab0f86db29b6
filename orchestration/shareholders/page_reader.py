"""From the bytes of a shareholder list to its pages: words with boxes, and ruling lines, upright.

A PDF page's text layer is used when it holds real text (pdfplumber's words and lines); other PDF
pages are rendered and read by OCR, as are TIFF, PNG and JPEG scans. A text layer that reads poorly
(a scanner's own OCR) can be replaced by our OCR of the rendered pages (``read_by_ocr``). Every file
is untrusted: sizes are checked before any image is decoded, and anything the libraries cannot read
is an ``invalid_file``.
"""

from __future__ import annotations

import io
import math
import os
import re
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pdfplumber
import pypdfium2
from pdfminer.pdftypes import resolve1
from PIL import Image

from orchestration.runtime.failures import FailureClass, JobError
from orchestration.shareholders.ocr import read_scan, require_tesseract
from orchestration.shareholders.page_layout import Page, Rule, Word

MAX_FILE_BYTES = 50 * 1024 * 1024
MAX_PAGES = 50
# A4 at 300 dpi is 8.7 M pixels; 40 M leaves room for A3 at 400 dpi and stops bombs early.
MAX_PAGE_PIXELS = 40_000_000
MAX_PAGE_POINTS = 14_400  # the PDF limit for a page side: 200 inches
OCR_DPI = 300
MIN_TEXT_CHARS = 20
MAX_FORM_DEPTH = 8  # nested form XObjects searched for images
IMAGE_FORMATS = {"TIFF", "PNG", "JPEG"}

# PIL's own bomb check (a warning above the limit, an error above twice the limit) never allows
# more than our explicit page limit.
Image.MAX_IMAGE_PIXELS = min(Image.MAX_IMAGE_PIXELS or MAX_PAGE_PIXELS, MAX_PAGE_PIXELS)


def read_pages(content: bytes) -> list[Page]:
    """Every page of a list; raises JobError (invalid_file, dependency_unavailable, timeout)."""
    if len(content) > MAX_FILE_BYTES:
        raise _invalid(f"file of {len(content)} bytes exceeds the limit of {MAX_FILE_BYTES}")
    if b"%PDF-" in content[:1024]:
        return _read_pdf(content)
    return _read_image(content)


def _invalid(message: str) -> JobError:
    return JobError(FailureClass.INVALID_FILE, message, source="shareholders")


def _usable_text(text: str) -> bool:
    """A text layer with words in it, not a scan's empty layer or glyph ids without a character map."""
    readable = re.sub(r"\(cid:\d+\)", "", text)
    return sum(ch.isalnum() for ch in readable) >= MIN_TEXT_CHARS and len(readable) > len(text) / 2


@contextmanager
def _broken_pdf_is_invalid() -> Iterator[None]:
    """pdfminer raises a zoo of exception types on broken or hostile files; all mean the same here."""
    try:
        yield
    except JobError:
        raise
    except Exception as error:
        raise _invalid(f"broken PDF: {type(error).__name__}: {error}") from error


def _read_pdf(content: bytes) -> list[Page]:
    pages: dict[int, Page] = {}
    to_render: list[int] = []
    with _broken_pdf_is_invalid(), pdfplumber.open(io.BytesIO(content)) as pdf:
        if not pdf.pages:
            raise _invalid("the PDF has no pages")
        if len(pdf.pages) > MAX_PAGES:
            raise _invalid(f"the PDF has {len(pdf.pages)} pages, more than the limit of {MAX_PAGES}")
        for index, page in enumerate(pdf.pages):
            if max(page.width, page.height) > MAX_PAGE_POINTS:
                raise _invalid(f"page {index + 1} measures {page.width:.0f}×{page.height:.0f} pt")
            text = page.extract_text() or ""
            if _usable_text(text):
                pages[index] = _text_layer_page(page, index)
            else:
                _check_images(page, index)
                to_render.append(index)
    if to_render:
        require_tesseract()
        pages.update(_ocr(_render(content, to_render)))
    return [pages[index] for index in sorted(pages)]


def read_by_ocr(content: bytes, pages: list[Page]) -> list[Page]:
    """The pages of a PDF as ``read_pages`` gave them, those it read from the text layer now read
    by OCR of their rendered image; for a text layer that reads poorly, as a scanner's own OCR may."""
    to_render = [page.number - 1 for page in pages if page.source == "text_layer"]
    if not to_render:
        return pages
    with _broken_pdf_is_invalid(), pdfplumber.open(io.BytesIO(content)) as pdf:
        for index in to_render:
            _check_images(pdf.pages[index], index)
    require_tesseract()
    read = _ocr(_render(content, to_render))
    return [read.get(page.number - 1, page) for page in pages]


def _text_layer_page(page, index: int) -> Page:
    """A page's words and rules from its text layer, in points, upright as the PDF shows it."""
    words = [
        Word(text=w["text"], x0=w["x0"], y0=w["top"], x1=w["x1"], y1=w["bottom"], confidence=100.0)
        for w in page.extract_words(keep_blank_chars=False, use_text_flow=False)
    ]
    rules = [
        Rule(x0=edge["x0"], y0=edge["top"], x1=edge["x1"], y1=edge["bottom"])
        for edge in page.edges
        if max(edge["x1"] - edge["x0"], edge["bottom"] - edge["top"]) >= 0.03 * page.width
    ]
    return Page(number=index + 1, width=page.width, height=page.height, words=words, rules=rules, source="text_layer")


def _ocr(images: Iterable[tuple[int, Image.Image]]) -> dict[int, Page]:
    """OCR of page images, as many at a time as there are cores; pages are produced (rendered or
    decoded) only a batch ahead, so a long document never holds all its page images at once."""
    workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    pages: dict[int, Page] = {}
    pending = iter(images)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        while batch := [item for _, item in zip(range(workers), pending)]:
            futures = [
                (index, pool.submit(read_scan, image, number=index + 1, max_pixels=MAX_PAGE_PIXELS))
                for index, image in batch
            ]
            for index, future in futures:
                pages[index] = future.result()
    return pages


def _check_images(page, index: int) -> None:
    """Refuse images that would decode to more pixels than a page may have: those the page's
    resources declare (drawn or not, the renderer may decode them) and inline ones."""
    sizes = [tuple(image["srcsize"]) for image in page.images]
    sizes += _declared_image_sizes(resolve1(page.page_obj.resources), depth=0)
    for width, height in sizes:
        if int(width) * int(height) > MAX_PAGE_PIXELS:
            raise _invalid(f"page {index + 1} embeds an image of {int(width)}×{int(height)} pixels")


def _declared_image_sizes(resources, depth: int) -> list[tuple[int, int]]:
    """Width and height of every image XObject in a resource dictionary and its forms' resources."""
    if not isinstance(resources, dict) or depth > MAX_FORM_DEPTH:
        return []
    sizes = []
    for reference in (resolve1(resources.get("XObject")) or {}).values():
        attributes = getattr(resolve1(reference), "attrs", {})
        subtype = getattr(resolve1(attributes.get("Subtype")), "name", None)
        if subtype == "Image":
            sizes.append((resolve1(attributes.get("Width")) or 0, resolve1(attributes.get("Height")) or 0))
        elif subtype == "Form":
            sizes += _declared_image_sizes(resolve1(attributes.get("Resources")), depth + 1)
    return sizes


def _render(content: bytes, indexes: list[int]) -> Iterator[tuple[int, Image.Image]]:
    """Page images for OCR at OCR_DPI, scaled down where a page would exceed MAX_PAGE_PIXELS."""
    try:
        document = pypdfium2.PdfDocument(content)
    except pypdfium2.PdfiumError as error:
        raise _invalid(f"broken PDF: {error}") from error
    try:
        for index in indexes:
            try:
                page = document[index]
                width, height = page.get_size()
                scale = min(OCR_DPI / 72, math.sqrt(MAX_PAGE_PIXELS / max(width * height, 1)))
                image = page.render(scale=scale, grayscale=True).to_pil()
            except pypdfium2.PdfiumError as error:
                raise _invalid(f"page {index + 1} cannot be rendered: {error}") from error
            yield index, image
    finally:
        document.close()


def _read_image(content: bytes) -> list[Page]:
    try:
        image = Image.open(io.BytesIO(content))
    except Image.DecompressionBombError as error:
        raise _invalid(f"decompression bomb: {error}") from error
    except Exception as error:
        raise _invalid("neither a PDF nor a readable TIFF, PNG or JPEG image") from error
    if image.format not in IMAGE_FORMATS:
        raise _invalid(f"unsupported image format {image.format}")
    frames = getattr(image, "n_frames", 1)
    if frames > MAX_PAGES:
        raise _invalid(f"the image has {frames} pages, more than the limit of {MAX_PAGES}")
    require_tesseract()
    pages = _ocr(_frames(image, frames))
    return [pages[index] for index in sorted(pages)]


def _frames(image: Image.Image, count: int) -> Iterator[tuple[int, Image.Image]]:
    """Decoded pages of a (multi-page) image, each checked for its size before it is decoded."""
    for index in range(count):
        try:
            image.seek(index)
        except Exception as error:
            raise _invalid(f"page {index + 1} cannot be read: {error}") from error
        width, height = image.size
        if width * height > MAX_PAGE_PIXELS:
            raise _invalid(f"page {index + 1} has {width}×{height} pixels, more than {MAX_PAGE_PIXELS}")
        try:
            frame = image.copy()
        except Exception as error:
            raise _invalid(f"page {index + 1} is corrupt: {type(error).__name__}: {error}") from error
        yield index, frame
