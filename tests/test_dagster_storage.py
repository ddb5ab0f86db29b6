"""Dagster's storage as the stack configures it: tables made once, the catalog asked once, the space
of deleted runs reused and its tables packed; and its run queue, set through Dagster's public
instance settings.

Every sensor tick opens the instance anew in the code server, and before many calls Dagster's
storages ask the catalog whether a table or column exists; on a 2-core machine those questions
took more of the database than the backfill's own events.
"""

import threading
import time
import uuid
from datetime import datetime
from zoneinfo import ZoneInfo

import dagster as dg
import pytest
import sqlalchemy as sa

from orchestration.assembly.dagster_instance import DAGSTER_PACK_SQL, ensure_storage, write_instance_config
from orchestration.db.table_packing import REWRITE_MIN_FREE_SHARE, pack_tables
from orchestration.settings import Settings
from resources.dagster_retention import DagsterRetentionResource
from sensors.storage_maintenance import (
    TIMEZONE,
    dagster_storage_maintenance_job,
    dagster_storage_maintenance_schedule,
)

# Five run slots, two of them the people's: backfill runs may take three at once.
SETTINGS = Settings(max_concurrent_runs=5, people_run_slots=2)


@pytest.fixture
def storage_url(server_url):
    url = server_url.set(database=f"hreg_storage_{uuid.uuid4().hex[:8]}")
    ensure_storage(url)
    yield url
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{url.database}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture
def instance(storage_url, tmp_path):
    write_instance_config(tmp_path, storage_url, SETTINGS)
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        yield instance


def catalog_questions(instance: dg.DagsterInstance) -> list[str]:
    """The statements the instance's storages send to the catalog from now on."""
    asked: list[str] = []
    for storage in (instance.run_storage, instance.event_log_storage, instance.schedule_storage):

        def record(conn, cursor, statement, parameters, context, executemany):
            if "pg_catalog" in statement:
                asked.append(statement)

        sa.event.listen(storage._engine, "before_cursor_execute", record)
    return asked


@dg.asset
def court_figures():
    return 1


def test_a_run_and_the_calls_of_sensor_ticks_ask_the_catalog_only_once_each(instance):
    asked = catalog_questions(instance)

    def tick_and_run():
        # What the sensor daemon and a run do over and over: list runs, read and write sensor
        # state, store a run's events (an asset's among them).
        instance.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.QUEUED]))
        instance.get_runs_count(dg.RunsFilter(job_name="xml_parsing_job"))
        instance.all_instigator_state()
        assert dg.materialize([court_figures], instance=instance).success

    tick_and_run()
    first = len(asked)
    for _ in range(3):
        tick_and_run()
    assert first > 0, "the first calls ask the catalog about the schema"
    assert len(asked) == first, f"the same calls asked again: {asked[first:][:3]}"
    # The instance, which may not create tables, stored everything in those ensure_storage made.
    assert instance.get_runs_count() == 4
    assert instance.get_latest_materialization_event(dg.AssetKey("court_figures")) is not None


def test_a_new_deployment_shows_no_newsletter_modal(instance):
    # The webserver shows Dagster's "Join the Dagster community" modal while shouldShowNux is
    # true: nux enabled on the instance, and no one has dismissed it in this DAGSTER_HOME yet.
    assert instance.nux_enabled is False


# A table's autovacuum scale factor and its TOAST table's, by table name.
SCALE_FACTORS = sa.text("""
    SELECT c.relname,
           (SELECT option FROM unnest(c.reloptions) option WHERE option LIKE 'autovacuum_vacuum_scale_factor=%'),
           (SELECT option FROM unnest(t.reloptions) option WHERE option LIKE 'autovacuum_vacuum_scale_factor=%')
      FROM pg_class c LEFT JOIN pg_class t ON t.oid = c.reltoastrelid
     WHERE c.relname = ANY(:tables)
""")


def test_the_tables_retention_deletes_from_are_vacuumed_after_a_day_of_deletions_not_six(storage_url):
    # Retention deletes a thirtieth of these tables a day; at autovacuum's default (a fifth dead)
    # their files would grow by six days of deletions before the space is reused.
    tables = ["event_logs", "asset_event_tags", "asset_check_executions", "runs", "run_tags", "job_ticks"]
    # Again on a database that has them, as every start of the stack does.
    ensure_storage(storage_url)
    engine = sa.create_engine(storage_url)
    with engine.connect() as conn:
        found = {name: (own, toast) for name, own, toast in conn.execute(SCALE_FACTORS, {"tables": tables})}
    engine.dispose()
    setting = "autovacuum_vacuum_scale_factor=0.02"
    assert found == {
        "event_logs": (setting, setting),
        "asset_event_tags": (setting, None),
        "asset_check_executions": (setting, setting),
        "runs": (setting, setting),
        "run_tags": (setting, None),
        "job_ticks": (setting, setting),
    }


def test_the_run_queue_starts_five_runs_at_once_three_of_a_backfill_looking_every_second(instance):
    coordinator = instance.run_coordinator
    assert isinstance(coordinator, dg.QueuedRunCoordinator)
    queue = instance.get_concurrency_config().run_queue_config
    assert queue.max_concurrent_runs == 5
    assert [(limit["key"], limit["limit"]) for limit in queue.tag_concurrency_limits] == [("dagster/backfill", 3)]
    # Queued runs are looked for every second, and the runs of one look launched side by side.
    assert (coordinator.dequeue_interval_seconds, coordinator.dequeue_use_threads) == (1, True)
    assert coordinator.dequeue_num_workers == 5


# The weekly packing of the tables retention deletes from: their files and indexes shrink back to
# what their rows take, what they hold stays readable, and an invalid copy an interrupted rebuild
# left goes. A table too large to rewrite, or whose lock is not granted, has its indexes rebuilt.
# On the other nights only a table whose rows leave much of it empty is rewritten.
ASSET = dg.AssetKey("court_figures")
EVENTS = 3000
KEPT_EVERY = 10  # retention keeps a few old runs among those it deletes, so pages stay partly empty
LOCK_TIMEOUT_S = 0.5
SIZES = sa.text("""
    SELECT pg_relation_size('event_logs'), pg_indexes_size('event_logs'), pg_total_relation_size('event_logs')
""")


def maintenance(rewrite_max_mb: float) -> dict:
    return {"dagster_retention": DagsterRetentionResource(retention_days=30, rewrite_max_mb=rewrite_max_mb)}


def a_night(every_table: bool) -> dict:
    return {"ops": {"pack_dagster_tables": {"config": {"every_table": every_table}}}}


@pytest.fixture
def month_of_deletions(instance, storage_url):
    """The engine of a storage whose event log lost most of its events, as a month of retention
    leaves it: a few kept on every page, the rest vacuumed."""
    for number in range(EVENTS):
        instance.report_runless_asset_event(dg.AssetMaterialization(ASSET, metadata={"number": number}))
    engine = sa.create_engine(storage_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(sa.text("DELETE FROM event_logs WHERE id % :every <> 0"), {"every": KEPT_EVERY})
        conn.execute(sa.text("VACUUM event_logs"))
    yield engine
    engine.dispose()


def sizes(engine: sa.Engine) -> tuple[int, int, int]:
    """The event log's file, its indexes, and all of it on disk."""
    with engine.connect() as conn:
        return conn.execute(SIZES).one()


def test_the_weekly_packing_gives_back_the_space_of_deleted_events_keeps_every_event_and_drops_a_broken_copy(
    instance, month_of_deletions
):
    engine = month_of_deletions
    # What a rebuild interrupted by a restart leaves: an invalid copy of an index.
    with engine.connect() as conn, pytest.raises(sa.exc.IntegrityError):
        conn.execute(sa.text("CREATE UNIQUE INDEX CONCURRENTLY idx_events_by_asset_ccnew ON event_logs (asset_key)"))
    kept = instance.fetch_materializations(ASSET, limit=EVENTS).records
    _file, _indexes, before = sizes(engine)

    result = dagster_storage_maintenance_job.execute_in_process(instance=instance, resources=maintenance(256))

    assert result.success
    _file, _indexes, after = sizes(engine)
    # A tenth of the rows, packed: at most a third of the space (the leftover is part of "before":
    # it is one of the table's indexes until dropped).
    assert after < before / 3, (before, after)
    with engine.connect() as conn:
        names = set(conn.execute(sa.text("SELECT indexname FROM pg_indexes WHERE tablename = 'event_logs'")).scalars())
        invalid = conn.execute(sa.text("SELECT count(*) FROM pg_index WHERE NOT indisvalid")).scalar_one()
    assert "idx_events_by_asset_ccnew" not in names and {"idx_events_by_asset", "event_logs_pkey"} <= names
    assert invalid == 0
    assert instance.fetch_materializations(ASSET, limit=EVENTS).records == kept
    assert len(kept) == EVENTS // KEPT_EVERY
    # The run's log says what it did, for the operator who opens it.
    said = [entry.user_message for entry in instance.all_logs(result.run_id) if entry.user_message]
    assert any(
        "tables packed" in line and "event_logs" in line and "rewritten" in line and "idx_events_by_asset_ccnew" in line
        for line in said
    ), said


def test_a_table_too_large_to_rewrite_keeps_its_file_and_has_its_indexes_rebuilt(instance, month_of_deletions):
    engine = month_of_deletions
    kept = instance.fetch_materializations(ASSET, limit=EVENTS).records
    file_before, indexes_before, _total = sizes(engine)

    result = dagster_storage_maintenance_job.execute_in_process(instance=instance, resources=maintenance(0))

    assert result.success
    file_after, indexes_after, _total = sizes(engine)
    assert file_after == file_before
    assert indexes_after < indexes_before / 2, (indexes_before, indexes_after)
    assert instance.fetch_materializations(ASSET, limit=EVENTS).records == kept
    said = [entry.user_message for entry in instance.all_logs(result.run_id) if entry.user_message]
    assert any("event_logs" in line and "indexes rebuilt (too large to rewrite)" in line for line in said), said


def test_a_table_whose_lock_is_not_granted_soon_is_left_to_an_index_rebuild_and_its_readers_do_not_wait(
    instance, month_of_deletions
):
    engine = month_of_deletions
    file_before, indexes_before, _total = sizes(engine)
    # A long transaction that read the event log: a rewrite would wait for its end, and every
    # reader and writer of the table would wait behind the rewrite.
    long_reader = engine.connect().execution_options(isolation_level="READ COMMITTED")
    holding = long_reader.begin()
    long_reader.execute(sa.text("LOCK TABLE event_logs IN ACCESS SHARE MODE"))
    packed: list = []
    packing = threading.Thread(
        target=lambda: packed.append(
            pack_tables(engine, DAGSTER_PACK_SQL, rewrite_max_bytes=2**30, lock_timeout_s=LOCK_TIMEOUT_S)
        )
    )
    try:
        packing.start()
        time.sleep(4 * LOCK_TIMEOUT_S)
        # The UI reading the event log meanwhile: answered, not queued behind the rewrite.
        with engine.connect() as conn:
            conn.execute(sa.text("SET statement_timeout = '3s'"))
            assert conn.execute(sa.text("SELECT count(*) FROM event_logs")).scalar_one() == EVENTS // KEPT_EVERY
    finally:
        holding.rollback()
        long_reader.close()
        packing.join(timeout=120)

    how = {t.table: t.how for t in packed[0].tables}
    assert how["event_logs"] == "indexes rebuilt (lock not granted)"
    assert {table for table, packing in how.items() if packing == "rewritten"} == set(how) - {"event_logs"}
    file_after, indexes_after, _total = sizes(engine)
    assert file_after == file_before
    assert indexes_after < indexes_before / 2, (indexes_before, indexes_after)


def test_a_night_rewrites_the_event_log_once_most_of_it_is_free_and_leaves_it_the_next_night(
    instance, month_of_deletions
):
    engine = month_of_deletions
    kept = instance.fetch_materializations(ASSET, limit=EVENTS).records
    _file, _indexes, before = sizes(engine)

    first = dagster_storage_maintenance_job.execute_in_process(
        instance=instance, resources=maintenance(256), run_config=a_night(every_table=False)
    )

    assert first.success
    _file, _indexes, packed = sizes(engine)
    assert packed < before / 3, (before, packed)
    assert instance.fetch_materializations(ASSET, limit=EVENTS).records == kept
    free = materialized_metadata(first)["free_shares"]
    # Nine of every ten events deleted from every page: nearly nine tenths free.
    assert 0.8 < free["event_logs"] < 0.95, free

    second = dagster_storage_maintenance_job.execute_in_process(
        instance=instance, resources=maintenance(256), run_config=a_night(every_table=False)
    )

    assert second.success
    # Left as it is: only the first night's own run has added its events.
    assert packed <= sizes(engine)[2] < packed + 64 * 1024
    metadata = materialized_metadata(second)
    assert metadata["tables"]["event_logs"] == "left (too little free)"
    assert metadata["free_shares"]["event_logs"] < REWRITE_MIN_FREE_SHARE


def test_a_night_leaves_a_table_too_large_to_rewrite_to_the_weekly_packing(instance, month_of_deletions):
    engine = month_of_deletions
    before = sizes(engine)

    result = dagster_storage_maintenance_job.execute_in_process(
        instance=instance, resources=maintenance(0), run_config=a_night(every_table=False)
    )

    assert result.success
    assert sizes(engine) == before
    metadata = materialized_metadata(result)
    assert metadata["tables"]["event_logs"] == "left for the weekly packing (too large to rewrite)"
    assert "event_logs" not in metadata["free_shares"]


def test_every_table_is_packed_on_sunday_night_and_on_the_others_a_run_starts_only_for_space_to_give_back(
    instance, month_of_deletions
):
    berlin = ZoneInfo(TIMEZONE)

    def night(day: int) -> dg.RunRequest | dg.SkipReason:
        # 2026-12-06 is a Sunday. The context is closed as the daemon closes it: the instance it
        # opens from the test's is made current for Dagster's definitions until then.
        with dg.build_schedule_context(
            instance=instance,
            scheduled_execution_time=datetime(2026, 12, day, 3, tzinfo=berlin),
            resources=maintenance(256),
        ) as context:
            return dagster_storage_maintenance_schedule(context)

    def config(request: dg.RunRequest | dg.SkipReason) -> dict:
        assert isinstance(request, dg.RunRequest), request
        return request.run_config["ops"]["pack_dagster_tables"]["config"]

    # Nine tenths of the event log deleted: a run, of the tables with space to give back.
    assert config(night(7)) == {"every_table": False}
    assert config(night(6)) == {"every_table": True}
    assert dagster_storage_maintenance_job.execute_in_process(
        instance=instance, resources=maintenance(256), run_config=a_night(every_table=False)
    ).success
    # Packed: no run on a weeknight, and the tick says why; Sunday's run still.
    skipped = night(8)
    assert isinstance(skipped, dg.SkipReason), skipped
    assert skipped.skip_message is not None and "event_logs" in skipped.skip_message
    assert config(night(13)) == {"every_table": True}


def materialized_metadata(result: dg.ExecuteInProcessResult) -> dict:
    """The packing op's output metadata, as plain values."""
    [event] = [e for e in result.all_node_events if e.event_type == dg.DagsterEventType.STEP_OUTPUT]
    return {key: value.value for key, value in event.step_output_data.metadata.items()}
