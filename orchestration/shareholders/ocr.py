"""Tesseract OCR of one scanned page: orientation first (OSD), then its words with boxes and confidences."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from itertools import accumulate, pairwise
from typing import TypeVar

import cv2
import numpy as np
import pytesseract
from PIL import Image, ImageFilter, ImageOps

from orchestration.runtime.failures import FailureClass, JobError
from orchestration.shareholders.page_layout import Page, Rule, Word
from orchestration.shareholders.ruling import BINARY_THRESHOLD, find_rules

# Tesseract's OpenMP threads spin and contend on a busy machine; one thread per process is faster
# there, and pages are read in parallel processes instead (reading.py).
os.environ.setdefault("OMP_THREAD_LIMIT", "1")

LANGUAGE = "deu"
# psm 6 reads the page as one block, so a table row stays one line instead of one block per column.
TEXT_CONFIG = "--psm 6"
# A number read once more on its own, with a margin of white around it, as it is and then
# enlarged until its reading is sure. Cut tight, a lone digit reads as anything; enlarged, a
# section number keeps its dot, while a bilevel scan's 5 may turn into a 9: the surest reading stays.
REREAD_SCALES = (1, 2)
REREAD_SURE = 95.0
REREAD_MARGIN = 20
REREAD_BELOW = 60.0  # a short word without digits: maybe a lone digit read as a sign or a letter
REREAD_NUMBERS_BELOW = 90.0
MAX_REREADS = 20  # per page, the least certain first
PAGE_TIMEOUT_S = 120
# Tesseract reads best at about 300 dpi: the short side of an A4 page is 2480 pixels then.
TARGET_SHORT_SIDE = 2480
MAX_UPSCALE = 2.0
DENOISE_RADIUS = 1.0
# Orientation needs far less detail than reading, and OSD time grows with the pixels: ~110 dpi.
OSD_SHORT_SIDE = 900
OSD_MIN_CONFIDENCE = 1.0
# Scans are skewed by up to a degree or two; the angle is found on a copy this wide.
SKEW_RANGE = 2.0
SKEW_STEPS = 10
SKEW_WIDTH = 1000
# A page whose words Tesseract reads with a median confidence below this may be upside down.
MIN_LEGIBILITY = 60.0
MIN_WORDS_TO_TURN = 20  # a page with fewer (a stamp, a signature) is not worth turning
# A column strip is read on its own when its rules run over this share of the page's height.
MIN_STRIP_SHARE = 0.05
# A table ruled only across: rules over this share of the page's width bound it, and its columns
# are apart by white wider than this share of the width (a word space is under 1 %).
MIN_TABLE_RULE_SHARE = 0.5
MIN_COLUMN_GAP_SHARE = 0.02
MIN_TABLE_COLUMNS = 3
MIN_INK_PER_COLUMN = 8
SPECK_SIZE = 3


_Read = TypeVar("_Read")  # what a pytesseract function returns: text, or a dict of its fields


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


def read_scan(image: Image.Image, *, number: int, max_pixels: int) -> Page:
    """A scanned page turned upright, its rules found and removed, and its words read with their
    boxes and confidences; upscaling never exceeds ``max_pixels``."""
    image = _upscale(image.convert("L"), max_pixels)
    rotation = detect_rotation(image)
    page = _read_upright(image, rotation, number)
    if _legibility(page.words) >= MIN_LEGIBILITY or len(page.words) < MIN_WORDS_TO_TURN:
        return page
    # OSD confuses a page with its upside-down self now and then, and finds too little text on
    # some: a page with words that read poorly is tried every way round, on a reduced copy,
    # and read in full the way it reads best.
    reduced = image.resize((image.width // 3, image.height // 3), Image.Resampling.BILINEAR)
    tries = {turn: _legibility(_words(reduced.rotate(-turn, expand=True, fillcolor=255))) for turn in (0, 90, 180, 270)}
    best = max(tries, key=tries.__getitem__)
    return _read_upright(image, best, number) if best != rotation else page


def _read_upright(image: Image.Image, rotation: int, number: int) -> Page:
    if rotation:
        # Tesseract reports clockwise degrees; PIL rotates counter-clockwise.
        image = image.rotate(-rotation, expand=True, fillcolor=255)
    skew = detect_skew(image)
    if skew:
        image = image.rotate(skew, resample=Image.Resampling.BILINEAR, expand=False, fillcolor=255)
    rules, cleaned = find_rules(np.asarray(image))
    # Scanner noise, JPEG artefacts and fax-style bilevel edges break thin commas and dots apart;
    # a slight blur at ~300 dpi lets Tesseract's own binarisation see them whole again.
    readable = Image.fromarray(cleaned).filter(ImageFilter.GaussianBlur(DENOISE_RADIUS))
    words = _words(readable)
    # In a ruled table each column is read on its own as well: read as one block, a column's
    # lines would be paired with its neighbours' lines, whose baselines differ in multi-line cells.
    ruled = _column_strips(rules, image.width, image.height)
    for x0, y0, x1, y1 in ruled:
        strip = _words(readable.crop((x0, y0, x1, y1)), offset=(x0, y0))
        words = [w for w in words if not _within(w, (x0, y0, x1, y1))] + strip
    # A table ruled only across: its columns read on their own too, where they read more surely.
    # Read in one block, a lone number beside wide white space comes out as a sign or a letter;
    # read alone, a narrow column loses a dot now and then.
    for x0, y0, x1, y1 in [] if ruled else _white_gap_strips(cleaned, rules):
        words = _surer_lines(words, _words(readable.crop((x0, y0, x1, y1)), offset=(x0, y0)), (x0, y0, x1, y1))
    words = _reread_uncertain(readable, words)
    return Page(
        number=number,
        width=image.width,
        height=image.height,
        words=words,
        rules=rules,
        source="ocr",
        rotation=rotation,
    )


def _reread_uncertain(image: Image.Image, words: list[Word]) -> list[Word]:
    """Numbers Tesseract was unsure of, read once more each on its own (REREAD_SCALES): read alone, a
    number loses the neighbours that misled the page's reading ("=" for 3, "u" for 4, "24" for
    2.1). The surest reading stays."""
    uncertain = sorted(
        (
            w
            for w in words
            if (any(c.isdigit() for c in w.text) and w.confidence < REREAD_NUMBERS_BELOW)
            or (len(w.text) <= 2 and w.confidence < REREAD_BELOW)
        ),
        key=lambda w: w.confidence,
    )[:MAX_REREADS]
    best = {id(word): word for word in uncertain}
    for scale in REREAD_SCALES:
        unsure = [word for word in uncertain if best[id(word)].confidence < REREAD_SURE]
        if not unsure:
            break
        for word, read in zip(unsure, _read_alone(image, unsure, scale), strict=True):
            if read and min(w.confidence for w in read) > best[id(word)].confidence:
                text = " ".join(w.text for w in sorted(read, key=lambda w: w.x0))
                best[id(word)] = Word(text, word.x0, word.y0, word.x1, word.y1, min(w.confidence for w in read))
    return [best.get(id(word), word) for word in words]


def _read_alone(image: Image.Image, words: list[Word], scale: int) -> list[list[Word]]:
    """What stands in each word's box, read on its own with a margin of white, ``scale`` times
    enlarged: the boxes go one under another on one sheet, so that one Tesseract run reads them all
    (each run costs a fraction of a second to start)."""
    frames = []
    for word in words:
        pad = word.height * 0.4
        box = (
            max(int(word.x0 - pad), 0),
            max(int(word.y0 - pad), 0),
            min(int(word.x1 + pad), image.width),
            min(int(word.y1 + pad), image.height),
        )
        framed = ImageOps.expand(image.crop(box), REREAD_MARGIN, fill=255)
        frames.append((box, framed.resize((framed.width * scale, framed.height * scale), Image.Resampling.LANCZOS)))
    sheet = Image.new("L", (max(f.width for _, f in frames), sum(f.height for _, f in frames)), 255)
    tops = list(accumulate((f.height for _, f in frames[:-1]), initial=0))
    for (_, framed), top in zip(frames, tops, strict=True):
        sheet.paste(framed, (0, top))
    read = _words(sheet)
    results = []
    for word, (box, framed), top in zip(words, frames, tops, strict=True):
        left, upper = box[0] - REREAD_MARGIN, box[1] - REREAD_MARGIN
        placed = [
            Word(
                w.text,
                left + w.x0 / scale,
                upper + (w.y0 - top) / scale,
                left + w.x1 / scale,
                upper + (w.y1 - top) / scale,
                w.confidence,
            )
            for w in read
            if top <= w.center_y < top + framed.height
        ]
        # The margin may take in a neighbour's edge: only what stands where the word stood counts.
        results.append(
            [w for w in placed if word.x0 <= (w.x0 + w.x1) / 2 <= word.x1 and word.y0 <= w.center_y <= word.y1]
        )
    return results


def _surer_lines(words: list[Word], strip: list[Word], box: tuple[int, int, int, int]) -> list[Word]:
    """``words`` with each line of a strip's own reading put in place of the words the page's
    reading has on that line of the strip, where it reads more surely (its least sure word is
    surer than theirs) or the page's reading has none there. Lines are compared whole: the two
    readings may cut the same text into words differently ("1,62 %" as one word or two)."""
    inside = [w for w in words if _within(w, box)]
    result = [w for w in words if w not in inside]
    for line in _lines(strip):
        top, bottom = min(w.y0 for w in line), max(w.y1 for w in line)
        same = [w for w in inside if top <= w.center_y <= bottom]
        if not same or min(w.confidence for w in line) > min(w.confidence for w in same):
            inside = [w for w in inside if w not in same]
            result += line
    return result + inside


def _within(word: Word, box: tuple[int, int, int, int]) -> bool:
    """Whether a word's centre lies in a strip of the page."""
    x0, y0, x1, y1 = box
    return x0 <= (word.x0 + word.x1) / 2 < x1 and y0 <= word.center_y < y1


def _lines(words: list[Word]) -> list[list[Word]]:
    """Words grouped into lines: each joins the line whose vertical span holds its centre."""
    lines: list[list[Word]] = []
    for word in sorted(words, key=lambda w: w.center_y):
        if lines and lines[-1][-1].y0 <= word.center_y <= max(w.y1 for w in lines[-1]):
            lines[-1].append(word)
        else:
            lines.append([word])
    return lines


def _legibility(words: list[Word]) -> float:
    """The median confidence of words of three letters or more; 0 without any."""
    confidences = sorted(w.confidence for w in words if sum(c.isalpha() for c in w.text) >= 3)
    return confidences[len(confidences) // 2] if confidences else 0.0


def _words(image: Image.Image, offset: tuple[float, float] = (0, 0)) -> list[Word]:
    try:
        data = _tesseract(
            pytesseract.image_to_data, image, lang=LANGUAGE, config=TEXT_CONFIG, output_type=pytesseract.Output.DICT
        )
    except pytesseract.TesseractError as error:
        raise JobError(
            FailureClass.INVALID_FILE, f"Tesseract cannot read a page: {error}", source="shareholders"
        ) from error
    dx, dy = offset
    return [
        Word(
            text=text.strip(),
            x0=left + dx,
            y0=top + dy,
            x1=left + width + dx,
            y1=top + height + dy,
            confidence=float(conf),
        )
        for text, left, top, width, height, conf in zip(
            data["text"], data["left"], data["top"], data["width"], data["height"], data["conf"], strict=True
        )
        if text.strip() and float(conf) >= 0
    ]


def _column_strips(rules: list[Rule], width: int, height: int) -> list[tuple[int, int, int, int]]:
    """The areas between neighbouring vertical rules that run side by side over a good part of the
    page: the columns of a ruled table."""
    verticals = sorted(
        (r for r in rules if not r.horizontal and r.y1 - r.y0 >= height * MIN_STRIP_SHARE), key=lambda r: r.x0
    )
    strips = []
    for left, right in pairwise(verticals):
        top, bottom = max(left.y0, right.y0), min(left.y1, right.y1)
        if right.x0 - left.x0 >= width * 0.02 and bottom - top >= height * MIN_STRIP_SHARE:
            strips.append((int(left.x0) + 2, int(top), int(right.x0) - 2, int(bottom)))
    return strips


def _white_gap_strips(cleaned: np.ndarray, rules: list[Rule]) -> list[tuple[int, int, int, int]]:
    """The columns of a table ruled only across (or typed without rules): between its first and
    last full-width rule, the runs of ink separated by white gaps wider than any word space."""
    height, width = cleaned.shape
    across = sorted(r.y0 for r in rules if r.horizontal and r.x1 - r.x0 >= width * MIN_TABLE_RULE_SHARE)
    if len(across) < 2 or across[-1] - across[0] < height * MIN_STRIP_SHARE:
        return []
    top, bottom = int(across[0]), int(across[-1])
    ink = (cleaned[top:bottom] < BINARY_THRESHOLD).astype(np.uint8)
    # Specks of scanner noise are a pixel or two: an opening removes them, a letter's strokes stay.
    despeckled = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((SPECK_SIZE, SPECK_SIZE), np.uint8))
    inked = np.flatnonzero(despeckled.sum(axis=0) >= MIN_INK_PER_COLUMN)
    if not inked.size:
        return []
    gap = width * MIN_COLUMN_GAP_SHARE
    breaks = np.flatnonzero(np.diff(inked) > gap)
    starts = np.concatenate(([inked[0]], inked[breaks + 1]))
    ends = np.concatenate((inked[breaks], [inked[-1]]))
    if len(starts) < MIN_TABLE_COLUMNS:
        return []
    margin = int(gap / 2)
    return [(max(int(x0) - margin, 0), top, min(int(x1) + margin, width), bottom) for x0, x1 in zip(starts, ends)]


def _upscale(image: Image.Image, max_pixels: int) -> Image.Image:
    """Low-resolution scans (200 dpi is common) enlarged towards 300 dpi, where Tesseract errs least."""
    width, height = image.size
    scale = min(TARGET_SHORT_SIDE / min(width, height), MAX_UPSCALE, (max_pixels / (width * height)) ** 0.5)
    if scale < 1.1:
        return image
    return image.resize((round(width * scale), round(height * scale)), Image.Resampling.LANCZOS)


def detect_skew(image: Image.Image) -> float:
    """Counter-clockwise degrees (within ±SKEW_RANGE) that straighten the page's lines: the angle
    at which the rows of ink are sharpest (the projection profile's variance is highest)."""
    scale = SKEW_WIDTH / image.width
    small = image.resize((SKEW_WIDTH, max(round(image.height * scale), 1)), Image.Resampling.BILINEAR)
    ink = Image.eval(small, lambda value: 255 - value)
    best, best_score = 0.0, -1.0
    for step in range(-SKEW_STEPS, SKEW_STEPS + 1):
        angle = step * SKEW_RANGE / SKEW_STEPS
        profile = np.asarray(ink.rotate(angle, resample=Image.Resampling.BILINEAR), dtype=np.float64).sum(axis=1)
        score = float(np.var(np.diff(profile)))
        if score > best_score:
            best, best_score = angle, score
    return best if abs(best) >= SKEW_RANGE / SKEW_STEPS / 2 else 0.0


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


def _tesseract(function: Callable[..., _Read], image: Image.Image, **kwargs) -> _Read:
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
