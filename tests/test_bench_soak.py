"""bench.soak runs: one simulated day on the real stack, and its last line holds the figures the
soak reports (docs/benchmarks.md); the lists its shareholder requests are drawn by are the lists
the sample register serves."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pdfplumber
import pytest

from sample_register.corpus import load_corpus
from sample_register.documents import current_list_form, filings, original_document

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

REPO_ROOT = Path(__file__).resolve().parents[1]
FIGURES = {
    "days",
    "dagster_db_bytes_first_retention_day",
    "dagster_db_bytes_last_day",
    "app_db_bytes_last_day",
    "rss_growth_ratio",
    "max_connections",
    "jobs_lost",
    "failed_by_class",
    "max_retrievals_in_any_hour",
}


def test_a_simulated_day_prints_its_figures_and_the_summary():
    # The benchmark starts its own embedded server, as it does when run by hand.
    env = {key: value for key, value in os.environ.items() if key != "HREG_DATABASE_URL"}
    done = subprocess.run(
        [sys.executable, "-m", "bench.soak", "--days", "1"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1700,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert "day 1: " in done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary.keys() >= FIGURES
    assert summary["days"] == 1
    # The day's searches, opens and shareholder request all ended, and some reached the register.
    assert summary["jobs_lost"] == 0
    assert summary["max_retrievals_in_any_hour"] > 0
    assert summary["dagster_db_bytes_last_day"] > 0 and summary["app_db_bytes_last_day"] > 0


def test_the_form_a_soak_request_is_drawn_by_is_the_form_the_register_serves():
    # bench.soak requests the shareholders of companies whose current list has a text layer.
    companies = [c for c in load_corpus().companies if c.seed is not None and current_list_form(c)][:9]
    served = {}
    for company in companies:
        current = [f for f in filings(company) if f.shareholder_list][-1]
        content, media_type, _extension = original_document(company, current)
        if media_type == "image/tiff":
            served[company.name] = "tiff"
            continue
        with pdfplumber.open(io.BytesIO(content)) as pdf:
            text = "".join(page.extract_text() or "" for page in pdf.pages)
        served[company.name] = "text_pdf" if text.strip() else "scan_pdf"
    assert {company.name: current_list_form(company) for company in companies} == served
    assert set(served.values()) == {"text_pdf", "scan_pdf", "tiff"}
