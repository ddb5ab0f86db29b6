"""A person's search while a backfill of every court runs, through the real webserver and daemon.

Stored SI documents (the samples cloned with other register numbers, filed at every court as a
register spreads them) were parsed by an older parser version; the code location runs the
current one, and scanned shareholder lists were stored that no reader has read. A deploy of both
readers: the backfill of the shareholder data over every court takes one run per run slot that
backfill runs may take (all slots but HREG_PEOPLE_RUN_SLOTS), which read the scans for a minute or
more; `hreg reparse --backfill` then launches the backfill of the company records, whose runs wait
for those slots. A person's search made while the backfills hold the slots is requested by the
job sensor's next tick and gets the free slot at the run queue's next look, ahead of the backfill
runs still waiting. Every fact asserted is read from what Dagster and the job table recorded (run
records, run events, sensor ticks, processing.processing_jobs), not timed by the test.
"""

from __future__ import annotations

import math
import re
import time
import uuid
from decimal import Decimal

import dagster as dg
import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from bench.common import iter_cloned_documents, load_entities
from orchestration.assembly.dagster_instance import backfill_run_slots, instance_config
from orchestration.assembly.dagster_internals import BACKFILL_ID_TAG
from orchestration.cli import main
from orchestration.db.engine import create_app_engine
from orchestration.definitions import SENSOR_INTERVAL_SECONDS
from orchestration.records.courts import register_courts
from orchestration.records.documents import INLINE_LIMIT_BYTES, DocumentStore
from orchestration.runtime.worker import run_batches
from orchestration.settings import Settings
from orchestration.stacks import devstack
from orchestration.stages.parsing import XmlParsingStage
from orchestration.webserver.backfills import launch_backfill
from process_helpers import wait_until
from sample_register.shareholder_lists import generate_list
from stack_helpers import StackOptions, dagster_stack  # noqa: F401 - dagster_stack is a fixture
from webserver_helpers import LOCATION, backfill_state, graphql

pytestmark = pytest.mark.slow

OLD_VERSION = "0.9.0"
# Companies whose documents the backfill re-parses, spread over the courts as in a register
# (the largest court holds a few percent of them): every backfill run has courts with work.
ENTITIES = 1000
# Scanned lists the shareholder backfill reads (seconds of OCR each): its runs hold their slots
# for a minute or more.
SCANNED_LISTS = 24
SENSOR = "basic_discovery_sensor"
TICKS = """
query Ticks($selector: SensorSelector!, $after: Float, $before: Float) {
  sensorOrError(sensorSelector: $selector) { __typename ... on Sensor { sensorState {
    ticks(limit: 100, afterTimestamp: $after, beforeTimestamp: $before) { timestamp endTimestamp status runIds } } } }
}
"""


def parsed_by_the_old_version_with_unread_scans(settings: Settings) -> None:
    """The companies parsed by the old version, and scanned lists no reader has read."""
    engine = create_app_engine(settings.database_url)
    store = DocumentStore(settings.documents_dir)
    with engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE processing.job_types SET current_version = :v WHERE type = 'xml_parsing'"),
            {"v": OLD_VERSION},
        )
    documents = iter_cloned_documents(ENTITIES, max_bytes=INLINE_LIMIT_BYTES, spread_over_courts=True)
    load_entities(engine, store, documents)
    assert run_batches(engine, XmlParsingStage(store), "old-parser", max_batches=1000).completed == ENTITIES
    store_unread_scans(engine, store)
    engine.dispose()


@pytest.fixture(scope="module")
def stack_options() -> StackOptions:
    """The companies parsed by the old version, then the sample register, webserver and daemon
    with the current code (deploying it writes its version to the job types)."""
    return StackOptions(
        "people-during-backfill", sample_register=True, before_deploy=parsed_by_the_old_version_with_unread_scans
    )


@pytest.fixture(scope="module")
def stack(dagster_stack: devstack.Stack):
    engine = create_app_engine(dagster_stack.app_url)
    yield dagster_stack, engine
    engine.dispose()


def store_unread_scans(engine, store: DocumentStore) -> None:
    """SCANNED_LISTS scanned shareholder lists, of companies spread over the courts, stored unread."""
    with engine.begin() as conn:
        companies = conn.execute(sa.text("SELECT id::text, name FROM content.entities ORDER BY court_code, id")).all()
        for seed, company in enumerate(companies[:: len(companies) // SCANNED_LISTS][:SCANNED_LISTS]):
            scan = generate_list(seed, company_name=company.name, capital=Decimal("25000"), form="scan_pdf")
            store.store(conn, scan.content, kind="shareholder_list", media_type=scan.media_type, entity_id=company.id)


def slot_taken_at(instance: dg.DagsterInstance, run_id: str) -> float:
    """When the run queue gave the run its slot: its RUN_STARTING event (dequeued, launch begun);
    infinity for a run still waiting."""
    starting = instance.all_logs(run_id, of_type=dg.DagsterEventType.RUN_STARTING)
    return starting[0].timestamp if starting else math.inf


def launched_at(instance: dg.DagsterInstance, run_id: str) -> float:
    """When the run's launch returned: the run's process reports it has started (the code
    server answers the launch then); infinity before."""
    engine_events = instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
    started = [
        e.timestamp for e in engine_events if (e.dagster_event.message or "").startswith("Started process for run")
    ]
    return started[0] if started else math.inf


def ticks_of(stack: devstack.Stack, sensor: str, after: float, before: float) -> list[dict]:
    """The sensor's ticks that began between ``after`` and ``before``, oldest first."""
    selector = {"repositoryLocationName": LOCATION, "repositoryName": "__repository__", "sensorName": sensor}
    found = graphql(stack, TICKS, selector=selector, after=after, before=before)["sensorOrError"]
    assert found["__typename"] == "Sensor", found
    return sorted(found["sensorState"]["ticks"], key=lambda tick: tick["timestamp"])


def most_at_once(slots: list[tuple[float, float]]) -> int:
    """The most of these (taken, freed) slot intervals that overlap at any moment."""
    changes = sorted([(taken, 1) for taken, _ in slots] + [(freed, -1) for _, freed in slots])
    held = most = 0
    for _, change in changes:
        held += change
        most = max(most, held)
    return most


def test_a_search_during_a_backfill_of_every_court_gets_the_free_run_slot_at_the_next_tick_and_queue_look(stack):
    stack, engine = stack
    settings = stack.settings
    allowed = backfill_run_slots(settings)
    assert allowed < settings.max_concurrent_runs  # with the defaults: 3 of 4 run slots

    # The shareholder lists' backfill first: its runs hold the slots while they read the scans.
    shareholders_backfill_id = launch_backfill(stack.webserver_url, ["shareholders"], list(register_courts()))

    def runs_of(backfill: str) -> list[str]:
        return [run["status"] for run in backfill_state(stack, backfill)["runs"]]

    wait_until(lambda: runs_of(shareholders_backfill_id), 120, "the shareholder backfill's runs")
    launched = CliRunner().invoke(
        main, ["reparse", "--backfill", "--webserver", stack.webserver_url, "--reason", "new parser version"]
    )
    assert launched.exit_code == 0, launched.output
    backfill_id = re.search(r"launched backfill (\w+) of company_records over 173 courts", launched.output).group(1)

    # The person searches once the first backfill's runs hold every slot backfills may take (a run
    # holds its slot from its launch: STARTING, then STARTED) and the second's runs wait for them.
    def backfill_runs_holding_slots():
        holding = sum(status in ("STARTING", "STARTED") for status in runs_of(shareholders_backfill_id))
        return holding == allowed and "QUEUED" in runs_of(backfill_id)

    wait_until(backfill_runs_holding_slots, 300, f"{allowed} backfill runs to hold their run slots, others waiting")
    with engine.begin() as conn:
        search_id = conn.execute(
            sa.text("INSERT INTO public.searches (user_id, query, mode) VALUES (:u, 'GmbH', 'all') RETURNING id"),
            {"u": str(uuid.uuid4())},
        ).scalar_one()

    def claimed_discovery_job():
        """The search's discovery job once a run has claimed it (so that run has started)."""
        with engine.connect() as conn:
            return conn.execute(
                sa.text("""SELECT priority, worker_id, extract(epoch FROM next_attempt_at)::float AS due_at
                             FROM processing.processing_jobs
                            WHERE search_id = :s AND type = 'basic_discovery' AND worker_id IS NOT NULL"""),
                {"s": search_id},
            ).first()

    job = wait_until(claimed_discovery_job, 420, "a run to claim the search's discovery job")
    with dg.DagsterInstance.from_config(str(stack.dagster_home)) as instance:
        now = time.time()
        person = instance.get_run_record_by_id(job.worker_id)
        person_slot = slot_taken_at(instance, job.worker_id)
        records = [
            record
            for backfill in (backfill_id, shareholders_backfill_id)
            for record in instance.get_run_records(dg.RunsFilter(tags={BACKFILL_ID_TAG: backfill}))
        ]
        # Each backfill run: queued, slot taken, launch returned, slot freed (now for a run still going).
        backfill_runs = [
            (
                r.create_timestamp.timestamp(),
                slot_taken_at(instance, r.dagster_run.run_id),
                launched_at(instance, r.dagster_run.run_id),
                r.end_time or now,
            )
            for r in records
        ]
    ticks = ticks_of(stack, SENSOR, after=job.due_at - 60, before=job.due_at + 120)

    # What was recorded, relative to the job becoming due (shown when an assertion fails).
    print(
        f"person: queued {person.create_timestamp.timestamp() - job.due_at:+.2f} s, slot "
        f"{person_slot - job.due_at:+.2f} s, started {person.start_time - job.due_at:+.2f} s"
    )
    for queued, taken, launched, freed in sorted(backfill_runs):
        print(
            f"backfill run: queued {queued - job.due_at:+.2f} s, slot {taken - job.due_at:+.2f} s, "
            f"launched {launched - job.due_at:+.2f} s, freed {freed - job.due_at:+.2f} s"
        )

    assert job.priority == "interactive"
    assert person.dagster_run.tags["dagster/priority"] == "10"

    # The person's run got its slot while the backfill's runs held all theirs, with backfill runs
    # queued before it still waiting, and it started while backfill runs were in progress: it
    # did not wait behind them.
    queued_at = person.create_timestamp.timestamp()
    assert sum(taken <= person_slot < freed for _, taken, _, freed in backfill_runs) == allowed
    assert any(queued < queued_at and person_slot < taken for queued, taken, _, _ in backfill_runs), (
        "no backfill run queued before the person's run was still waiting when it got its slot"
    )
    assert any(taken <= person.start_time < freed for _, taken, _, freed in backfill_runs)

    # Within one sensor interval of the job becoming due. The sensor: the run was requested by the
    # first tick that began once the job was due (next_attempt_at, what processing.due_jobs
    # compares), or by the tick running then (a tick reads the queue after it begins), so it was
    # queued within the sensor's interval as the daemon kept it (the recorded gap between that
    # tick and the one before: the sensor daemon's loop and a busy machine stretch the nominal
    # interval) plus that tick's evaluation. The run queue: it gave the run its slot at its
    # next look, within one dequeue interval (dagster.yaml) and the look's own queries, which on
    # a busy machine take seconds: allowed up to one more sensor interval, the unit the wait is
    # measured in. A look waits for the launches it began (each returns once the run's process
    # has loaded the code: seconds, a minute and more on a busy 2-core machine), so a look that
    # was launching backfill runs when the person's run was queued delays it by what those
    # launches had left; the bound starts from their end then.
    requesting = next(tick for tick in ticks if job.worker_id in tick["runIds"])
    passed_over = [tick for tick in ticks if job.due_at <= tick["timestamp"] < requesting["timestamp"]]
    assert not passed_over, "a tick that began after the job became due did not request its run"
    earlier = [tick for tick in ticks if tick["timestamp"] < requesting["timestamp"]]
    interval = requesting["timestamp"] - earlier[-1]["timestamp"]
    evaluation = requesting["endTimestamp"] - requesting["timestamp"]
    assert queued_at - job.due_at <= interval + evaluation
    dequeue_interval = instance_config(stack.dagster_url, settings)["run_queue"]["dequeue_interval_seconds"]
    launches_left = max(
        (launched for _, taken, launched, _ in backfill_runs if taken < queued_at < launched), default=queued_at
    )
    queue_bound = max(queued_at, launches_left) + dequeue_interval + interval
    print(
        f"from due: tick {requesting['timestamp'] - job.due_at:+.2f} s (interval {interval:.2f} s, nominal "
        f"{SENSOR_INTERVAL_SECONDS['basic_discovery']} s), queued {queued_at - job.due_at:+.2f} s, backfill "
        f"launches in flight until {launches_left - job.due_at:+.2f} s, slot {person_slot - job.due_at:+.2f} s "
        f"(bound {queue_bound - job.due_at:+.2f} s), started {person.start_time - job.due_at:+.2f} s"
    )
    assert person_slot <= queue_bound

    # The backfill's runs never held every run slot: at most `allowed` at once, and they filled those.
    assert most_at_once([(taken, freed) for _, taken, _, freed in backfill_runs if taken < math.inf]) == allowed
