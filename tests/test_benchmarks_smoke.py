"""Every benchmark under bench/ runs, at a size that takes seconds to a few minutes instead of its
full size, and prints as its last line the JSON object its docstring names, with every key there.

No figure is judged here (a busy machine makes any of them slow); what fails is a benchmark that
no longer runs, or whose report lost a figure the README and docs/benchmarks.md cite. Several of
them start the Dagster daemon and webserver, or the cluster layout, in their own processes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[1]
SHAREHOLDER_SAMPLES = REPO_ROOT.parent / "shared" / "samples" / "gesellschafterliste"


# (module, arguments, environment, keys of its last line), the keys as each module's docstring
# (or its README line) names them.
BENCHMARKS = {
    "parse": (
        ["--documents", "30", "--rounds", "1"],
        {},
        {"records_per_s", "bare_parse_per_s", "ratio", "peak_rss_mb"},
    ),
    "queue": (
        [],
        {"BENCH_JOBS": "1200", "BENCH_BATCH_SIZES": "1000", "BENCH_WORKER_COUNTS": "4"},
        {"project_jobs_per_s", "raw_jobs_per_s", "ratio", "floor_jobs_per_s", "floor_ratio"},
    ),
    "archive": (
        [],
        {"BENCH_ENTITIES": "300"},
        {
            "archived_jobs",
            "claim_ms_0_archived",
            "claim_ms_n_archived",
            "ratio",
            "completed_kept",
            "claim_ms_completed_kept",
            "kept_ratio",
            "archive_jobs_per_s",
        },
    ),
    "budget": (
        [],
        {"BENCH_SCALE": "600"},
        {
            prefix + key
            for prefix in ("", "fifo_")
            for key in (
                "retrievals_per_search",
                "retrievals_per_open",
                "interactive_p50_min",
                "interactive_p95_min",
                "interactive_unfinished",
                "background_done",
                "max_retrievals_in_any_hour",
            )
        },
    ),
    "shareholders": (
        # One real list (its values read by eye are in tests/data/real_shareholder_lists), one
        # generated scan, one text-layer list: the folder is filled by the test.
        ["--generated", "1", "--text-lists", "1"],
        {},
        {
            "real_lists",
            "real_lists_right",
            "held_back_lists",
            "generated_lists",
            "generated_lists_right",
            "kind_check_failures",
            "ocr_s_per_page_p50",
            "text_pages_per_s",
        },
    ),
    "pipeline": (
        [],
        # HREG_SEARCH_OPENS=none: the search opens none of its results itself, whose runs the
        # open would wait for.
        {
            "BENCH_JOBS": "40",
            "BENCH_SEARCHES": "1",
            "BENCH_OPENS": "1",
            "BENCH_WARM_UP_S": "0",
            "HREG_SEARCH_OPENS": "none",
        },
        {
            "dagster_jobs_per_s",
            "plain_loop_jobs_per_s",
            "ratio",
            "search_to_run_start_p50_s",
            "search_to_run_start_p95_s",
            "open_to_parsed_p50_s",
            "open_to_parsed_p95_s",
        },
    ),
    "cluster": (
        [],
        {
            "BENCH_JOBS": "40",
            "BENCH_BATCH": "20",
            "BENCH_READS": "5",
            "BENCH_WARM_UP_S": "0",
            "BENCH_CLUSTER_STARTS": "1",
        },
        {
            "cluster_1_worker_jobs_per_s",
            "cluster_2_workers_jobs_per_s",
            "single_machine_jobs_per_s",
            "ratio",
            "workers_seen",
            "store_read_ms_p50",
            "local_read_ms_p50",
        },
    ),
    "backfill": (
        [],
        {"BENCH_ENTITIES": "300", "BENCH_COURTS": "8", "BENCH_IDLE_SEARCHES": "1", "BENCH_LAUNCH_PHASE": "now"},
        {
            "entities_per_s",
            "parser_only_per_s",
            "ratio",
            "runs_ratio",
            "runs_ratio_with_people",
            "revisions_written_noop",
            "revisions_written_changed",
            "interactive_no_backfill_p50_s",
            "interactive_during_backfill_p50_s",
        },
    ),
}


# bench.soak runs a stack of its own, with its own embedded server: its smoke test, which also
# judges its day, is tests/test_bench_soak.py.
SMOKE_TESTED_ELSEWHERE = {"soak"}


def test_every_benchmark_is_smoke_tested():
    modules = {path.stem for path in (REPO_ROOT / "bench").glob("*.py")}
    # What the benchmarks share, and the code locations bench.backfill and bench.soak run Dagster with.
    shared = {"__init__", "common", "latency", "backfill_location", "soak_location"}
    assert modules - shared == set(BENCHMARKS) | SMOKE_TESTED_ELSEWHERE


@pytest.fixture
def shareholder_samples(tmp_path) -> Path:
    folder = tmp_path / "lists"
    folder.mkdir()
    shutil.copy(SHAREHOLDER_SAMPLES / "HRB_9421.tif", folder)
    return folder


@pytest.mark.timeout(900)
@pytest.mark.parametrize("benchmark", sorted(BENCHMARKS))
def test_the_benchmark_runs_at_a_smoke_size_and_reports_its_figures(
    benchmark, server_url, shareholder_samples, tmp_path
):
    arguments, environment, keys = BENCHMARKS[benchmark]
    if benchmark == "shareholders":
        arguments = [*arguments, "--samples", str(shareholder_samples)]
    env = {key: value for key, value in os.environ.items() if not key.startswith(("HREG_", "BENCH_"))}
    env |= {
        # Each benchmark's databases on the suite's server (instead of an embedded server of its own).
        "HREG_DATABASE_URL": server_url.render_as_string(hide_password=False),
        "HREG_DATA_DIR": str(tmp_path / "data"),
        **environment,
    }
    done = subprocess.run(
        [sys.executable, "-m", f"bench.{benchmark}", *arguments],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=840,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    last_line = done.stdout.strip().splitlines()[-1]
    figures = json.loads(last_line)
    assert sorted(keys - figures.keys()) == [], last_line
