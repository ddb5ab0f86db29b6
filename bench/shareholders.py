"""Shareholder lists: the real lists read right, and pages per second with a text layer and by OCR.

    .venv/bin/python -m bench.shareholders [--text-lists N] [--samples DIR]

The real lists are the scans in ``../shared/samples/gesellschafterliste``, judged against the
values read from them by eye (``tests/data/real_shareholder_lists``): a list is right when every
shareholder's kind, percentage (within 0.1 points), nominal total and share count match, firms'
names match and its total matches. Each is parsed with the capital of its SI document, as the
pipeline does. Text-layer throughput is measured on generated lists. Times are wall-clock (OCR
runs in Tesseract processes, pages in parallel on the cores the process may use, as in
production); ``taskset -c 0`` gives the figures for one core. The last line printed is one JSON
object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

from orchestration.failures import JobError
from orchestration.shareholders.parse import parse_shareholder_list
from sample_register.expected_shareholders import list_problems, load_expected, shareholder_problems
from sample_register.shareholder_lists import LAYOUTS, generate_list

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = ROOT / "tests" / "data" / "real_shareholder_lists"
SAMPLES = ROOT.parent / "shared" / "samples" / "gesellschafterliste"
CAPITAL = Decimal("25000")


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _real_lists(samples: Path) -> dict:
    lists = right = holders = holders_right = review = verified_wrong = 0
    per_page: list[float] = []
    pages_total, seconds_total = 0, 0.0
    for path in sorted(EXPECTED.glob("*.json")):
        expected = load_expected(path)
        capital = expected.get("register_capital_from_si")
        content = (samples / expected["file"]).read_bytes()
        lists += 1
        holders += len(expected["shareholders"])
        start = time.perf_counter()
        try:
            result = parse_shareholder_list(content, capital=Decimal(capital) if capital else None, method="rules")
        except JobError as error:
            seconds = time.perf_counter() - start
            _log(f"{expected['file']}: WRONG, {error} ({seconds:.1f} s)")
            review += 1
            continue
        seconds = time.perf_counter() - start
        pages_total += expected["pages"]
        seconds_total += seconds
        per_page.append(seconds / expected["pages"])
        wrong = list_problems(result, expected)
        holders_right += sum(1 for items in shareholder_problems(result, expected) if not items)
        status = result.validation.status
        review += status == "needs_review"
        verified_wrong += bool(wrong) and status == "verified"
        right += not wrong
        failed = ", ".join(check.name for check in result.validation.failed)
        _log(
            f"{expected['file']}: {'right' if not wrong else 'WRONG'}, {status}"
            f"{f' ({failed})' if failed else ''}, {seconds:.1f} s" + "".join(f"\n    {item}" for item in wrong)
        )
    return {
        "real_lists": lists,
        "real_lists_right": right,
        "real_shareholders": holders,
        "real_shareholders_right": holders_right,
        "needs_review": review,
        "verified_but_wrong": verified_wrong,
        "ocr_s_per_page_p50": round(statistics.median(per_page), 2) if per_page else None,
        "ocr_s_per_page_max": round(max(per_page), 2) if per_page else None,
        "ocr_pages_per_s": round(pages_total / seconds_total, 3) if seconds_total else None,
    }


def _text_pages_per_s(count: int) -> float:
    lists = [
        generate_list(
            1000 + i, company_name=f"Bench {i} GmbH", capital=CAPITAL, layout=LAYOUTS[i % len(LAYOUTS)], form="text_pdf"
        )
        for i in range(count)
    ]
    start = time.perf_counter()
    for generated in lists:
        parse_shareholder_list(generated.content, capital=CAPITAL, method="rules")
    seconds = time.perf_counter() - start
    pages = sum(generated.pages for generated in lists)
    _log(f"text layer: {pages} pages of {len(lists)} generated lists in {seconds:.2f} s")
    return round(pages / seconds, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text-lists", type=int, default=50)
    parser.add_argument("--samples", type=Path, default=SAMPLES)
    args = parser.parse_args()
    figures = _real_lists(args.samples)
    figures["text_pages_per_s"] = _text_pages_per_s(args.text_lists)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
