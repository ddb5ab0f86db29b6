"""Parser-change backfills launched through the webserver's GraphQL API exactly as the UI's
"Launch backfill" button launches them, and worked by the real dagster-daemon's runs.

The stored documents were parsed by an older parser version; the code location runs the
current one. Each court partition whose materialization names the old version shows as
unsynced; a backfill over every court takes one run per run slot, re-parses the stored documents
(nothing is downloaded), links each job to the one it redoes and writes no revision for an
unchanged record. A court with a document that cannot be parsed fails alone; once the document
is replaced, re-executing the backfill from failure redoes that court only, and running a
finished court again writes nothing. The Backfills page shows the backfill with its partitions.
Once their runs are old, retention deletes a finished backfill with its runs when none of them
holds what the UI reads, and keeps the others.
"""

from __future__ import annotations

import functools
import re
import shutil
import uuid
from datetime import UTC, datetime

import dagster as dg
import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from playwright.sync_api import sync_playwright

from orchestration.assembly.dagster_retention import FINISHED_BACKFILL_STATUSES, delete_old_runs
from orchestration.cli import main
from orchestration.db.engine import create_app_engine
from orchestration.jobs.specs import JOB_TYPES
from orchestration.records.courts import register_courts
from orchestration.records.documents import DocumentStore
from orchestration.runtime.worker import run_batch
from orchestration.settings import Settings
from orchestration.stacks import devstack
from orchestration.stages.parsing import XmlParsingStage
from orchestration.webserver.backfills import backfill_status
from orchestration.xjustiz import PARSER_VERSION
from pipeline_helpers import add_entity_with_si, job_rows, sample_si_files
from process_helpers import WaitBudget
from stack_helpers import StackOptions, dagster_stack  # noqa: F401 - dagster_stack is a fixture
from webserver_helpers import finished_backfill, graphql

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
OLD_VERSION = "0.9.0"
COMPANY_RECORDS_PATH = ["company_records"]
# The companies of the fixture are filed at Stuttgart, Munich and Berlin (Charlottenburg).
COURTS = ("B8534", "D2601", "F1103")
# The run slots of the stack: four, one of which backfill runs leave to people's runs; a backfill
# of the 173 courts is 3 runs of at most 58 courts (173 / 3, rounded up).
RUN_SLOTS, PEOPLE_RUN_SLOTS = 4, 1
BACKFILL_RUNS, COURTS_PER_RUN = 3, 58

ASSET_NODE = """
query AssetNode($path: [String!]!, $partition: String!) {
  assetNodes(assetKeys: [{path: $path}]) {
    jobNames
    partitionKeysByDimension { partitionKeys }
    backfillPolicy { maxPartitionsPerRun }
    staleStatus(partition: $partition)
    staleCauses(partition: $partition) { category reason }
  }
}
"""
# The mutation and the parameters the UI's "Launch backfill" button sends for assets of one
# partitions definition whose first common job is the hidden asset job.
LAUNCH_BACKFILL = """
mutation LaunchPartitionBackfill($backfillParams: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $backfillParams) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message stack }
    ... on InvalidSubsetError { message }
    ... on UnauthorizedError { message }
  }
}
"""
# What the Backfills page's "Re-execute from failure" sends.
REEXECUTE_BACKFILL = """
mutation Reexecute($reexecutionParams: ReexecutionParams) {
  reexecutePartitionBackfill(reexecutionParams: $reexecutionParams) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message }
  }
}
"""
PARTITION_MATERIALIZATION = """
query Materialization($path: [String!]!, $partition: String!) {
  assetOrError(assetKey: {path: $path}) { ... on Asset {
    assetMaterializations(partitions: [$partition], limit: 1) {
      partition runId
      metadataEntries { label ... on IntMetadataEntry { intValue } ... on TextMetadataEntry { text } }
    }
  } }
}
"""
STALENESS = """
query Staleness($path: [String!]!, $partitions: [String!]) {
  assetNodes(assetKeys: [{path: $path}]) {
    staleStatusByPartition(partitions: $partitions)
    staleCausesByPartition(partitions: $partitions) { category reason }
  }
}
"""
# The Backfills page's rows, with each backfill's runs.
BACKFILLS = """
query { partitionBackfillsOrError { ... on PartitionBackfills {
  results { id status numPartitions timestamp runs { runId } }
} } }
"""
RUN_STATUS = """
query Run($runId: ID!) { runOrError(runId: $runId) { ... on Run { status } } }
"""


def parsed_by_the_old_version(settings: Settings, samples_dir) -> None:
    """Nine companies at three courts whose documents the old parser version parsed."""
    engine = create_app_engine(settings.database_url)
    with engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE processing.job_types SET current_version = :v WHERE type = 'xml_parsing'"),
            {"v": OLD_VERSION},
        )
    store = DocumentStore(settings.documents_dir)
    for i, path in enumerate(sample_si_files(samples_dir)[:9]):
        add_entity_with_si(engine, store, path.read_bytes(), number=str(600 + i), court_code=COURTS[i % 3])
    assert run_batch(engine, XmlParsingStage(JOB_TYPES.xml_parsing, store), "old-parser").completed == 9
    engine.dispose()


def materialized_by_the_old_version(stack: devstack.Stack) -> None:
    """What the old code location's runs recorded: each court partition materialized by the old version."""
    # Dagster's provenance tags by their stored values (pinned in tests/test_dagster_internals.py).
    with dg.DagsterInstance.from_config(str(stack.dagster_home)) as instance:
        for court in COURTS:
            tags = {
                "dagster/code_version": OLD_VERSION,
                "dagster/data_version": f"{court}-parsed-by-{OLD_VERSION}",
                "dagster/input_data_version/raw_si_documents": "before-partitioned-documents",
                "dagster/input_event_pointer/raw_si_documents": "NULL",
            }
            instance.report_runless_asset_event(
                dg.AssetMaterialization(COMPANY_RECORDS_PATH, partition=court, tags=tags)
            )


@pytest.fixture(scope="module")
def stack_options(samples_dir) -> StackOptions:
    """Nine companies at three courts whose documents the old parser version parsed (and whose
    court partitions it materialized), then the webserver and the daemon with the current code."""
    return StackOptions(
        "backfills",
        before_deploy=functools.partial(parsed_by_the_old_version, samples_dir=samples_dir),
        after_deploy=materialized_by_the_old_version,
        env={"HREG_MAX_CONCURRENT_RUNS": str(RUN_SLOTS), "HREG_PEOPLE_RUN_SLOTS": str(PEOPLE_RUN_SLOTS)},
    )


@pytest.fixture(scope="module")
def stack(dagster_stack: devstack.Stack):
    engine = create_app_engine(dagster_stack.app_url)
    yield dagster_stack, engine, DocumentStore(dagster_stack.settings.documents_dir)
    engine.dispose()


def launch_backfill(stack: devstack.Stack, partition_names: list[str]) -> str:
    launched = graphql(
        stack,
        LAUNCH_BACKFILL,
        backfillParams={
            "tags": [],
            "assetSelection": [{"path": COMPANY_RECORDS_PATH}],
            "partitionNames": partition_names,
            "fromFailure": False,
        },
    )["launchPartitionBackfill"]
    assert launched["__typename"] == "LaunchBackfillSuccess", launched
    return launched["backfillId"]


def partition_counts(backfill: dict) -> dict:
    (counts,) = backfill["assetBackfillData"]["assetBackfillStatuses"]
    assert counts["assetKey"]["path"] == COMPANY_RECORDS_PATH
    return {key: counts[key] for key in ("numPartitionsTargeted", "numPartitionsMaterialized", "numPartitionsFailed")}


def partition_metadata(stack: devstack.Stack, court: str) -> dict:
    asset = graphql(stack, PARTITION_MATERIALIZATION, path=COMPANY_RECORDS_PATH, partition=court)["assetOrError"]
    (materialization,) = asset["assetMaterializations"]
    return {e["label"]: e.get("intValue", e.get("text")) for e in materialization["metadataEntries"]}


def staleness(stack: devstack.Stack, courts: list[str]) -> dict[str, tuple[str, list[dict]]]:
    """Court -> its stale status and causes, as the asset's page shows them."""
    (node,) = graphql(stack, STALENESS, path=COMPANY_RECORDS_PATH, partitions=courts)["assetNodes"]
    return dict(
        zip(courts, zip(node["staleStatusByPartition"], node["staleCausesByPartition"], strict=True), strict=True)
    )


def revision_count(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT count(*) FROM content.entity_revisions")).scalar_one()


@pytest.fixture(scope="module")
def all_courts_backfill(stack, samples_dir) -> dict:
    """After a parser change, one company of Munich is opened and parsed by a sensor's run; then
    the backfill a person launches: every court partition."""
    stack, engine, store = stack
    # Its waits, inside the 600 s of the first test, of which starting the stack takes the rest.
    budget = WaitBudget(450)
    old_jobs = {job.entity_id: job.id for job in job_rows(engine, "xml_parsing")}
    (node,) = graphql(stack, ASSET_NODE, path=COMPANY_RECORDS_PATH, partition="D2601")["assetNodes"]
    (dimension,) = node["partitionKeysByDimension"]
    courts = dimension["partitionKeys"]
    after_bump = staleness(stack, courts)

    newcomer = add_entity_with_si(
        engine, store, sample_si_files(samples_dir)[10].read_bytes(), number="650", court_code="D2601"
    )
    (job,) = budget.wait_until(
        lambda: [
            j for j in job_rows(engine, "xml_parsing") if str(j.entity_id) == newcomer and j.status == "completed"
        ],
        "a sensor's run to parse the new Munich company",
    )
    budget.wait_until(
        lambda: graphql(stack, RUN_STATUS, runId=job.worker_id)["runOrError"]["status"] == "SUCCESS",
        "the sensor's run to finish",
    )
    after_sensor_run = staleness(stack, ["D2601"])["D2601"]

    revisions_before = revision_count(engine)
    backfill_id = launch_backfill(stack, courts)
    backfill = finished_backfill(stack, backfill_id, budget.left())
    return {
        "id": backfill_id,
        "backfill": backfill,
        "node_before": node,
        "after_bump": after_bump,
        "after_sensor_run": after_sensor_run,
        "after_backfill": staleness(stack, courts),
        "old_jobs": old_jobs,
        "revisions_before": revisions_before,
    }


def test_a_court_is_unsynced_while_any_of_its_companies_waits_for_the_new_parser(all_courts_backfill):
    code_cause = {"category": "CODE", "reason": "has a new code version"}
    after_bump = all_courts_backfill["after_bump"]
    # Every court with records names the old version, and only that: no dependency cause.
    assert {court: status for court, (status, _) in after_bump.items() if status != "MISSING"} == dict.fromkeys(
        COURTS, "STALE"
    )
    assert all(causes == [code_cause] for court, (_, causes) in after_bump.items() if court in COURTS)
    # A sensor's run parsed one Munich company with the new version; two others still wait for it.
    assert all_courts_backfill["after_sensor_run"] == ("STALE", [code_cause])
    # The backfill brought every company of every court to the new version: nothing is left to do.
    after_backfill = all_courts_backfill["after_backfill"]
    assert {status for status, _ in after_backfill.values()} == {"FRESH"}
    assert not [court for court, (_, causes) in after_backfill.items() if causes]


def test_a_parser_change_is_a_backfill_over_every_court_in_one_run_per_run_slot(stack, all_courts_backfill):
    stack, engine, _ = stack
    node = all_courts_backfill["node_before"]
    # Before: the court partition shows as unsynced, for the parser version; the UI would launch
    # an asset backfill (the first job holding the asset is the hidden asset job).
    assert node["staleStatus"] == "STALE"
    assert {"category": "CODE", "reason": "has a new code version"} in node["staleCauses"]
    assert node["jobNames"][0].startswith("__ASSET_JOB")
    keys = node["partitionKeysByDimension"][0]["partitionKeys"]
    assert keys == list(register_courts()) and len(keys) == 173
    assert node["backfillPolicy"]["maxPartitionsPerRun"] == COURTS_PER_RUN

    backfill = all_courts_backfill["backfill"]
    assert backfill["status"] == "COMPLETED_SUCCESS"
    assert partition_counts(backfill) == {
        "numPartitionsTargeted": 173,
        "numPartitionsMaterialized": 173,
        "numPartitionsFailed": 0,
    }
    runs = backfill["runs"]
    assert len(runs) == BACKFILL_RUNS  # one run per run slot backfills may take, not one per court
    assert {run["status"] for run in runs} == {"SUCCESS"}

    reparses = [job for job in job_rows(engine, "xml_parsing") if job.trigger == "parser_change"]
    assert len(reparses) == 9 and {job.status for job in reparses} == {"completed"}
    assert {job.parser_version for job in reparses} == {PARSER_VERSION}
    assert {job.entity_id: job.previous_job_id for job in reparses} == all_courts_backfill["old_jobs"]
    assert revision_count(engine) == all_courts_backfill["revisions_before"]  # the output did not change
    run_ids = {run["runId"] for run in runs}
    with engine.connect() as conn:
        workers = set(
            conn.execute(
                sa.text("SELECT DISTINCT worker_id FROM processing.processing_jobs WHERE trigger = 'parser_change'")
            ).scalars()
        )
    assert workers <= run_ids  # worked by the backfill's runs, none by a sensor's

    munich = partition_metadata(stack, "D2601")
    assert (munich["records"], munich["revisions_written"], munich["failed"]) == (3, 0, 0)
    assert munich["parser_version"] == PARSER_VERSION
    assert partition_metadata(stack, "Y1308")["records"] == 0  # a court without companies here
    (node,) = graphql(stack, ASSET_NODE, path=COMPANY_RECORDS_PATH, partition="D2601")["assetNodes"]
    assert not [cause for cause in node["staleCauses"] if cause["category"] == "CODE"]


def test_a_failed_court_is_re_executed_from_failure_and_a_finished_court_writes_nothing_again(
    stack, all_courts_backfill, samples_dir
):
    stack, engine, store = stack
    budget = WaitBudget(540)  # the test's waits, inside its 600 s
    # A Berlin company whose stored document is not an SI document: its upload parse fails for good.
    broken = add_entity_with_si(engine, store, b"<?xml version='1.0'?><invoice/>", number="699", court_code="F1103")
    budget.wait_until(
        lambda: [j for j in job_rows(engine, "xml_parsing") if str(j.entity_id) == broken and j.status == "failed"],
        "the sensor's run to fail the broken document",
    )

    backfill = finished_backfill(stack, launch_backfill(stack, list(COURTS)), budget.left())

    assert backfill["status"] in ("COMPLETED_FAILED", "FAILED")
    assert partition_counts(backfill) == {
        "numPartitionsTargeted": 3,
        "numPartitionsMaterialized": 2,
        "numPartitionsFailed": 1,
    }
    failed_job = next(
        j for j in job_rows(engine, "xml_parsing") if str(j.entity_id) == broken and j.trigger == "parser_change"
    )
    assert (failed_job.status, failed_job.failure_class) == ("failed", "invalid_file")

    # The document is downloaded again (a good copy); the Backfills page's "Re-execute from failure".
    good = sample_si_files(samples_dir)[9].read_bytes()
    with engine.begin() as conn:
        document_id = store.store(conn, good, kind="si", media_type="application/xml", entity_id=broken)
        conn.execute(
            sa.text("UPDATE content.entities SET current_si_document_id = :d WHERE id = :e"),
            {"d": document_id, "e": broken},
        )
    reexecuted = graphql(
        stack,
        REEXECUTE_BACKFILL,
        reexecutionParams={"parentRunId": backfill_id_of(stack, backfill), "strategy": "FROM_FAILURE"},
    )["reexecutePartitionBackfill"]
    assert reexecuted["__typename"] == "LaunchBackfillSuccess", reexecuted
    retry = finished_backfill(stack, reexecuted["backfillId"], budget.left())
    assert retry["status"] == "COMPLETED_SUCCESS"
    assert partition_counts(retry) == {
        "numPartitionsTargeted": 1,
        "numPartitionsMaterialized": 1,
        "numPartitionsFailed": 0,
    }
    (redo,) = [j for j in job_rows(engine, "xml_parsing") if j.previous_job_id == failed_job.id]
    assert (redo.status, redo.trigger, str(redo.raw_document_id)) == ("completed", "parser_change", document_id)
    berlin = partition_metadata(stack, "F1103")
    assert (berlin["records"], berlin["revisions_written"], berlin["failed"]) == (1, 1, 0)

    # Running the finished court again, asked for on the command line: no job, no revision.
    jobs_before, revisions_before = len(job_rows(engine, "xml_parsing")), revision_count(engine)
    asked = CliRunner().invoke(
        main,
        [
            "reparse",
            "--backfill",
            "--court",
            "F1103",
            "--webserver",
            stack.webserver_url,
            "--reason",
            "checking the Berlin documents",
            "--user",
            str(uuid.uuid4()),
        ],
    )
    assert asked.exit_code == 0, asked.output
    backfill_id = re.search(r"launched backfill (\w+) of company_records over 1 courts", asked.output).group(1)
    assert f"{stack.webserver_url}/runs/b/{backfill_id}" in asked.output
    again = finished_backfill(stack, backfill_id, budget.left())
    assert again["status"] == "COMPLETED_SUCCESS"
    # The timeline a benchmark reads: launched, its one run started and ended, marked complete.
    status = backfill_status(stack.webserver_url, backfill_id)
    assert (status.status, status.partitions, status.runs) == ("COMPLETED_SUCCESS", 1, 1)
    assert status.started_at <= status.first_run_started_at <= status.last_run_ended_at <= status.ended_at
    assert (len(job_rows(engine, "xml_parsing")), revision_count(engine)) == (jobs_before, revisions_before)
    assert partition_metadata(stack, "F1103")["records"] == 0


def backfill_id_of(stack: devstack.Stack, backfill: dict) -> str:
    (run, *_) = backfill["runs"]
    return next(tag["value"] for tag in run["tags"] if tag["key"] == "dagster/backfill")


def test_the_backfills_page_shows_the_backfill_with_its_court_partitions(stack, all_courts_backfill, tmp_path):
    stack, _, _ = stack
    backfill_id = all_courts_backfill["id"]
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
        )
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        # The webserver greets a new browser with a newsletter dialog over the page, at a moment of
        # its own (seconds late on a busy machine): whenever it covers what a step acts on, skip it.
        page.add_locator_handler(page.get_by_text("Skip", exact=True), lambda skip: skip.click())
        page.goto(f"{stack.webserver_url}/overview/backfills", wait_until="networkidle")
        page.get_by_text(backfill_id, exact=True).first.wait_for(timeout=60_000)
        page.screenshot(path=str(tmp_path / "backfills.png"))

        # The backfill's page: its asset with the court partitions targeted, in progress, done, failed.
        page.get_by_text(backfill_id, exact=True).first.click()
        page.wait_for_url(f"**/runs/b/{backfill_id}**")
        page.get_by_text("100% completed").wait_for(timeout=60_000)
        lines = page.inner_text("body").splitlines()
        header = lines.index("Asset name")
        assert lines[header + 1 : header + 5] == ["Partitions targeted", "In progress", "Succeeded", "Failed"]
        done = lines.index("100% completed", header)
        assert "company_records" in lines[header + 5 : done]
        assert lines[done + 1 : done + 5] == ["173", "0", "173", "0"]
        page.screenshot(path=str(tmp_path / "backfill.png"))
        browser.close()


def backfills_page(stack: devstack.Stack) -> dict[str, dict]:
    """The Backfills page's rows: backfill id -> its status, partitions and runs."""
    rows = graphql(stack, BACKFILLS)["partitionBackfillsOrError"]["results"]
    return {
        row["id"]: {
            "status": row["status"],
            "partitions": row["numPartitions"],
            "launched": row["timestamp"],
            "runs": {r["runId"] for r in row["runs"]},
        }
        for row in rows
    }


def test_retention_deletes_a_finished_backfill_with_its_runs_once_none_of_them_is_kept(stack, all_courts_backfill):
    stack, _, _ = stack
    # Stuttgart, whose documents have not changed, re-parsed by two backfills, one after the other.
    first = launch_backfill(stack, [COURTS[0]])
    finished_backfill(stack, first)
    second = launch_backfill(stack, [COURTS[0]])
    finished_backfill(stack, second)
    before = backfills_page(stack)
    assert {first, second} <= set(before)
    assert all(row["status"] in FINISHED_BACKFILL_STATUSES and row["runs"] for row in before.values())

    with dg.DagsterInstance.from_config(str(stack.dagster_home)) as instance:
        deleted, backfills_deleted, resume_after = [], [], None
        while True:
            done = delete_old_runs(instance, datetime.now(UTC), resume_after=resume_after)
            deleted += done.deleted
            backfills_deleted += done.backfills_deleted
            resume_after = done.resume_after
            if done.reached_end:
                break

    # Every run is old now. The second backfill's run holds Stuttgart's latest materialization; the
    # first's holds nothing the UI reads: it went, and its backfill with it. Every other backfill
    # keeps a run holding some court's latest events, and stays with the runs it keeps.
    assert backfills_deleted == [first]
    assert before[first]["runs"] <= set(deleted)
    after = backfills_page(stack)
    assert first not in after
    assert {backfill_id: row["runs"] for backfill_id, row in after.items()} == {
        backfill_id: row["runs"] - set(deleted) for backfill_id, row in before.items() if backfill_id != first
    }
