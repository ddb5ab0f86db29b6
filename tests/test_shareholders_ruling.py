"""Ruling lines of a scan: found, and painted out before OCR, pale ones too, never a shaded band."""

from __future__ import annotations

import numpy as np

from orchestration.shareholders.ruling import find_rules

PAPER = 240


def _page() -> np.ndarray:
    return np.full((1200, 1700), PAPER, dtype=np.uint8)


def test_a_pale_grey_rule_is_found_and_painted_out():
    page = _page()
    page[600:603, 100:1600] = 185  # a row separator printed in light grey, as scanned

    rules, cleaned = find_rules(page)

    assert [r.horizontal for r in rules] == [True]
    assert 600 <= rules[0].y0 <= 603
    assert cleaned[600:603, 100:1600].min() == 255


def test_a_black_rule_is_found_once():
    page = _page()
    page[300:304, 100:1600] = 20

    rules, _ = find_rules(page)

    assert len(rules) == 1


def test_a_pale_shaded_band_is_no_rule_and_keeps_its_words():
    page = _page()
    page[100:160, 100:1600] = 200  # a heading's grey band
    page[120:140, 200:230] = 10  # a letter on it

    rules, cleaned = find_rules(page)

    assert rules == []
    assert cleaned[120:140, 200:230].max() == 10
