"""Shareholder lists: the real lists read right, generated scans read right, and pages per second
with a text layer and by OCR.

    .venv/bin/python -m bench.shareholders [--samples DIR] [--generated N] [--text-lists N]

``--samples`` (default ``../shared/samples/gesellschafterliste``) is a folder of lists. A list
with values read from it by eye (``tests/data/real_shareholder_lists``, by file name) is judged
against them: right when every shareholder's kind, percentage (within 0.1 points), nominal total,
share count and running numbers match, an organisation's firm, seat and register (court or
authority, type, number) match, and its total matches; it is parsed with the capital
of its SI document, as the pipeline does. A list without such values (lists held back) is read
and its status and timing printed. ``--generated`` scans are drawn over every layout (several
share ranges per holder and foreign companies among them), rendered and degraded as scans (image
PDF or bilevel TIFF, some turned), and judged against their truth: right when every
shareholder's kind, nominal total, percentage, shares (numbers, amounts, row percentages),
birth date, seat, register (court, type, number) and country, and a firm's name match, and the
total matches.
``kind_check_failures`` counts the lists the kind check sent to review. Text-layer throughput
is measured on generated lists. Times are wall-clock (OCR
runs in Tesseract processes, pages in parallel on the cores the process may use, as in
production); ``taskset -c 0`` gives the figures for one core. The last line printed is one JSON
object.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import time
from decimal import Decimal
from pathlib import Path

import pypdfium2
from PIL import Image

from orchestration.runtime.failures import JobError
from orchestration.shareholders.parse import parse_shareholder_list
from orchestration.shareholders.shareholder_list import ShareholderList
from sample_register.expected_shareholders import firm_key, list_problems, load_expected, shareholder_problems
from sample_register.shareholder_lists import LAYOUTS, generate_list

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = ROOT / "tests" / "data" / "real_shareholder_lists"
SAMPLES = ROOT.parent / "shared" / "samples" / "gesellschafterliste"
CAPITAL = Decimal("25000")
LIST_SUFFIXES = {".pdf", ".tif", ".tiff", ".png", ".jpg", ".jpeg"}
SCAN_FORMS = ("scan_pdf", "tiff")
# What a generated list must read exactly; a person's name may pick up a speck and is not judged.
EXACT_FIELDS = {
    "kind",
    "birth_date",
    "seat",
    "register_court",
    "register_type",
    "register_number",
    "register_country",
    "nominal_total",
    "percentage",
}


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _kind_check_failed(result: ShareholderList) -> bool:
    return any(check.name == "kinds_match" for check in result.validation.failed)


def _real_lists(samples: Path, per_page: list[float], kind_failures: list[str]) -> dict:
    lists = right = holders = holders_right = review = verified_wrong = 0
    pages_total, seconds_total = 0, 0.0
    by_file = {load_expected(path)["file"]: load_expected(path) for path in EXPECTED.glob("*.json")}
    for name in sorted(by_file):
        if not (samples / name).is_file():
            continue
        expected = by_file[name]
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
        if _kind_check_failed(result):
            kind_failures.append(name)
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
        "real_ocr_pages_per_s": round(pages_total / seconds_total, 3) if seconds_total else None,
    }


def _held_back_lists(samples: Path, per_page: list[float], kind_failures: list[str]) -> dict:
    """Lists without values read by eye: each one's status and timing."""
    judged = {load_expected(path)["file"] for path in EXPECTED.glob("*.json")}
    paths = [p for p in sorted(samples.iterdir()) if p.suffix.lower() in LIST_SUFFIXES and p.name not in judged]
    counts = {"verified": 0, "needs_review": 0, "failed": 0}
    for path in paths:
        content = path.read_bytes()
        start = time.perf_counter()
        try:
            result = parse_shareholder_list(content, method="rules")
        except JobError as error:
            counts["failed"] += 1
            _log(f"{path.name}: failed, {error} ({time.perf_counter() - start:.1f} s)")
            continue
        seconds = time.perf_counter() - start
        per_page.append(seconds / _page_count(content))
        counts[result.validation.status] += 1
        if _kind_check_failed(result):
            kind_failures.append(path.name)
        failed = ", ".join(check.name for check in result.validation.failed)
        _log(
            f"{path.name}: {result.validation.status}{f' ({failed})' if failed else ''}, "
            f"{len(result.shareholders)} shareholders, {seconds:.1f} s"
        )
    return {
        "held_back_lists": len(paths),
        "held_back_verified": counts["verified"],
        "held_back_needs_review": counts["needs_review"],
        "held_back_failed": counts["failed"],
    }


def _page_count(content: bytes) -> int:
    """Pages of a list file: a PDF's, or an image's frames."""
    if content.startswith(b"%PDF"):
        document = pypdfium2.PdfDocument(content)
        try:
            return len(document)
        finally:
            document.close()
    with Image.open(io.BytesIO(content)) as image:
        return getattr(image, "n_frames", 1)


def _generated_problems(result: ShareholderList, truth: ShareholderList) -> list[str]:
    problems = []
    if len(result.shareholders) != len(truth.shareholders):
        problems.append(f"{len(result.shareholders)} shareholders, expected {len(truth.shareholders)}")
    for index, (got, want) in enumerate(zip(result.shareholders, truth.shareholders), 1):
        wrong = [f for f in sorted(EXACT_FIELDS) if getattr(got, f) != getattr(want, f)]
        if [s.model_dump() for s in got.shares] != [s.model_dump() for s in want.shares]:
            wrong.append("shares")
        if want.kind == "organisation" and firm_key(got.name) != firm_key(want.name):
            wrong.append("firm")
        if wrong:
            problems.append(f"shareholder {index}: {', '.join(wrong)}")
    if result.total_nominal != truth.total_nominal:
        problems.append(f"total {result.total_nominal}, expected {truth.total_nominal}")
    return problems


def _generated_lists(count: int, per_page: list[float], kind_failures: list[str]) -> dict:
    right = verified_wrong = 0
    for index in range(count):
        layout, form = LAYOUTS[index % len(LAYOUTS)], SCAN_FORMS[(index // len(LAYOUTS)) % len(SCAN_FORMS)]
        generated = generate_list(
            5000 + index, company_name=f"Bench {index} GmbH", capital=CAPITAL, layout=layout, form=form
        )
        start = time.perf_counter()
        try:
            result = parse_shareholder_list(generated.content, capital=CAPITAL, method="rules")
        except JobError as error:
            _log(f"generated {index} ({layout}, {form}): WRONG, {error}")
            continue
        seconds = time.perf_counter() - start
        per_page.append(seconds / generated.pages)
        wrong = _generated_problems(result, generated.expected)
        status = result.validation.status
        if _kind_check_failed(result):
            kind_failures.append(f"generated {index}")
        right += not wrong
        verified_wrong += bool(wrong) and status == "verified"
        _log(
            f"generated {index} ({layout}, {form}, turned {generated.rotation}): {'right' if not wrong else 'WRONG'}, "
            f"{status}, {seconds:.1f} s" + "".join(f"\n    {item}" for item in wrong)
        )
    return {
        "generated_lists": count,
        "generated_lists_right": right,
        "generated_verified_but_wrong": verified_wrong,
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
    parser.add_argument("--samples", type=Path, default=SAMPLES, help="a folder of lists")
    parser.add_argument("--generated", type=int, default=100, help="generated scans to read")
    parser.add_argument("--text-lists", type=int, default=50)
    args = parser.parse_args()
    per_page: list[float] = []
    kind_failures: list[str] = []
    figures = _real_lists(args.samples, per_page, kind_failures)
    figures |= _held_back_lists(args.samples, per_page, kind_failures)
    figures |= _generated_lists(args.generated, per_page, kind_failures)
    figures["kind_check_failures"] = len(kind_failures)
    figures["ocr_s_per_page_p50"] = round(statistics.median(per_page), 2) if per_page else None
    figures["ocr_s_per_page_max"] = round(max(per_page), 2) if per_page else None
    figures["text_pages_per_s"] = _text_pages_per_s(args.text_lists)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
