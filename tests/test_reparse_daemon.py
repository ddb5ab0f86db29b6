"""A parser-change backfill launched through the webserver's GraphQL API, as the UI's Materialize
button launches it, and run by the real dagster-daemon.

The stored documents were parsed by an older parser version; the code location runs the
current one. The asset shows as unsynced (code version changed), and materializing it queues a
parser_change re-parse of every stored document, linked to the job it redoes, and works them.
"""

from __future__ import annotations


import dagster as dg
import httpx
import pytest
import sqlalchemy as sa

from database_helpers import clear_process_caches, fresh_database
from orchestration import devstack
from orchestration.db.engine import create_app_engine
from orchestration.documents import DocumentStore
from orchestration.settings import Settings
from orchestration.stages.parsing import XmlParsingStage
from orchestration.worker import run_batch
from orchestration.xjustiz import PARSER_VERSION
from pipeline_helpers import add_entity_with_si, job_rows, sample_si_files
from process_helpers import free_port, wait_until

pytestmark = pytest.mark.slow

OLD_VERSION = "0.9.0"
LOCATION = "handelsregister"
REPOSITORY = "__repository__"
COMPANY_RECORDS_PATH = ["company_records"]

ASSET_NODE = """
query AssetNode($path: [String!]!) {
  assetNodes(assetKeys: [{path: $path}]) {
    jobNames
    staleStatus
    staleCauses { category reason }
    assetChecksOrError { ... on AssetChecks { checks { name jobNames } } }
  }
}
"""
LAUNCH = """
mutation Launch($executionParams: ExecutionParams!) {
  launchPipelineExecution(executionParams: $executionParams) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on InvalidSubsetError { message }
    ... on RunConfigValidationInvalid { errors { message } }
  }
}
"""
LOCATION_STATUS = """
query { workspaceOrError { ... on Workspace { locationEntries { name loadStatus
  locationOrLoadError { __typename ... on PythonError { message } } } } } }
"""
RUN_STATUS = "query Run($runId: ID!) { runOrError(runId: $runId) { ... on Run { status } } }"


def graphql(stack: devstack.Stack, query: str, **variables) -> dict:
    response = httpx.post(f"{stack.webserver_url}/graphql", json={"query": query, "variables": variables}, timeout=60)
    assert response.status_code == 200, response.text
    body = response.json()
    assert "errors" not in body, body["errors"]
    return body["data"]


@pytest.fixture
def stack_with_old_parses(server_url, template_url, tmp_path, samples_dir):
    """Entities whose documents the old parser version parsed, then the webserver and daemon."""
    with fresh_database(server_url) as url, pytest.MonkeyPatch.context() as mp:
        mp.setenv("HREG_DATABASE_URL", url.render_as_string(hide_password=False))
        mp.setenv("HREG_DATA_DIR", str(tmp_path))
        mp.setenv("HREG_WEBSERVER_PORT", str(free_port()))
        clear_process_caches()
        settings = Settings()
        engine = create_app_engine(url)
        store = DocumentStore(settings.documents_dir)
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE processing.job_types SET current_version = :v WHERE type = 'xml_parsing'"),
                         {"v": OLD_VERSION})
        for i, path in enumerate(sample_si_files(samples_dir)[:8]):
            add_entity_with_si(engine, store, path.read_bytes(), number=str(600 + i))
        assert run_batch(engine, XmlParsingStage(store), "old-parser").completed == 8
        # Deploying the current code: the migration writes its parser version to the job types.
        stack = devstack.prepare(settings)
        log_dir = tmp_path / "logs"
        try:
            devstack.start_dagster(stack, log_dir=log_dir)
            yield stack, engine
        finally:
            devstack.stop(stack)
            engine.dispose()
            for log_file in sorted(log_dir.glob("*.log")):
                print(f"--- {log_file.name} (tail)\n{log_file.read_text(errors='replace')[-3000:]}")
        clear_process_caches()


def revision_count(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT count(*) FROM content.entity_revisions")).scalar_one()


def wait_for_code_location(stack: devstack.Stack) -> None:
    """The webserver answers before it has loaded the code location."""

    def loaded():
        entries = graphql(stack, LOCATION_STATUS)["workspaceOrError"]["locationEntries"]
        entry = next(e for e in entries if e["name"] == LOCATION)
        assert entry["locationOrLoadError"] is None or entry["locationOrLoadError"]["__typename"] != "PythonError", entry
        return entry["loadStatus"] == "LOADED" and entry["locationOrLoadError"] is not None

    wait_until(loaded, 120, f"code location {LOCATION} to load")


def test_a_backfill_launched_like_the_materialize_button_reparses_every_stored_document(stack_with_old_parses):
    stack, engine = stack_with_old_parses
    wait_for_code_location(stack)
    old_jobs = {job.entity_id: job.id for job in job_rows(engine, "xml_parsing")}
    revisions_before = revision_count(engine)
    # The materialization the old parser's runs left in Dagster's storage.
    with dg.DagsterInstance.from_config(str(stack.dagster_home)) as instance:
        instance.report_runless_asset_event(dg.AssetMaterialization(
            COMPANY_RECORDS_PATH, description=f"parsed by parser {OLD_VERSION}",
            tags={"dagster/code_version": OLD_VERSION},
        ))

    (node,) = graphql(stack, ASSET_NODE, path=COMPANY_RECORDS_PATH)["assetNodes"]
    assert node["staleStatus"] == "STALE"
    assert {"category": "CODE", "reason": "has a new code version"} in node["staleCauses"]

    # The parameters the UI's Materialize button sends: the first job holding the asset, the
    # asset, its checks, and no run config (the config's defaults).
    job_name = node["jobNames"][0]
    launched = graphql(stack, LAUNCH, executionParams={
        "mode": "default",
        "runConfigData": "{}",
        "executionMetadata": {"tags": []},
        "selector": {
            "repositoryLocationName": LOCATION,
            "repositoryName": REPOSITORY,
            "pipelineName": job_name,
            "assetSelection": [{"path": COMPANY_RECORDS_PATH}],
            "assetCheckSelection": [
                {"name": check["name"], "assetKey": {"path": COMPANY_RECORDS_PATH}}
                for check in node["assetChecksOrError"]["checks"] if job_name in check["jobNames"]
            ],
        },
    })["launchPipelineExecution"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    run_id = launched["run"]["runId"]

    def finished_status():
        status = graphql(stack, RUN_STATUS, runId=run_id)["runOrError"]["status"]
        return status if status in ("SUCCESS", "FAILURE", "CANCELED") else None

    assert wait_until(finished_status, 150, f"run {run_id} of {job_name} to finish") == "SUCCESS"

    def completed_reparses():
        reparses = [job for job in job_rows(engine, "xml_parsing") if job.trigger == "parser_change"]
        return reparses if len(reparses) == 8 and all(job.status == "completed" for job in reparses) else None

    reparses = wait_until(completed_reparses, 60, "the parser_change jobs to complete")
    assert {job.parser_version for job in reparses} == {PARSER_VERSION}
    assert {job.entity_id: job.previous_job_id for job in reparses} == old_jobs
    assert revision_count(engine) == revisions_before  # the output did not change
    (node,) = graphql(stack, ASSET_NODE, path=COMPANY_RECORDS_PATH)["assetNodes"]
    assert node["staleStatus"] == "FRESH"
