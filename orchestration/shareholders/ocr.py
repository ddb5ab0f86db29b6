"""Tesseract OCR of one page image: orientation first (OSD), then German text line by line."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import pytesseract
from PIL import Image, ImageFilter

from orchestration.failures import FailureClass, JobError

# Tesseract's OpenMP threads spin and contend on a busy machine; one thread per process is faster
# there, and pages are read in parallel processes instead (reading.py).
os.environ.setdefault("OMP_THREAD_LIMIT", "1")

LANGUAGE = "deu"
# psm 6 reads the page as one block, so a table row stays one line instead of one block per column.
TEXT_CONFIG = "--psm 6"
PAGE_TIMEOUT_S = 120
# Tesseract reads best at about 300 dpi: the short side of an A4 page is 2480 pixels then.
TARGET_SHORT_SIDE = 2480
MAX_UPSCALE = 2.0
DENOISE_RADIUS = 1.0
# Orientation needs far less detail than reading, and OSD time grows with the pixels: ~110 dpi.
OSD_SHORT_SIDE = 900
OSD_MIN_CONFIDENCE = 1.0


@dataclass(frozen=True)
class OcrPage:
    text: str
    rotation: int  # degrees the page was turned clockwise to read it upright


def require_tesseract() -> None:
    """Fail with dependency_unavailable unless Tesseract and its German and OSD data are installed."""
    try:
        languages = set(pytesseract.get_languages())
    except (pytesseract.TesseractNotFoundError, OSError) as error:
        raise JobError(
            FailureClass.DEPENDENCY_UNAVAILABLE,
            "Tesseract is not installed (apt-get install tesseract-ocr tesseract-ocr-deu tesseract-ocr-osd)",
            source="shareholders",
            code="tesseract",
        ) from error
    missing = {LANGUAGE, "osd"} - languages
    if missing:
        raise JobError(
            FailureClass.DEPENDENCY_UNAVAILABLE,
            f"Tesseract lacks the language data {', '.join(sorted(missing))}",
            source="shareholders",
            code="tesseract",
        )


def ocr_page(image: Image.Image, *, max_pixels: int) -> OcrPage:
    """Text of a scanned page, turned upright first; upscaling never exceeds ``max_pixels``."""
    image = image.convert("L")
    rotation = detect_rotation(image)
    if rotation:
        # Tesseract reports clockwise degrees; PIL rotates counter-clockwise.
        image = image.rotate(-rotation, expand=True, fillcolor=255)
    # Scanner noise, JPEG artefacts and fax-style bilevel edges break thin commas and dots apart;
    # a slight blur at ~300 dpi lets Tesseract's own binarisation see them whole again.
    image = _upscale(image, max_pixels).filter(ImageFilter.GaussianBlur(DENOISE_RADIUS))
    try:
        text = _tesseract(pytesseract.image_to_string, image, lang=LANGUAGE, config=TEXT_CONFIG)
    except pytesseract.TesseractError as error:
        raise JobError(
            FailureClass.INVALID_FILE, f"Tesseract cannot read a page: {error}", source="shareholders"
        ) from error
    return OcrPage(text=text, rotation=rotation)


def _upscale(image: Image.Image, max_pixels: int) -> Image.Image:
    """Low-resolution scans (200 dpi is common) enlarged towards 300 dpi, where Tesseract errs least."""
    width, height = image.size
    scale = min(TARGET_SHORT_SIDE / min(width, height), MAX_UPSCALE, (max_pixels / (width * height)) ** 0.5)
    if scale < 1.1:
        return image
    return image.resize((round(width * scale), round(height * scale)), Image.Resampling.LANCZOS)


def detect_rotation(image: Image.Image) -> int:
    """Clockwise degrees (0, 90, 180, 270) that make the page upright; 0 when OSD finds too little text.

    OSD runs on a reduced copy first, and on the full image only when that is inconclusive."""
    scale = OSD_SHORT_SIDE / min(image.size)
    if scale < 1:
        reduced = image.resize((round(image.width * scale), round(image.height * scale)), Image.Resampling.LANCZOS)
        rotation, confidence = _osd(reduced)
        if confidence >= OSD_MIN_CONFIDENCE:
            return rotation
    return _osd(image)[0]


def _osd(image: Image.Image) -> tuple[int, float]:
    try:
        osd = _tesseract(pytesseract.image_to_osd, image, config="--psm 0")
    except pytesseract.TesseractError:
        return 0, 0.0  # too few characters for OSD: read the page as it is
    rotation = re.search(r"Rotate:\s*(\d+)", osd)
    confidence = re.search(r"Orientation confidence:\s*([\d.]+)", osd)
    return (int(rotation.group(1)) % 360 if rotation else 0), (float(confidence.group(1)) if confidence else 0.0)


def _tesseract(function, image: Image.Image, **kwargs) -> str:
    try:
        return function(image, timeout=PAGE_TIMEOUT_S, **kwargs)
    except pytesseract.TesseractNotFoundError as error:
        raise JobError(
            FailureClass.DEPENDENCY_UNAVAILABLE, "Tesseract is not installed", source="shareholders", code="tesseract"
        ) from error
    except RuntimeError as error:
        # pytesseract signals a timeout with a bare RuntimeError; TesseractError is one too.
        if isinstance(error, pytesseract.TesseractError) or "timeout" not in str(error).lower():
            raise
        raise JobError(
            FailureClass.TIMEOUT, f"OCR of a page took longer than {PAGE_TIMEOUT_S} s", source="shareholders"
        ) from error
