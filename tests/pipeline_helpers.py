"""Helpers of the pipeline tests: put SI documents in the database the way discovery does."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import sqlalchemy as sa

from orchestration.records.documents import DocumentStore

CREATE_ENTITY = sa.text("""
    INSERT INTO content.entities (court_code, register_type, register_number, name)
    VALUES (:court_code, :register_type, :register_number, :name)
    RETURNING id
""")
ATTACH = sa.text("""
    UPDATE content.entities SET current_si_document_id = :doc, processing_status = 'xml_ready' WHERE id = :id
""")


def add_entity_with_si(
    engine: sa.Engine,
    store: DocumentStore,
    content: bytes,
    *,
    number: str,
    name: str = "Testfirma GmbH",
    court_code: str = "D2601",
) -> str:
    """An entity whose SI document is stored and which is xml_ready: the trigger queues its parse."""
    with engine.begin() as conn:
        entity_id = str(
            conn.execute(
                CREATE_ENTITY,
                {"court_code": court_code, "register_type": "HRB", "register_number": number, "name": name},
            ).scalar_one()
        )
        document_id = store.store(conn, content, kind="si", media_type="application/xml", entity_id=entity_id)
        conn.execute(ATTACH, {"doc": document_id, "id": entity_id})
    return entity_id


def sample_si_files(samples_dir: Path) -> list[Path]:
    return sorted((samples_dir / "xjustiz").glob("*.xml"))


def job_rows(engine: sa.Engine, job_type: str) -> list[sa.Row]:
    with engine.connect() as conn:
        return conn.execute(
            sa.text("SELECT * FROM processing.processing_jobs WHERE type = :t ORDER BY created_at"), {"t": job_type}
        ).all()


def history_rows(engine: sa.Engine, job_id: str) -> list[sa.Row]:
    with engine.connect() as conn:
        return conn.execute(
            sa.text("SELECT * FROM processing.job_step_history WHERE job_id = :j ORDER BY attempt_number, id"),
            {"j": job_id},
        ).all()


RECORD_AS_OF = sa.text("""
    SELECT r.record, r.job_id, r.parser_version, r.created_at
      FROM content.entity_revisions r
     WHERE r.entity_id = :entity_id AND r.created_at <= :as_of
     ORDER BY r.id DESC
     LIMIT 1
""")


def record_as_of(conn: sa.Connection, entity_id: str, as_of) -> dict | None:
    """What the company looked like at ``as_of``, and which job wrote that revision."""
    row = conn.execute(RECORD_AS_OF, {"entity_id": entity_id, "as_of": as_of}).first()
    return dict(row._mapping) if row else None


def materializations_of(result: dg.ExecuteInProcessResult, asset: str) -> list[dg.AssetMaterialization]:
    """The run's materializations of ``asset``, whichever step reported them (a queue run's op, a
    backfill's asset step, a run that also reports the partitions of its input documents)."""
    return [
        event.event_specific_data.materialization
        for event in result.get_asset_materialization_events()
        if event.asset_key == dg.AssetKey(asset)
    ]


def observations_of(result: dg.ExecuteInProcessResult, asset: str) -> list[dg.AssetObservation]:
    """The run's observations of ``asset``, whichever step reported them."""
    return [
        event.event_specific_data.asset_observation
        for event in result.get_asset_observation_events()
        if event.asset_key == dg.AssetKey(asset)
    ]


def run_court_partitions(
    defs: dg.Definitions, asset: str, instance: dg.DagsterInstance, **options
) -> dg.ExecuteInProcessResult:
    """A run of ``asset`` for court partitions (``partition_key=`` or range tags), as a backfill
    launched from the UI runs: the implicit asset job with that asset selected."""
    key = dg.AssetKey(asset)
    job = defs.resolve_implicit_job_def_def_for_assets([key])
    return job.execute_in_process(instance=instance, asset_selection=[key], raise_on_error=False, **options)


def run_what_the_sensor_requests(
    defs: dg.Definitions, job_type: str, instance: dg.DagsterInstance, *, succeed: bool = True
) -> list[dg.ExecuteInProcessResult]:
    """One sensor tick, and each run it requests executed with the request's tags and config; with
    ``succeed``, each run must succeed (else the caller looks at how it failed)."""
    sensor = defs.get_sensor_def(f"{job_type}_sensor")
    with dg.build_sensor_context(instance=instance, resources=defs.resources, definitions=defs) as context:
        requests = sensor.evaluate_tick(context).run_requests
    assert requests, f"the {job_type} sensor requested no run"
    results = []
    for request in requests:
        result = defs.resolve_job_def(f"{job_type}_job").execute_in_process(
            instance=instance, run_config=request.run_config, tags=request.tags, raise_on_error=False
        )
        assert result.success or not succeed, f"the {job_type} run failed"
        results.append(result)
    return results
