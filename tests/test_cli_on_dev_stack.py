"""The README's commands in a second shell while `hreg dev --no-webserver` runs in the first: the
daemon alone works what `hreg search --pages`, `hreg entity open` and `hreg shareholders request`
ask for, `hreg db url` names the database it all lives in, and `hreg status` shows the work.

One dev stack for the module, started as a newcomer starts it (a fresh data dir, its own
embedded PostgreSQL), stopped with Ctrl-C at the end.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from process_helpers import HREG, REPO_ROOT, free_port, hreg, newcomer_env, processes_with, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

# The portal's result pages hold up to 100 rows each; the sample register's rule opens the first
# ten results of a keyword search.
ROWS_PER_PAGE = 100
OPENED_BY_A_SEARCH = 10


@dataclass(frozen=True)
class DevStack:
    env: dict[str, str]
    data_dir: Path
    output: Path


@pytest.fixture(scope="module")
def dev():
    # A short path: the embedded server's Unix socket lives in it, under a 107-byte limit.
    data_dir = Path(tempfile.mkdtemp(prefix="hreg-cli-"))
    env = newcomer_env(
        HREG_DATA_DIR=str(data_dir),
        HREG_SAMPLE_REGISTER_PORT=str(free_port()),
        HREG_WEBSERVER_PORT=str(free_port()),
    )
    output = data_dir.parent / f"{data_dir.name}.out"
    with output.open("wb") as out:
        process = subprocess.Popen(
            [str(HREG), "dev", "--no-webserver"],
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a terminal's foreground job: Ctrl-C goes to its whole group
        )
    try:
        wait_until(lambda: b"ready:" in output.read_bytes() or process.poll() is not None, 360, "hreg dev to be ready")
        assert process.poll() is None, output.read_text()[-3000:]
        yield DevStack(env, data_dir, output)
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C
        assert process.wait(timeout=120) == 0, output.read_text()[-3000:]
    finally:
        for pid in processes_with(str(data_dir)):
            os.kill(pid, signal.SIGKILL)
        if process.poll() is None:
            process.kill()
        for log in (output, *sorted((data_dir / "logs").glob("*.log"))):
            print(f"--- {log.name} (tail)\n{log.read_text(errors='replace')[-3000:]}")
        output.unlink()
        shutil.rmtree(data_dir, ignore_errors=True)


def new_search(dev: DevStack, *args: str) -> str:
    printed = hreg(dev.env, "search", *args).stdout
    return re.search(r"^search (\S+)$", printed, flags=re.M).group(1)


def completed_search(dev: DevStack, search_id: str) -> dict:
    def completed():
        shown = json.loads(hreg(dev.env, "search", "show", search_id, "--json").stdout)
        opened = [r["processing_status"] for r in shown["results"][:OPENED_BY_A_SEARCH]]
        return shown if shown["search"]["status"] == "completed" and set(opened) == {"parsed"} else None

    return wait_until(completed, 300, f"search {search_id} to complete and its first results to be parsed")


@pytest.fixture(scope="module")
def two_pages(dev) -> tuple[str, dict]:
    """`hreg search GmbH --pages 2`, once the daemon's runs have worked it."""
    search_id = new_search(dev, "GmbH", "--pages", "2")
    return search_id, completed_search(dev, search_id)


def test_dev_without_the_webserver_runs_the_daemon_and_no_ui(dev):
    printed = dev.output.read_text()
    assert "ready:" in printed
    assert "Dagster UI" not in printed
    running = " ".join(processes_with(str(dev.data_dir)).values())
    assert "dagster-daemon" in running
    assert "dagster-webserver" not in running
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{dev.env['HREG_WEBSERVER_PORT']}/server_info", timeout=5)
    assert (dev.data_dir / "logs" / "dagster-daemon.log").exists()
    assert not (dev.data_dir / "logs" / "dagster-webserver.log").exists()


def test_db_url_prints_the_url_of_the_database_the_cli_and_the_stack_share(dev):
    printed = hreg(dev.env, "db", "url").stdout
    assert len(printed.splitlines()) == 1
    url = make_url(printed.strip())
    # The embedded server listens on a socket in the data dir.
    assert url.query["host"] == str(dev.data_dir / "postgres")
    search_id = new_search(dev, "Bäckerei")
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            query = conn.execute(sa.text("SELECT query FROM public.searches WHERE id = :id"), {"id": search_id})
            assert query.scalar_one() == "Bäckerei"
    finally:
        engine.dispose()


def test_search_with_pages_records_the_rows_of_that_many_result_pages(dev, two_pages):
    search_id, shown = two_pages
    assert shown["search"]["result_count"] == 2 * ROWS_PER_PAGE
    assert len(shown["results"]) == 2 * ROWS_PER_PAGE
    # The sample register finds more: the table says so, and how to read further.
    total = int(shown["search"]["total_results"])
    assert total > 2 * ROWS_PER_PAGE
    table = hreg(dev.env, "search", "show", search_id).stdout
    assert f"completed: {2 * ROWS_PER_PAGE} results of {total} the register reported (read more with --pages)" in table


def test_entity_open_fetches_and_parses_a_company_the_search_only_listed(dev, two_pages):
    _, shown = two_pages
    listed = next(r for r in shown["results"][OPENED_BY_A_SEARCH:] if r["processing_status"] == "discovered")
    entity_id = str(listed["id"])
    before = hreg(dev.env, "entity", "show", entity_id).stdout
    assert "No parsed record yet" in before

    printed = hreg(dev.env, "entity", "open", entity_id).stdout
    assert re.match(rf"entity {entity_id}: basic_discovery_running, job \S+\n", printed), printed
    assert f"follow it with: hreg entity show {entity_id}" in printed

    def parsed():
        view = json.loads(hreg(dev.env, "entity", "show", entity_id, "--json").stdout)
        return view if view["entity"]["processing_status"] == "parsed" else None

    wait_until(parsed, 300, f"entity {entity_id} to be parsed")
    after = hreg(dev.env, "entity", "show", entity_id).stdout
    assert listed["name"] in after
    assert "Current record" in after and "No parsed record yet" not in after


def test_shareholders_request_ends_in_the_shareholders_entity_show_lists(dev, two_pages):
    _, shown = two_pages
    gmbh = next(
        r for r in shown["results"][:OPENED_BY_A_SEARCH] if r["processing_status"] == "parsed" and "GmbH" in r["name"]
    )
    entity_id = str(gmbh["id"])
    assert f"no list read yet (ask with: hreg shareholders request {entity_id})" in (
        hreg(dev.env, "entity", "show", entity_id).stdout
    )

    printed = hreg(dev.env, "shareholders", "request", entity_id).stdout
    assert re.fullmatch(rf"entity {entity_id}: shareholder research requested, job \S+\n", printed), printed

    def read():
        view = json.loads(hreg(dev.env, "entity", "show", entity_id, "--json").stdout)
        status = view["entity"]["shareholder_research_status"]
        assert status != "failed", view["entity"]
        return view["shareholders"] if status == "completed" else None

    holders = wait_until(read, 300, f"the shareholders of {entity_id}")
    assert holders["holders"]
    table = hreg(dev.env, "entity", "show", entity_id).stdout
    assert "no list read yet" not in table
    assert all(holder["name"] in table for holder in holders["holders"])


def test_status_shows_the_jobs_the_daemon_worked_and_no_failures(dev, two_pages):
    printed = hreg(dev.env, "status").stdout
    rows = [line.split() for line in printed.splitlines()]
    completed = {row[0]: int(row[2]) for row in rows if len(row) >= 3 and row[1] == "completed"}
    # The search's discovery and the discoveries and parses of the companies it opened.
    assert completed.get("basic_discovery", 0) >= 1 + OPENED_BY_A_SEARCH
    assert completed.get("xml_parsing", 0) >= OPENED_BY_A_SEARCH
    assert "no failed jobs" in printed
