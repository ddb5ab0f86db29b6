"""Shareholder list throughput: pages per second with a text layer and by OCR.

    .venv/bin/python -m bench.shareholders [--text-lists N] [--ocr-lists M]

Lists come from the generator (all layouts in turn) and are made before the clock starts. Text
lists are parsed by the rules from their PDF text layer; OCR lists are scans (image PDFs and
TIFFs in turn, some turned) read by Tesseract with orientation detection, pages in parallel as
in production. Times are wall-clock: OCR runs in Tesseract processes. Besides speed, the share
of OCR lists read exactly as generated is reported. The last line printed is one JSON object:
``text_pages_per_s``, ``ocr_pages_per_s``, ``text_pages``, ``ocr_pages``, ``ocr_lists_exact``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from decimal import Decimal

from orchestration.shareholders.parse import parse_shareholder_list
from orchestration.shareholders.samples import LAYOUTS, GeneratedList, generate_list

CAPITAL = Decimal("25000")
SCAN_FORMS = ("scan_pdf", "tiff")


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _lists(count: int, forms: tuple[str, ...], first_seed: int) -> list[GeneratedList]:
    return [
        generate_list(first_seed + i, company_name=f"Bench {i} GmbH", capital=CAPITAL,
                      layout=LAYOUTS[i % len(LAYOUTS)], form=forms[i % len(forms)])
        for i in range(count)
    ]


def _run(lists: list[GeneratedList]) -> tuple[float, int, int]:
    """Seconds to parse all lists, their pages, and how many came out exactly as generated."""
    exact = 0
    start = time.perf_counter()
    for generated in lists:
        result = parse_shareholder_list(generated.content, capital=CAPITAL, method="rules")
        exact += result.model_dump(exclude={"method", "validation"}) == generated.expected.model_dump(
            exclude={"method", "validation"}
        )
    return time.perf_counter() - start, sum(generated.pages for generated in lists), exact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text-lists", type=int, default=100)
    parser.add_argument("--ocr-lists", type=int, default=6)
    args = parser.parse_args()

    text_lists = _lists(args.text_lists, ("text_pdf",), first_seed=1000)
    ocr_lists = _lists(args.ocr_lists, SCAN_FORMS, first_seed=2000)

    text_seconds, text_pages, text_exact = _run(text_lists)
    _log(f"text layer: {text_pages} pages of {len(text_lists)} lists in {text_seconds:.2f} s, "
         f"{text_exact} read exactly")
    ocr_seconds, ocr_pages, ocr_exact = _run(ocr_lists)
    _log(f"OCR: {ocr_pages} pages of {len(ocr_lists)} lists in {ocr_seconds:.1f} s on {os.cpu_count()} cores, "
         f"{ocr_exact} read exactly")
    print(json.dumps({
        "text_pages_per_s": round(text_pages / text_seconds, 1),
        "ocr_pages_per_s": round(ocr_pages / ocr_seconds, 3),
        "text_pages": text_pages,
        "ocr_pages": ocr_pages,
        "ocr_lists_exact": round(ocr_exact / len(ocr_lists), 2) if ocr_lists else None,
    }))


if __name__ == "__main__":
    main()
