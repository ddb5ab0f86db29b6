"""Retention of Dagster's storage against a real instance on PostgreSQL, asked through the real
dagster-webserver's GraphQL API: old finished runs are deleted with their events, and the runs the
UI still reads stay, so that staleness per court, the partitions page, each court's latest
materialization and each check's latest execution are the same afterwards; the asset check
executions of the runs deleted go with them.

The instance holds runs of company_records over four courts, executed in process on the stack's
instance: Munich parsed by an old parser version and then by the current one, Berlin by the old
one only (so Berlin is STALE), Stuttgart twice by the current one, a court run first as part of
a backfill that is not finished (no daemon runs it) and then on its own, and Hamburg, whose one
company's document is no SI document, three times: each run fails. One run is queued and never starts. "Old" is a moment the test names, and HREG_DAGSTER_RETENTION_DAYS=0 for the sensor.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import UTC, datetime

import dagster as dg
import pytest
import sqlalchemy as sa

from assets.court_reporting import report_documents
from assets.keys import RAW_SI_DOCUMENTS
from database_helpers import fresh_database
from orchestration.assembly.dagster_internals import (
    ASSET_PARTITION_RANGE_END_TAG,
    ASSET_PARTITION_RANGE_START_TAG,
    BACKFILL_ID_TAG,
    InstigatorType,
    TickStatus,
)
from orchestration.assembly.dagster_retention import TRANSITORY_EVENT_TYPES, delete_old_runs
from orchestration.db.engine import create_app_engine
from orchestration.definitions import build_definitions, build_resources
from orchestration.jobs.checks import COMPANY_RECORD_CHECKS
from orchestration.jobs.specs import JOB_TYPES
from orchestration.records.court_state import SI_RECORDS
from orchestration.records.documents import DocumentStore
from orchestration.settings import Settings
from orchestration.stacks import devstack
from orchestration.webserver.backfills import launch_backfill
from pipeline_helpers import add_entity_with_si, run_court_partitions, sample_si_files
from process_helpers import free_port
from webserver_helpers import LOCATION, graphql, wait_for_code_location

pytestmark = pytest.mark.slow

OLD_VERSION = "0.9.0"
COMPANY_RECORDS_PATH = ["company_records"]
MUNICH, BERLIN, STUTTGART, BACKFILLED, HAMBURG = "D2601", "F1103", "B8534", "Y1308", "K1101"
COURTS = [MUNICH, BERLIN, STUTTGART, BACKFILLED, HAMBURG]
# Two courts next to each other in the partitions, which a backfill's run works together.
HEILBRONN, ULM = "B8535", "B8536"
# A court with a company, parsed twice, whose documents are reported again unchanged.
INPUT_COURT = "B8537"

COURT_VIEW = """
query Courts($path: [String!]!, $partitions: [String!]) {
  assetNodes(assetKeys: [{path: $path}]) {
    staleStatusByPartition(partitions: $partitions)
    staleCausesByPartition(partitions: $partitions) { category reason }
    partitionStats { numMaterialized numFailed numMaterializing }
    assetChecksOrError { ... on AssetChecks { checks { name executionForLatestMaterialization { runId status } } } }
  }
  assetOrError(assetKey: {path: $path}) { ... on Asset {
    assetMaterializations(partitions: $partitions) { partition runId }
  } }
}
"""
RUNS = "query { runsOrError { ... on Runs { results { runId status } } } }"
RUN = "query Run($runId: ID!) { runOrError(runId: $runId) { __typename } }"
RUN_PAGE = """
query RunPage($runId: ID!) { runOrError(runId: $runId) { ... on Run {
  status startTime endTime
  stepStats { stepKey status startTime endTime materializations { partition } }
} } }
"""
LAUNCH_RUN = """
mutation Launch($executionParams: ExecutionParams!) {
  launchRun(executionParams: $executionParams) {
    __typename
    ... on LaunchRunSuccess { run { runId status } }
    ... on PythonError { message }
  }
}
"""


@pytest.fixture(scope="module")
def stack(server_url, template_url, tmp_path_factory):
    """A migrated database, Dagster's instance and the webserver, without the daemon (which would
    start the queued run and finish the backfill)."""
    data_dir = tmp_path_factory.mktemp("retention")
    with fresh_database(server_url) as url, pytest.MonkeyPatch.context() as mp:
        mp.setenv("HREG_DATABASE_URL", url.render_as_string(hide_password=False))
        mp.setenv("HREG_DATA_DIR", str(data_dir))
        mp.setenv("HREG_WEBSERVER_PORT", str(free_port()))
        stack = devstack.prepare(Settings())
        log_dir = data_dir / "logs"
        try:
            devstack.start_dagster(stack, daemon=False, log_dir=log_dir)
            wait_for_code_location(stack)
            with dg.DagsterInstance.from_config(str(stack.dagster_home)) as instance:
                yield stack, instance
        finally:
            devstack.stop(stack)
            for log_file in sorted(log_dir.glob("*.log")):
                print(f"--- {log_file.name} (tail)\n{log_file.read_text(errors='replace')[-3000:]}")


def run_court(
    instance: dg.DagsterInstance,
    court: str,
    *,
    to: str | None = None,
    version: str | None = None,
    success: bool = True,
    tags: dict[str, str] | None = None,
) -> str:
    """A run of company_records over ``court`` (to the court ``to``, as a backfill's run works a
    range), by the parser ``version`` (default this code's)."""
    job_types = JOB_TYPES.deploying(JOB_TYPES.xml_parsing, version) if version else JOB_TYPES
    partitions = (
        {"tags": {ASSET_PARTITION_RANGE_START_TAG: court, ASSET_PARTITION_RANGE_END_TAG: to, **(tags or {})}}
        if to
        else {"partition_key": court, "tags": tags}
    )
    result = run_court_partitions(build_definitions(job_types=job_types), "company_records", instance, **partitions)
    assert result.success is success
    return result.run_id


@pytest.fixture(scope="module")
def runs(stack) -> dict[str, str]:
    stack, instance = stack
    runs = {
        "old_munich": run_court(instance, MUNICH, version=OLD_VERSION),
        "old_berlin": run_court(instance, BERLIN, version=OLD_VERSION),
        "munich": run_court(instance, MUNICH),
        "first_stuttgart": run_court(instance, STUTTGART),
        "stuttgart": run_court(instance, STUTTGART),
    }
    backfill_id = launch_backfill(stack.webserver_url, COMPANY_RECORDS_PATH, [BACKFILLED])
    engine = create_app_engine(stack.app_url)
    try:
        add_entity_with_si(
            engine, DocumentStore(stack.settings.documents_dir), b"<invoice/>", number="1", court_code=HAMBURG
        )
    finally:
        engine.dispose()
    runs["first_hamburg"] = run_court(instance, HAMBURG, success=False)
    runs["second_hamburg"] = run_court(instance, HAMBURG, success=False)
    runs["hamburg"] = run_court(instance, HAMBURG, success=False)
    runs["of_backfill"] = run_court(instance, BACKFILLED, tags={BACKFILL_ID_TAG: backfill_id})
    runs["backfilled"] = run_court(instance, BACKFILLED)
    launched = graphql(
        stack,
        LAUNCH_RUN,
        executionParams={
            "selector": {
                "repositoryLocationName": LOCATION,
                "repositoryName": "__repository__",
                "jobName": "register_announcements_job",
            },
            "runConfigData": {},
        },
    )["launchRun"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    runs["queued"] = launched["run"]["runId"]
    return runs


def court_view(stack: devstack.Stack, courts: list[str] = COURTS) -> dict:
    """What the asset's pages show of ``courts``: stale status and causes, partition counts, the
    run of each court's latest materialization, and each check's latest execution."""
    data = graphql(stack, COURT_VIEW, path=COMPANY_RECORDS_PATH, partitions=courts)
    (node,) = data["assetNodes"]
    latest = {court: runs[0] for court, runs in materializing_runs(data).items()}
    return {
        "stale": dict(zip(courts, node["staleStatusByPartition"], strict=True)),
        "causes": dict(zip(courts, node["staleCausesByPartition"], strict=True)),
        "partitions": node["partitionStats"],
        "latest_run": latest,
        "checks": {
            check["name"]: check["executionForLatestMaterialization"] for check in node["assetChecksOrError"]["checks"]
        },
    }


def materializing_runs(court_view_data: dict) -> dict[str, list[str]]:
    """Court -> the runs of the materializations the asset's page lists for it, the newest first."""
    runs: dict[str, list[str]] = {}
    for materialization in court_view_data["assetOrError"]["assetMaterializations"]:  # newest first
        runs.setdefault(materialization["partition"], []).append(materialization["runId"])
    return runs


def tags_of_events(stack: devstack.Stack, storage_ids: list[int]) -> int:
    """How many rows of Dagster's asset_event_tags table belong to the events ``storage_ids``."""
    engine = sa.create_engine(stack.dagster_url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            query = sa.text("SELECT count(*) FROM asset_event_tags WHERE event_id = ANY(:ids)")
            return conn.execute(query, {"ids": storage_ids}).scalar_one()
    finally:
        engine.dispose()


def check_executions_by_run(stack: devstack.Stack) -> dict[str, int]:
    """The rows of Dagster's asset_check_executions table, counted by run."""
    engine = sa.create_engine(stack.dagster_url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT run_id, count(*) FROM asset_check_executions GROUP BY run_id"))
            return {run_id: count for run_id, count in rows}
    finally:
        engine.dispose()


def runs_shown(stack: devstack.Stack) -> dict[str, str]:
    return {run["runId"]: run["status"] for run in graphql(stack, RUNS)["runsOrError"]["results"]}


def run_page(stack: devstack.Stack, run_id: str) -> dict:
    """What a run's page shows of it: its status and times, and each step's."""
    return graphql(stack, RUN_PAGE, runId=run_id)["runOrError"]


def event_kinds(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    """The kinds of a run's events in order: a Dagster event's type, or a log message's level."""
    entries = [record.event_log_entry for record in instance.get_records_for_run(run_id).records]
    return [
        entry.dagster_event_type.value if entry.dagster_event_type else logging.getLevelName(entry.level)
        for entry in entries
    ]


def retention_sensor_tick(instance: dg.DagsterInstance, settings: Settings) -> str:
    """One tick of the code location's retention sensor, configured by ``settings``."""
    sensor = build_definitions(settings).get_sensor_def("dagster_retention_sensor")
    with dg.build_sensor_context(instance=instance, resources=build_resources(settings)) as context:
        (skip,) = [sensor(context)]
    return skip.skip_message


def test_old_runs_nothing_reads_are_deleted_with_their_events_and_the_ui_shows_the_same(stack, runs):
    stack, instance = stack
    before = court_view(stack)
    # What the courts look like, read by eye from the runs above: Berlin's only materialization is
    # by the old parser, every other court is current; four courts materialized, none failed.
    assert before["stale"] == {
        MUNICH: "FRESH",
        BERLIN: "STALE",
        STUTTGART: "FRESH",
        BACKFILLED: "FRESH",
        HAMBURG: "MISSING",
    }
    assert before["causes"][BERLIN] == [{"category": "CODE", "reason": "has a new code version"}]
    assert before["partitions"] == {"numMaterialized": 4, "numFailed": 1, "numMaterializing": 0}
    assert before["latest_run"] == {
        MUNICH: runs["munich"],
        BERLIN: runs["old_berlin"],
        STUTTGART: runs["stuttgart"],
        BACKFILLED: runs["backfilled"],
    }
    shown = runs_shown(stack)
    assert set(shown) == set(runs.values())
    # company_records has two checks, over the asset as a whole: each run that started planned
    # both, each that succeeded evaluated both, and the last one's pass is the one the UI shows.
    assert before["checks"] == {
        check.name: {"runId": runs["backfilled"], "status": "SUCCEEDED"} for check in COMPANY_RECORD_CHECKS
    }
    checked = check_executions_by_run(stack)
    assert checked == {run_id: 2 for name, run_id in runs.items() if name != "queued"}
    assert (shown[runs["queued"]], shown[runs["hamburg"]]) == ("QUEUED", "FAILURE")
    pages = {name: run_page(stack, runs[name]) for name in ("old_berlin", "first_hamburg", "hamburg", "of_backfill")}
    kinds = {name: event_kinds(instance, runs[name]) for name in pages}

    # With the default retention every run is young: the sensor deletes none.
    assert "deleted 0 runs" in retention_sensor_tick(instance, Settings())
    assert set(runs_shown(stack)) == set(runs.values())

    # The runs created before Munich's current run are old, looked at one at a time: Munich's old
    # run goes, Berlin's stays (its only materialization), and no later run is looked at.
    created = {r.dagster_run.run_id: r.create_timestamp for r in instance.get_run_records()}
    passes, deleted, kept = 0, [], []
    resume_after = None
    while True:
        done = delete_old_runs(
            instance, created[runs["munich"]], resume_after=resume_after, batch_size=1, max_batches=1
        )
        passes, deleted = passes + 1, deleted + done.deleted
        kept += [run for kept_runs in done.kept.values() for run in kept_runs]
        resume_after = done.resume_after
        if done.reached_end:
            break
    assert deleted == [runs["old_munich"]]
    assert kept == [runs["old_berlin"]]
    assert passes == 3  # one run a pass, and a last pass that finds none left

    # HREG_DAGSTER_RETENTION_DAYS=0: every finished run is old. Stuttgart's first run goes, and
    # Hamburg's second failure, which the third repeats; the run of the unfinished backfill, though
    # superseded, stays with the backfill, Hamburg's last failure stays while no run has
    # materialized Hamburg since, and its first run stays with the first report of its documents.
    message = retention_sensor_tick(instance, Settings(dagster_retention_days=0))
    assert message.startswith("deleted 2 runs;"), message
    gone = {runs["old_munich"], runs["first_stuttgart"], runs["second_hamburg"]}
    assert runs_shown(stack) == {run_id: status for run_id, status in shown.items() if run_id not in gone}
    for run_id in gone:
        assert graphql(stack, RUN, runId=run_id)["runOrError"]["__typename"] == "RunNotFoundError"
        assert instance.get_records_for_run(run_id).records == []
    assert instance.get_records_for_run(runs["of_backfill"]).records  # kept with its events
    # The check executions of the runs deleted went with them (Dagster's delete_run leaves them);
    # every kept run's stayed.
    assert check_executions_by_run(stack) == {run_id: n for run_id, n in checked.items() if run_id not in gone}

    # The old runs kept for what the UI reads keep it, and their pages show the same; what told how
    # they went while they ran goes (as Dagster's database-tuning guide has it go from old runs).
    # The run of the unfinished backfill keeps every event.
    assert {name: run_page(stack, runs[name]) for name in pages} == pages
    transitory = {event_type.value for event_type in TRANSITORY_EVENT_TYPES} | {"DEBUG", "INFO", "WARNING"}
    for name in ("old_berlin", "first_hamburg", "hamburg"):
        assert set(kinds[name]) & transitory, name  # the guard below must have something to guard
        assert event_kinds(instance, runs[name]) == [kind for kind in kinds[name] if kind not in transitory], name
    assert event_kinds(instance, runs["of_backfill"]) == kinds["of_backfill"]

    assert court_view(stack) == before


def test_dagster_prunes_skipped_ticks_after_a_day_and_other_ticks_with_the_runs(stack):
    _, instance = stack
    for instigator in (InstigatorType.SENSOR, InstigatorType.SCHEDULE, InstigatorType.AUTO_MATERIALIZE):
        assert instance.get_tick_retention_settings(instigator) == {
            TickStatus.SKIPPED: 1,
            TickStatus.STARTED: 30,
            TickStatus.SUCCESS: 30,
            TickStatus.FAILURE: 30,
        }


def test_an_old_run_kept_for_one_court_keeps_only_that_court_of_its_materializations(stack):
    stack, instance = stack
    # A backfill's run works Heilbronn and Ulm; a later run materializes Heilbronn again.
    pair = run_court(instance, HEILBRONN, to=ULM)
    again = run_court(instance, HEILBRONN)
    courts = [HEILBRONN, ULM]
    before = court_view(stack, courts)
    assert before["stale"] == {HEILBRONN: "FRESH", ULM: "FRESH"}
    assert before["latest_run"] == {HEILBRONN: again, ULM: pair}
    listed = graphql(stack, COURT_VIEW, path=COMPANY_RECORDS_PATH, partitions=courts)
    assert materializing_runs(listed) == {HEILBRONN: [again, pair], ULM: [pair]}
    replaced = [
        record.storage_id
        for record in instance.get_records_for_run(pair, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
        if record.event_log_entry.get_dagster_event().partition == HEILBRONN
    ]
    assert len(replaced) == 1 and tags_of_events(stack, replaced)  # the guard below guards something

    resume_after, kept = None, []
    while True:
        done = delete_old_runs(instance, datetime.now(UTC), resume_after=resume_after)
        kept += done.kept["holding the latest event of an asset partition"]
        resume_after = done.resume_after
        if done.reached_end:
            break

    # The backfill's run stays for Ulm, which nothing has materialized since; its materialization
    # of Heilbronn, which the later run replaced, goes with its tags, as it would have with the run.
    assert pair in kept and again in kept
    after = graphql(stack, COURT_VIEW, path=COMPANY_RECORDS_PATH, partitions=courts)
    assert materializing_runs(after) == {HEILBRONN: [again], ULM: [pair]}
    assert tags_of_events(stack, replaced) == 0
    page = run_page(stack, pair)
    assert [m["partition"] for step in page["stepStats"] for m in step["materializations"]] == [ULM]
    assert court_view(stack, courts) == before


def test_an_old_run_whose_documents_event_a_court_still_reads_as_its_input_keeps_it_so_the_court_stays_fresh(
    stack, samples_dir
):
    stack, instance = stack
    engine = create_app_engine(stack.app_url)
    try:
        company = add_entity_with_si(
            engine,
            DocumentStore(stack.settings.documents_dir),
            sample_si_files(samples_dir)[0].read_bytes(),
            number="720",
            court_code=INPUT_COURT,
        )
        # The first run parses the court's company and reports its documents, which its
        # materialization names as input; the second finds nothing new and names the same event.
        first = run_court(instance, INPUT_COURT)
        second = run_court(instance, INPUT_COURT)
        # A download run that finds the court's documents unchanged reports them again: the same
        # fingerprint, a newer event.
        (unchanged,) = report_documents(
            engine, RAW_SI_DOCUMENTS, SI_RECORDS.document_fingerprints, [company], {"run_si_downloaded": 1}
        )
    finally:
        engine.dispose()
    instance.report_runless_asset_event(unchanged)
    (documents_event,) = [
        record
        for record in instance.get_records_for_run(first, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
        if record.event_log_entry.get_dagster_event().asset_key == RAW_SI_DOCUMENTS
    ]
    before = court_view(stack, [INPUT_COURT])
    assert before["stale"] == {INPUT_COURT: "FRESH"}
    assert before["latest_run"] == {INPUT_COURT: second}

    resume_after, kept = None, defaultdict(list)
    while True:
        done = delete_old_runs(instance, datetime.now(UTC), resume_after=resume_after)
        for reason, kept_runs in done.kept.items():
            kept[reason] += kept_runs
        resume_after = done.resume_after
        if done.reached_end:
            break

    # The first run stays for the documents event the court's latest materialization reads, and
    # keeps it; its own materialization of the court, which the second replaced, goes.
    assert first in kept["holding the input of an asset partition's latest materialization"]
    assert second in kept["holding the latest event of an asset partition"]
    assert [
        (record.storage_id, record.event_log_entry.get_dagster_event().asset_key)
        for record in instance.get_records_for_run(first, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION).records
    ] == [(documents_event.storage_id, RAW_SI_DOCUMENTS)]
    assert court_view(stack, [INPUT_COURT]) == before
