"""A first look without noise: the search `hreg dev` suggests finds companies on the sample register,
and loading the code location prints none of the beta warnings of the parameters we use on purpose."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from orchestration.cli.dev import FIRST_SEARCH
from orchestration.register import PortalClient, SearchMode
from sample_register import start_sample_register_in_thread

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def sample_register_as_hreg_dev_serves_it():
    # `hreg dev` runs `hreg sample-register --port N`: the default corpus, samples beside the repository.
    with start_sample_register_in_thread() as server:
        yield server


def test_the_suggested_first_search_finds_companies_on_the_sample_register(
    sample_register_as_hreg_dev_serves_it, tmp_path
):
    with PortalClient(sample_register_as_hreg_dev_serves_it.url, diagnostics_dir=tmp_path) as client:
        # `hreg search QUERY` searches for every word (--mode all) and reads one result page.
        found = client.search(FIRST_SEARCH, SearchMode.ALL, max_results=100)
    # Enough for the sample register's rule to open ten of them, as the README's first look says.
    assert len(found) >= 10
    assert all("bau" in row.name.lower() for row in found), [row.name for row in found]


LOAD_THE_CODE_LOCATION = """
import warnings
import dagster as dg
from orchestration.definitions import build_definitions

build_definitions().get_repository_def().get_all_jobs()
# Another beta parameter, should one come into use, still speaks.
warnings.warn("Parameter `pool` of function `asset` is currently in beta", dg.BetaWarning)
"""


def test_loading_the_code_location_warns_of_no_beta_parameter_we_use():
    loaded = subprocess.run(
        [sys.executable, "-W", "always", "-c", LOAD_THE_CODE_LOCATION],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    warned = [line for line in loaded.stderr.splitlines() if "BetaWarning" in line]
    assert len(warned) == 1 and "`pool`" in warned[0], loaded.stderr[-3000:]
