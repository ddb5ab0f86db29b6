"""The webserver's UI clicked as a person clicks it (headless Chromium driven by Playwright).

After a parser change, the asset page of company_records shows which court partitions are
unsynced and why; the person picks those courts in the "Materialize…" dialog, launches the
backfill, follows it on the Backfills page to its success, and the courts show synced again.
A discovery run's page shows the batch the run worked and what the run reports of it. No
onboarding dialog covers any of these pages.

The stack is that of the parser-change backfills (tests/test_reparse_daemon.py), with the
sample register for the searches.
"""

from __future__ import annotations

import functools
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import sqlalchemy as sa
from playwright.sync_api import Locator, Page, expect, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from orchestration.stacks import devstack
from process_helpers import wait_until
from stack_helpers import StackOptions, dagster_stack  # noqa: F401 - dagster_stack is a fixture
from test_e2e_daemon import discovery_run_of, new_search
from test_reparse_daemon import (
    COURTS,
    materialized_by_the_old_version,
    parsed_by_the_old_version,
    staleness,
)
from webserver_helpers import BACKFILL_WAIT_S, backfill_state

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Every step of the UI waits at most this long (a busy machine renders slowly), well inside the
# 600 s a test has.
UI_WAIT_MS = 120_000
# A pick in the court list: how long one try waits, and how often the list is opened again.
FILTER_WAIT_MS = 15_000
FILTER_ATTEMPTS = 4
ONBOARDING_HEADING = "Join the Dagster community"
CODE_CAUSE = {"category": "CODE", "reason": "has a new code version"}


@pytest.fixture(scope="module")
def stack_options(samples_dir) -> StackOptions:
    """Nine companies at three courts that the old parser version parsed, and the sample register."""
    return StackOptions(
        "ui",
        sample_register=True,
        before_deploy=functools.partial(parsed_by_the_old_version, samples_dir=samples_dir),
        after_deploy=materialized_by_the_old_version,
    )


@pytest.fixture(scope="module")
def stack(dagster_stack: devstack.Stack) -> devstack.Stack:
    return dagster_stack


@contextmanager
def browser_page() -> Iterator[Page]:
    """A fresh browser, as a person's first visit: no dialog dismissed before."""
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
        )
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.set_default_timeout(UI_WAIT_MS)
            yield page
        finally:
            browser.close()


def _asks_for_onboarding(response) -> bool:
    body = response.request.post_data_json if response.request.method == "POST" else None
    return "/graphql" in response.url and isinstance(body, dict) and body.get("operationName") == "ShouldShowNux"


def open_page(page: Page, url: str) -> None:
    """Load ``url`` as a person types it; the app asks the webserver whether to greet them with its
    onboarding dialog, and it must be told no."""
    with page.expect_response(_asks_for_onboarding, timeout=UI_WAIT_MS) as asked:
        page.goto(url)
    assert asked.value.json() == {"data": {"shouldShowNux": False}}


def assert_no_onboarding_dialog(page: Page) -> None:
    expect(page.get_by_text(ONBOARDING_HEADING)).to_have_count(0)
    expect(page.get_by_role("button", name="Skip", exact=True)).to_have_count(0)


def shot(page: Page, tmp_path, name: str) -> None:
    page.screenshot(path=str(tmp_path / f"{name}.png"), timeout=UI_WAIT_MS, animations="disabled")


def listed_partitions(page: Page) -> list[str]:
    """The partition keys in the partitions page's list (each carries its key as a tooltip)."""
    keys = page.locator("[data-tooltip]").evaluate_all("items => items.map(item => item.dataset.tooltip)")
    return list(dict.fromkeys(keys))


def show_court(page: Page, court: str) -> None:
    """Click a court in the list; the detail pane shows it (its heading carries the key as the list
    item does) once its materialization and its staleness have loaded."""
    page.get_by_text(court, exact=True).first.click()
    expect(page.locator(f'[data-tooltip="{court}"]')).to_have_count(2, timeout=UI_WAIT_MS)
    expect(page.get_by_text("Latest materialization", exact=True)).to_be_visible(timeout=UI_WAIT_MS)
    expect(page.get_by_role("progressbar")).to_have_count(0, timeout=UI_WAIT_MS)


def unsynced_courts(page: Page, tmp_path) -> list[str]:
    """The person's look at the materialized courts: each clicked, the unsynced ones hovered for why."""
    page.get_by_text(re.compile(r"^Missing \(\d+\)$")).click()  # hide the courts never materialized
    page.wait_for_url(re.compile(r"status=FAILED%2CMATERIALIZED%2CMATERIALIZING"), timeout=UI_WAIT_MS)
    expect(page.get_by_text(re.compile(r"^\d+ Partitions Selected$"))).to_be_visible(timeout=UI_WAIT_MS)
    unsynced = []
    for court in listed_partitions(page):
        show_court(page, court)
        expect(page.get_by_text("Materialized", exact=True)).to_be_visible(timeout=UI_WAIT_MS)
        tag = page.get_by_text(re.compile(r"^Unsynced \(\d+\)$"))
        if tag.count():
            expect(tag).to_have_text("Unsynced (1)")
            tag.hover()
            expect(page.get_by_text("1 code version change", exact=True)).to_be_visible(timeout=UI_WAIT_MS)
            expect(page.get_by_text("has a new code version")).to_be_visible(timeout=UI_WAIT_MS)
            shot(page, tmp_path, f"unsynced-{court}")
            unsynced.append(court)
    return unsynced


def pick_court(page: Page, court_list: Locator, search: Locator, court: str) -> None:
    """Pick ``court`` in the court list: open the list, type the court into its filter, tick it.
    The list re-renders its selection after each pick, and under load it may close meanwhile or
    swap the item for a new one, as it may for a person: who opens the list again and looks
    whether the court is ticked before clicking it."""
    item = page.get_by_role("menuitem").filter(has_text=court)
    checkbox = item.get_by_role("checkbox")
    for attempt in range(FILTER_ATTEMPTS):
        wait_ms = UI_WAIT_MS if attempt == FILTER_ATTEMPTS - 1 else FILTER_WAIT_MS
        try:
            if not search.is_visible():
                court_list.click(timeout=wait_ms)
            search.fill(court, timeout=wait_ms)
            if not checkbox.is_checked(timeout=wait_ms):
                item.click(timeout=wait_ms)
            expect(checkbox).to_be_checked(timeout=wait_ms)
            return
        except (PlaywrightTimeoutError, AssertionError):
            if attempt == FILTER_ATTEMPTS - 1:
                raise


def launch_backfill_of(page: Page, courts: list[str], tmp_path) -> str:
    """The "Materialize…" dialog: the focused court comes selected, the others are picked from its
    list; returns the id of the backfill it launched."""
    page.get_by_role("button", name="Materialize…").click()
    title = page.get_by_text("Launch runs to materialize company_records", exact=True)
    # The courts' documents were never reported as materialized: the UI asks before going on.
    confirm = page.get_by_role("dialog").get_by_role("button", name="Confirm", exact=True)
    expect(title.or_(confirm)).to_be_visible(timeout=UI_WAIT_MS)
    if confirm.is_visible():
        confirm.click()
    expect(title).to_be_visible(timeout=UI_WAIT_MS)
    dialog = page.get_by_role("dialog")
    assert_no_onboarding_dialog(page)
    (focused,) = [court for court in courts if dialog.get_by_text(court, exact=True).locator("visible=true").count()]
    court_list = dialog.get_by_text(focused, exact=True).locator("visible=true").first
    search = page.get_by_placeholder("Filter partitions")
    for court in courts:
        if court == focused:
            continue
        pick_court(page, court_list, search, court)
    page.keyboard.press("Escape")
    expect(dialog.get_by_text(f"{len(courts)} partitions", exact=True)).to_be_visible(timeout=UI_WAIT_MS)
    for court in courts:
        expect(dialog.get_by_text(court, exact=True).locator("visible=true")).to_have_count(1)
    shot(page, tmp_path, "launch-dialog")
    dialog.get_by_role("button", name="Launch backfill", exact=True).click()
    toast = page.get_by_text(re.compile(r"^Created backfill \w+$"))
    expect(toast).to_be_visible(timeout=UI_WAIT_MS)
    return toast.inner_text().split()[-1]


def follow_backfill(page: Page, backfill_id: str, courts: list[str], tmp_path) -> None:
    """From the navigation to the Backfills page, until the backfill's row shows its success; then
    its page: the courts chosen, every one of them succeeded."""
    page.get_by_role("navigation").get_by_role("link", name=re.compile(r"\bRuns$")).click()
    page.get_by_role("tab", name="Backfills").click()
    link = page.get_by_role("link", name=backfill_id)
    expect(link).to_be_visible(timeout=UI_WAIT_MS)
    assert_no_onboarding_dialog(page)
    row = page.locator("div").filter(has=link).filter(has_text="Manually launched").last
    expect(row.get_by_text("company_records", exact=True).first).to_be_visible(timeout=UI_WAIT_MS)
    # The list refreshes itself: the person waits for the status to turn.
    expect(row.get_by_text("Success", exact=True)).to_be_visible(timeout=BACKFILL_WAIT_S * 1000)
    shot(page, tmp_path, "backfills")

    link.click()
    page.wait_for_url(f"**/runs/b/{backfill_id}**", timeout=UI_WAIT_MS)
    expect(page.get_by_text("100% completed")).to_be_visible(timeout=UI_WAIT_MS)
    assert_no_onboarding_dialog(page)
    lines = page.inner_text("body").splitlines()
    chosen = lines.index("Partition selection")
    status = lines.index("Status", chosen)
    assert sorted(lines[chosen + 1 : status]) == sorted(courts)
    assert lines[status + 1] == "Succeeded"
    header = lines.index("Asset name")
    assert lines[header + 1 : header + 5] == ["Partitions targeted", "In progress", "Succeeded", "Failed"]
    done = lines.index("100% completed", header)
    assert "company_records" in lines[header + 5 : done]
    assert lines[done + 1 : done + 5] == [str(len(courts)), "0", str(len(courts)), "0"]
    shot(page, tmp_path, "backfill")


def test_a_person_backfills_the_unsynced_courts_from_the_asset_page(stack, tmp_path):
    before = staleness(stack, list(COURTS))
    assert before == dict.fromkeys(COURTS, ("STALE", [CODE_CAUSE]))

    with browser_page() as page:
        open_page(page, f"{stack.webserver_url}/assets/company_records?view=partitions")
        expect(page.get_by_text(re.compile(r"^Materialized \(\d+\)$"))).to_be_visible(timeout=UI_WAIT_MS)
        assert_no_onboarding_dialog(page)
        shot(page, tmp_path, "partitions")

        unsynced = unsynced_courts(page, tmp_path)
        assert unsynced == list(COURTS)
        assert_no_onboarding_dialog(page)

        backfill_id = launch_backfill_of(page, unsynced, tmp_path)
        follow_backfill(page, backfill_id, unsynced, tmp_path)

        # The courts again, on a fresh load of the asset page: each materialized by one of the
        # backfill's runs, none unsynced.
        runs = {run["runId"][:8] for run in backfill_state(stack, backfill_id)["runs"]}
        open_page(
            page,
            f"{stack.webserver_url}/assets/company_records?view=partitions&status=FAILED%2CMATERIALIZED%2CMATERIALIZING",
        )
        expect(page.get_by_text(re.compile(r"^\d+ Partitions Selected$"))).to_be_visible(timeout=UI_WAIT_MS)
        assert_no_onboarding_dialog(page)
        for court in COURTS:
            show_court(page, court)
            run_link = page.get_by_role("link", name=re.compile(r"^[0-9a-f]{8}$"))
            expect(run_link).to_be_visible(timeout=UI_WAIT_MS)
            assert run_link.inner_text() in runs
            expect(page.get_by_text(re.compile(r"^Unsynced"))).to_have_count(0)
            shot(page, tmp_path, f"synced-{court}")

    assert staleness(stack, list(COURTS)) == dict.fromkeys(COURTS, ("FRESH", []))


def step_history_of(engine, run_id: str) -> dict[str, set[str]]:
    """The basic_discovery jobs whose step history names the run, by the status it recorded."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.text("""SELECT status, job_id::text FROM processing.job_step_history
                        WHERE dagster_run_id = :r AND step_type = 'basic_discovery'
                          AND status IN ('completed', 'failed')"""),
            {"r": run_id},
        ).all()
    history: dict[str, set[str]] = {"completed": set(), "failed": set()}
    for status, job_id in rows:
        history[status].add(job_id)
    return history


def search_job(engine, search_id: str) -> str:
    with engine.connect() as conn:
        return conn.execute(
            sa.text(
                "SELECT id::text FROM processing.processing_jobs WHERE search_id = :s AND type = 'basic_discovery'"
            ),
            {"s": search_id},
        ).scalar_one()


def metadata_value(table, label: str) -> str:
    return table.get_by_role("row", name=re.compile(rf"^{label} ")).get_by_role("cell").nth(1).inner_text()


def test_a_discovery_run_page_shows_the_batch_it_worked_and_what_it_reported(stack, tmp_path):
    engine = sa.create_engine(stack.app_url)
    search_id = new_search(engine, "Bau")
    run_id = wait_until(lambda: discovery_run_of(engine, search_id), 180, "a run to complete the search's discovery")
    job_id = search_job(engine, search_id)

    with browser_page() as page:
        open_page(page, f"{stack.webserver_url}/runs/{run_id}")
        expect(page.get_by_text("basic_discovery_job", exact=True).first).to_be_visible(timeout=UI_WAIT_MS)
        expect(page.get_by_text("Success", exact=True).first).to_be_visible(timeout=UI_WAIT_MS)
        assert_no_onboarding_dialog(page)
        # The run is over: the step history holds every job it worked.
        history = step_history_of(engine, run_id)
        engine.dispose()
        assert job_id in history["completed"]
        shot(page, tmp_path, "run")

        # The run's tags: the sensor asked it to claim from the search's job on.
        page.get_by_role("button", name="View tags and config").click()
        tags = page.get_by_role("dialog")
        head = tags.get_by_text(re.compile(r"^hreg/batch_head: "))
        expect(head).to_be_visible(timeout=UI_WAIT_MS)
        assert head.inner_text().split()[-1] == job_id
        expect(tags.get_by_text("hreg/job_type: basic_discovery", exact=True)).to_be_visible()
        shot(page, tmp_path, "run-tags")
        tags.get_by_role("button", name="OK", exact=True).click()
        expect(tags).to_have_count(0, timeout=UI_WAIT_MS)

        # The event log, narrowed to the discovered companies: the batch's materialization in full.
        page.get_by_placeholder("Filter…").fill("discovered_entities")
        event = (
            page.locator("div")
            .filter(has_text="Materialized value discovered_entities.")
            .filter(has=page.get_by_role("button", name="View full message"))
            .last
        )
        event.get_by_role("button", name="View full message").click()
        message = page.get_by_role("dialog")
        expect(message.get_by_text("Materialized value discovered_entities.")).to_be_visible(timeout=UI_WAIT_MS)
        assert_no_onboarding_dialog(page)
        shot(page, tmp_path, "run-materialization")
        assert metadata_value(message, "job_type") == "basic_discovery"
        worked = len(history["completed"]) + len(history["failed"])
        assert metadata_value(message, "claimed") == str(worked)
        assert metadata_value(message, "completed") == str(len(history["completed"]))
        assert metadata_value(message, "failed") == str(len(history["failed"]))
        # Its sample of the batch: the jobs it shows, the search's first among them, are the
        # jobs the step history records for this run.
        sample_row = message.get_by_role("row").filter(has=page.get_by_role("cell", name="sample", exact=True))
        sample = sample_row.get_by_role("table")
        header = sample.get_by_role("columnheader").all_inner_texts()
        column = header.index("job_id")
        shown = [row.get_by_role("cell").nth(column).inner_text() for row in sample.get_by_role("row").all()[1:]]
        assert shown[0] == job_id
        assert set(shown) <= history["completed"] | history["failed"]
