"""bench.soak runs: one simulated day on the real stack, and its last line holds the figures the
soak reports (docs/benchmarks.md), the Dagster database's growth read off its days as those
figures say; the lists its shareholder requests are drawn by are the lists the sample register
serves."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pdfplumber
import pytest

from bench.soak import Day, Kept, dagster_db_growth
from sample_register.corpus import load_corpus
from sample_register.documents import current_list_form, filings, original_document

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


@pytest.mark.slow
@pytest.mark.timeout(1800)
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


@pytest.mark.slow
@pytest.mark.timeout(1800)
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


def soak_day(day: int, megabytes: float, runs_deleted: int) -> Day:
    return Day(
        day=day,
        seconds=1.0,
        dagster_db_bytes=round(megabytes * 2**20),
        app_db_bytes=0,
        largest={},
        dagster_table_bytes={},
        dagster_db_parts={},
        rss_mb={},
        connections=1,
        runs_deleted=runs_deleted,
        runs_by_job={},
        kept=Kept(),
        events={},
        jobs_archived=0,
        backfill=False,
        tables_rewritten=[],
    )


def test_the_dagster_database_is_compared_with_the_first_retention_day_the_same_day_of_the_week_and_its_peak():
    # Retention first deletes runs on day 3; a weekly saw peaks on day 6 and ends on day 12, two
    # days past the week that ends on day 10.
    sizes = [10, 11, 20, 21, 22, 25, 21, 21, 22, 21.5, 22, 23]
    days = [soak_day(n, mb, runs_deleted=int(n >= 3)) for n, mb in enumerate(sizes, start=1)]
    figures = dagster_db_growth(days, days[2])
    assert figures["first_retention_day"] == 3
    assert figures["dagster_db_bytes_first_retention_day"] == 20 * 2**20
    assert figures["dagster_db_bytes_last_day"] == 23 * 2**20
    assert figures["dagster_db_growth_since_first_retention_day"] == 0.15
    assert (figures["same_weekday"], figures["dagster_db_growth_same_weekday"]) == (10, 0.075)
    assert (figures["largest_day"], figures["dagster_db_growth_largest"]) == (6, 0.25)
    # Each day from day 10 against the day a week before it in retention's first week: day 10 over
    # day 3 (21.5 / 20), day 11 over day 4 (22 / 21), day 12 over day 5 (23 / 22); the peak of day
    # 6 is compared with nothing.
    assert (figures["largest_by_weekday_day"], figures["dagster_db_growth_largest_by_weekday"]) == (10, 0.075)


def test_a_soak_that_ends_before_retention_acts_has_no_growth_to_report():
    days = [soak_day(1, 9.5, runs_deleted=0)]
    assert dagster_db_growth(days, None) == {
        "dagster_db_bytes_first_retention_day": None,
        "first_retention_day": None,
        "dagster_db_bytes_last_day": round(9.5 * 2**20),
        "dagster_db_growth_since_first_retention_day": None,
    }
