"""The weekly rebuild of the indexes of Dagster's tables that retention deletes from, on a real
Dagster storage in PostgreSQL: the indexes shrink back, what they index stays readable, and an
invalid copy an interrupted rebuild left goes."""

import uuid

import dagster as dg
import pytest
import sqlalchemy as sa

from orchestration.assembly.dagster_instance import ensure_storage, write_instance_config
from orchestration.db.index_rebuild import QUERIES
from orchestration.settings import Settings
from sensors.storage_maintenance import dagster_storage_maintenance_job

ASSET = dg.AssetKey("court_figures")
EVENTS = 3000
KEPT_EVERY = 10  # retention keeps a few old runs among those it deletes, so pages stay partly empty


@pytest.fixture
def storage_url(server_url):
    url = server_url.set(database=f"hreg_rebuild_{uuid.uuid4().hex[:8]}")
    ensure_storage(url)
    yield url
    admin = sa.create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{url.database}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture
def instance(storage_url, tmp_path):
    write_instance_config(tmp_path, storage_url, Settings())
    with dg.DagsterInstance.from_config(str(tmp_path)) as instance:
        yield instance


def index_bytes(engine: sa.Engine, table: str) -> int:
    with engine.connect() as conn:
        return conn.execute(QUERIES["index_bytes"], {"table": table}).scalar_one()


def test_the_weekly_rebuild_shrinks_the_event_logs_indexes_keeps_every_event_and_drops_a_broken_copy(
    instance, storage_url
):
    for number in range(EVENTS):
        instance.report_runless_asset_event(dg.AssetMaterialization(ASSET, metadata={"number": number}))
    engine = sa.create_engine(storage_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        # What a month of retention leaves: most old events gone, a few kept on every page.
        conn.execute(sa.text("DELETE FROM event_logs WHERE id % :every <> 0"), {"every": KEPT_EVERY})
        conn.execute(sa.text("VACUUM event_logs"))
        # What a rebuild interrupted by a restart leaves: an invalid copy of an index.
        with pytest.raises(sa.exc.IntegrityError):
            conn.execute(
                sa.text("CREATE UNIQUE INDEX CONCURRENTLY idx_events_by_asset_ccnew ON event_logs (asset_key)")
            )
    kept = instance.fetch_materializations(ASSET, limit=EVENTS).records
    before = index_bytes(engine, "event_logs")

    result = dagster_storage_maintenance_job.execute_in_process(instance=instance)

    assert result.success
    after = index_bytes(engine, "event_logs")
    # A tenth of the entries, packed: the indexes take at most half their space (the leftover is
    # part of "before": it is one of the table's indexes until dropped).
    assert after < before / 2, (before, after)
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
        "indexes rebuilt" in line and "event_logs" in line and "idx_events_by_asset_ccnew" in line for line in said
    )
    engine.dispose()
