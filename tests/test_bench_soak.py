"""bench.soak runs: one simulated day on the real stack, and its last line holds the figures the
soak reports (docs/benchmarks.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

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
