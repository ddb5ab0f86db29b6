"""Ruling lines of a scanned page, found by morphology: the rules of a table, and the page without them.

A horizontal (vertical) opening with a long, thin kernel keeps only runs of ink longer than any
letter; what survives is a rule. Removing the rules before OCR keeps Tesseract from reading them
as ``|`` or ``_`` and from joining the words of neighbouring cells.
"""

from __future__ import annotations

import cv2
import numpy as np

from orchestration.shareholders.page_layout import Rule

# A rule is at least this share of the page's width (height) long: longer than any word, shorter
# than the narrowest column a table draws a rule around.
MIN_RULE_SHARE = 0.035
# Bilevel rules are broken by noise: gaps this short between pieces of a rule are closed.
GAP_SHARE = 0.004
BINARY_THRESHOLD = 160
# Pale grey rules: darker than paper and its noise (about 240 on a scan), lighter than ink.
LIGHT_THRESHOLD = 215
SAME_RULE_DISTANCE = 6
DOT_GAP = 5
# Shading is where more than this share of a window's pixels (0-255 scale) are isolated specks.
DITHER_WINDOW = 61
DITHER_DENSITY = 40
DITHER_MARGIN = 25
SHADING_BLUR = 2.5
SHADING_THRESHOLD = 115


def find_rules(gray: np.ndarray) -> tuple[list[Rule], np.ndarray]:
    """The page's horizontal and vertical rules, and the page with them painted white."""
    ink = (gray < BINARY_THRESHOLD).astype(np.uint8) * 255
    # Where the page is shaded, only the opened ink counts for rules: the dither's runs of dots
    # are not taken for rules.
    opened = cv2.morphologyEx(ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3)))
    shaded = _shaded(ink, opened)
    ink[shaded] = opened[shaded]
    rules, mask = _rules_in(ink, thin_only=False)
    # Grey rules (a table's row separators are often printed light) are too pale for the ink
    # threshold, yet Tesseract reads them into the letters beneath. Only thin ones count: a pale
    # band is a shaded heading whose words must stay.
    light = (gray < LIGHT_THRESHOLD).astype(np.uint8) * 255
    light[shaded] = 0
    light_rules, light_mask = _rules_in(light, thin_only=True)
    rules += [rule for rule in light_rules if not any(_same_rule(rule, other) for other in rules)]
    mask |= light_mask
    # Paint the rules out with a pixel of margin, where anti-aliasing and noise cling to them.
    mask = cv2.dilate(mask, cv2.getStructuringElement(cv2.MORPH_RECT, (3, 3)))
    cleaned = gray.copy()
    # Shading is read through a blur: its dots fade to a light grey, the solid strokes of the
    # letters stay dark.
    blurred = cv2.GaussianBlur(gray, (0, 0), SHADING_BLUR)
    cleaned[shaded] = np.where(blurred[shaded] < SHADING_THRESHOLD, 0, 255)
    cleaned[mask > 0] = 255
    return rules, cleaned


def _rules_in(ink: np.ndarray, *, thin_only: bool) -> tuple[list[Rule], np.ndarray]:
    """The horizontal and vertical rules in a bilevel ink image, and the mask of what to paint out:
    every long run of ink, or with ``thin_only`` just the runs thin enough to be rules."""
    height, width = ink.shape
    rules: list[Rule] = []
    mask = np.zeros_like(ink)
    for horizontal in (True, False):
        length = max(int((width if horizontal else height) * MIN_RULE_SHARE), 10)
        gap = max(int((width if horizontal else height) * GAP_SHARE), 2)
        close = cv2.getStructuringElement(cv2.MORPH_RECT, (gap, 1) if horizontal else (1, gap))
        opening = cv2.getStructuringElement(cv2.MORPH_RECT, (length, 1) if horizontal else (1, length))
        # Opening first, so the letters of a line are never joined into a rule; then the pieces of
        # a rule broken by noise are joined again.
        source = ink
        if not horizontal:
            # Dotted column rules: their dots are joined first. Only vertically, where the
            # letters of a line never touch those of the next at this distance.
            source = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (1, DOT_GAP)))
        lines = cv2.morphologyEx(cv2.morphologyEx(source, cv2.MORPH_OPEN, opening), cv2.MORPH_CLOSE, close)
        count, labels, stats, _ = cv2.connectedComponentsWithStats(lines, connectivity=8)
        thin = np.zeros(count, dtype=bool)
        for label, (x, y, w, h, _area) in enumerate(stats[1:count], 1):
            if horizontal and w >= length and h <= max(length // 4, 12):
                rules.append(Rule(float(x), float(y + h / 2), float(x + w), float(y + h / 2)))
                thin[label] = True
            elif not horizontal and h >= length and w <= max(length // 4, 12):
                rules.append(Rule(float(x + w / 2), float(y), float(x + w / 2), float(y + h)))
                thin[label] = True
        mask |= np.where(thin[labels], lines, 0).astype(np.uint8) if thin_only else lines
    return rules, mask


def _same_rule(rule: Rule, other: Rule) -> bool:
    """Two findings of one rule: the same direction, a few pixels apart, overlapping."""
    if rule.horizontal != other.horizontal:
        return False
    if rule.horizontal:
        return abs(rule.y0 - other.y0) <= SAME_RULE_DISTANCE and rule.x0 < other.x1 and other.x0 < rule.x1
    return abs(rule.x0 - other.x0) <= SAME_RULE_DISTANCE and rule.y0 < other.y1 and other.y0 < rule.y1


def _shaded(ink: np.ndarray, opened: np.ndarray) -> np.ndarray:
    """Where the page is dithered shading (grey heading bands, fax noise): dense specks that an
    opening removes. Letters elsewhere keep their thin strokes."""
    specks = cv2.subtract(ink, opened)
    density = cv2.blur(specks, (DITHER_WINDOW, DITHER_WINDOW))
    grown = cv2.dilate((density > DITHER_DENSITY).astype(np.uint8), np.ones((DITHER_MARGIN, DITHER_MARGIN), np.uint8))
    return grown > 0
