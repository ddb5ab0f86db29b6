"""End to end with the real processes: sample register, dagster-daemon and dagster-webserver.

A search row goes in; the sensors launch discovery and parsing runs through the daemon; the
entities end up parsed, the shareholder request ends in shareholder rows, and the UI shows the
asset graph and the completed runs (headless Chromium driven by Playwright).
"""

from __future__ import annotations

import os
import shutil
import signal
import uuid

import dagster as dg
import pytest
import sqlalchemy as sa
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from playwright.sync_api import sync_playwright

from orchestration.stacks import devstack
from process_helpers import wait_until
from stack_helpers import StackOptions, dagster_stack  # noqa: F401 - dagster_stack is a fixture
from webserver_helpers import graphql

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
STALENESS = """
query Staleness($partitions: [String!]) {
  assetNodes(assetKeys: [{path: ["company_records"]}]) {
    staleStatusByPartition(partitions: $partitions)
    staleCausesByPartition(partitions: $partitions) { category reason }
  }
}
"""
RUNS_IN_FLIGHT = """
query { runsOrError(filter: {statuses: [QUEUED, NOT_STARTED, STARTING, STARTED, CANCELING]}) {
  ... on Runs { results { runId jobName } } } }
"""
OWNERSHIP_GRAPH = """
query { assetOrError(assetKey: {path: ["ownership_graph"]}) { ... on Asset {
  assetMaterializations(limit: 1) { runId metadataEntries { label ... on IntMetadataEntry { intValue } } } } } }
"""


@pytest.fixture(scope="module")
def stack_options() -> StackOptions:
    return StackOptions("e2e", sample_register=True)


@pytest.fixture(scope="module")
def stack(dagster_stack: devstack.Stack) -> devstack.Stack:
    return dagster_stack


def new_search(engine, query: str) -> str:
    """A search row as the application writes it; its trigger queues the discovery job."""
    with engine.begin() as conn:
        return conn.execute(
            sa.text("INSERT INTO public.searches (user_id, query, mode) VALUES (:u, :q, 'all') RETURNING id"),
            {"u": str(uuid.uuid4()), "q": query},
        ).scalar_one()


def test_search_to_parsed_entities_and_shareholders_through_the_daemon(stack):
    engine = sa.create_engine(stack.app_url)
    search_id = new_search(engine, "GmbH")

    # The search lists a page of results; as the sample register's rule says, it opens the first
    # ten, whose SI documents are fetched and parsed; the rest stay discovered until opened.
    def parsed_entities():
        with engine.connect() as conn:
            status = conn.execute(
                sa.text("SELECT status FROM public.searches WHERE id = :s"), {"s": search_id}
            ).scalar()
            rows = conn.execute(
                sa.text("""SELECT e.id, e.processing_status FROM public.search_results r
                             JOIN content.entities e ON e.id = r.entity_id
                            WHERE r.search_id = :s ORDER BY r.position"""),
                {"s": search_id},
            ).all()
        if status == "completed" and len(rows) > 10 and all(r.processing_status == "parsed" for r in rows[:10]):
            assert {r.processing_status for r in rows[10:]} == {"discovered"}
            return rows[:10]
        return None

    entities = wait_until(parsed_entities, 120, "the search's first results to be parsed")
    with engine.connect() as conn:
        revisions = conn.execute(
            sa.text("SELECT count(DISTINCT entity_id) FROM content.entity_revisions WHERE entity_id = ANY(:ids)"),
            {"ids": [r.id for r in entities]},
        ).scalar_one()
        # Which job types the daemon's runs worked: every completion carries its Dagster run id.
        worked_by_runs = set(
            conn.execute(
                sa.text(
                    "SELECT DISTINCT step_type FROM processing.job_step_history "
                    "WHERE status = 'completed' AND dagster_run_id IS NOT NULL"
                )
            ).scalars()
        )
        gmbh = conn.execute(
            sa.text("SELECT id FROM content.entities WHERE id = ANY(:ids) AND legal_form = 'GmbH' LIMIT 1"),
            {"ids": [r.id for r in entities]},
        ).scalar_one()
        # As the application asks: for a person, so the jobs are manual with a requester.
        conn.execute(
            sa.text("SELECT processing.request_shareholder_research(:e, :u)"), {"e": gmbh, "u": str(uuid.uuid4())}
        )
        conn.commit()
    assert revisions == len(entities)
    assert {"basic_discovery", "xml_parsing"} <= worked_by_runs

    def shareholder_rows():
        with engine.connect() as conn:
            status = conn.execute(
                sa.text("SELECT shareholder_research_status FROM content.entities WHERE id = :e"), {"e": gmbh}
            ).scalar_one()
            count = conn.execute(
                sa.text("SELECT count(*) FROM content.shareholders WHERE entity_id = :e"), {"e": gmbh}
            ).scalar_one()
        assert status != "failed", "shareholder research failed"
        return count if status == "completed" else 0

    assert wait_until(shareholder_rows, 180, "shareholder rows of the requested GmbH") > 0
    engine.dispose()


def test_after_the_search_every_parsed_court_is_current_and_the_ownership_graph_follows(stack):
    engine = sa.create_engine(stack.app_url)
    with engine.connect() as conn:
        courts = sorted(
            conn.execute(
                sa.text("SELECT DISTINCT left(court_code, 5) FROM content.entities WHERE processing_status = 'parsed'")
            ).scalars()
        )
    engine.dispose()
    assert courts
    # Once the runs the search caused have finished (the shareholder runs included):
    wait_until(lambda: not graphql(stack, RUNS_IN_FLIGHT)["runsOrError"]["results"], 300, "the runs to finish")
    (node,) = graphql(stack, STALENESS, partitions=courts)["assetNodes"]
    assert node["staleStatusByPartition"] == ["FRESH"] * len(courts)
    assert node["staleCausesByPartition"] == [[]] * len(courts)

    # The automation condition rebuilds the ownership graph from the shareholders read.
    def ownership_graph_rows():
        materializations = graphql(stack, OWNERSHIP_GRAPH)["assetOrError"]["assetMaterializations"]
        rows = (
            {e["label"]: e.get("intValue") for e in materializations[0]["metadataEntries"]} if materializations else {}
        )
        return rows if rows.get("rows") else None

    rows = wait_until(ownership_graph_rows, 240, "ownership_graph to be rebuilt by its automation sensor")
    assert rows["companies"] == 1  # the one GmbH whose shareholders were requested


def run_process_id(stack: devstack.Stack, run_id: str) -> int | None:
    """The process of a run once it has started its step (in-process executor: its step events carry
    the run's pid), None before."""
    with dg.DagsterInstance.from_config(str(stack.dagster_home)) as instance:
        started = instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_START)
    return started[0].dagster_event.pid if started else None


def test_a_killed_run_gives_its_job_back_through_the_failure_path(stack):
    """kill -9 of a run's process while it waits for the register: the code server marks the run
    failed, the run-status sensor fails its job as lease_expired, and the database retries it."""
    engine = sa.create_engine(stack.app_url)
    register = stack.processes["sample-register"]
    with engine.begin() as conn:
        entity = conn.execute(
            sa.text("SELECT id FROM content.entities WHERE processing_status = 'discovered' LIMIT 1")
        ).scalar_one()
    os.kill(register.pid, signal.SIGSTOP)  # the register stops answering: the run waits for it
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("SELECT processing.open_entity(:e)"), {"e": entity})

        def held_job():
            with engine.connect() as conn:
                return conn.execute(
                    sa.text("""SELECT id, worker_id FROM processing.processing_jobs
                                WHERE entity_id = :e AND type = 'basic_discovery' AND status = 'running'"""),
                    {"e": entity},
                ).first()

        job = wait_until(held_job, 120, "a discovery run to claim the opened entity's job")
        pid = wait_until(lambda: run_process_id(stack, job.worker_id), 60, "the run to start its step")
        os.kill(pid, signal.SIGKILL)

        def released():
            with engine.connect() as conn:
                return conn.execute(
                    sa.text("""SELECT status, error_type, error_message FROM processing.job_step_history
                                WHERE job_id = :j AND status = 'failed' ORDER BY id LIMIT 1"""),
                    {"j": job.id},
                ).first()

        step = wait_until(released, 120, "the killed run's job to be released")
    finally:
        os.kill(register.pid, signal.SIGCONT)
    assert step.error_type == "lease_expired"
    assert f"held by run {job.worker_id}" in step.error_message  # the run-status sensor, not the reaper

    def parsed():
        with engine.connect() as conn:
            return (
                conn.execute(
                    sa.text("SELECT processing_status FROM content.entities WHERE id = :e"), {"e": entity}
                ).scalar_one()
                == "parsed"
            )

    wait_until(parsed, 180, "the retried job to fetch and parse the company")
    engine.dispose()


def dismiss_welcome_dialog(page) -> None:
    """The webserver greets a new browser with a newsletter dialog over the page."""
    skip = page.get_by_text("Skip", exact=True)
    try:
        skip.wait_for(timeout=5_000)
    except PlaywrightTimeoutError:  # no dialog this time
        return
    skip.click()


def discovery_run_of(engine, search_id) -> str | None:
    """The Dagster run that completed the search's basic_discovery job, once one has."""
    with engine.connect() as conn:
        return conn.execute(
            sa.text("""SELECT h.dagster_run_id FROM processing.job_step_history h
                         JOIN processing.processing_jobs j ON j.id = h.job_id
                        WHERE j.search_id = :s AND j.type = 'basic_discovery' AND h.status = 'completed'"""),
            {"s": search_id},
        ).scalar()


def test_ui_shows_asset_graph_and_the_run_that_worked_a_search(stack, tmp_path):
    engine = sa.create_engine(stack.app_url)
    search_id = new_search(engine, "Bau")
    run_id = wait_until(lambda: discovery_run_of(engine, search_id), 120, "a run to complete the search's discovery")
    engine.dispose()

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
        )
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        groups = {
            "register": ("discovered_entities", "raw_si_documents", "company_records"),
            "shareholders": ("shareholder_list_documents", "shareholders", "ownership_graph"),
        }
        for group, assets in groups.items():
            page.goto(f"{stack.webserver_url}/locations/handelsregister/asset-groups/{group}", wait_until="networkidle")
            dismiss_welcome_dialog(page)
            for asset in assets:
                page.get_by_text(asset, exact=True).first.wait_for(timeout=60_000)
            page.screenshot(path=str(tmp_path / f"asset-group-{group}.png"))

        # The run that worked this search: its page names its job and, once it is over, its success.
        page.goto(f"{stack.webserver_url}/runs/{run_id}", wait_until="networkidle")
        dismiss_welcome_dialog(page)
        page.get_by_text("basic_discovery_job", exact=True).first.wait_for(timeout=60_000)
        page.get_by_text("Success", exact=True).first.wait_for(timeout=120_000)
        page.screenshot(path=str(tmp_path / "run.png"))
        browser.close()
