"""What runs of a court-partitioned asset tell Dagster about the courts they worked: a court's
materialization once every company filed there is parsed by the current version, with its
documents as input, an observation until then, and the document partitions behind them."""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from assets.batch import BatchCheck, run_checks, work_batch
from orchestration.assembly.dagster_internals import data_version_of, data_version_tags, provenance_tags
from orchestration.records.court_state import (
    EMPTY_FINGERPRINT,
    CourtState,
    CourtStateQueries,
    court_states,
    courts_of_entities,
    document_fingerprints,
)
from orchestration.records.courts import CourtSummary, register_courts, run_by_court
from orchestration.records.reparse import StoredDocumentRedo
from orchestration.runtime.worker import BatchReport, Stage

# The storage id and data version of a documents partition never reported.
NO_DOCUMENTS = (None, EMPTY_FINGERPRINT)
# What a run of a court-partitioned asset yields.
CourtEvent = dg.AssetMaterialization | dg.AssetObservation | dg.AssetCheckResult


def court_metadata(summary: CourtSummary, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a partition's materialization says: records parsed, revisions written, failures by class."""
    return {
        "court_name": register_courts().get(summary.court, ""),
        "records": summary.completed,
        "revisions_written": summary.written,
        "failed": summary.failed,
        "failures_by_class": dg.MetadataValue.json(dict(summary.failures_by_class)),
        **(extra or {}),
    }


@dataclass(frozen=True)
class ParsedCourts:
    """A court-partitioned asset read from the court partitions of the documents it parses."""

    asset_key: dg.AssetKey
    documents_key: dg.AssetKey
    code_version: str
    queries: CourtStateQueries
    # The asset's checks of a run's batches, and the result flag of a job that wrote a new version.
    checks: Sequence[BatchCheck]
    written: str
    # How a backfill redoes the courts' stored documents.
    redo: StoredDocumentRedo


def documents_materialization(
    documents_key: dg.AssetKey, court: str, fingerprint: str, metadata: dict[str, Any]
) -> dg.AssetMaterialization:
    """A court partition of stored documents, with the fingerprint of its documents as data version."""
    return dg.AssetMaterialization(
        asset_key=documents_key, partition=court, metadata=metadata, tags=data_version_tags(fingerprint)
    )


def report_documents(
    engine: Engine,
    documents_key: dg.AssetKey,
    fingerprint_query: sa.TextClause,
    entity_ids: Sequence[str],
    metadata: dict[str, Any],
) -> Iterator[dg.AssetMaterialization]:
    """The document partitions of the courts whose companies a download run touched, with the
    fingerprints ``fingerprint_query`` gives them."""
    with engine.connect() as conn:
        fingerprints = document_fingerprints(conn, fingerprint_query, courts_of_entities(conn, entity_ids))
    courts = register_courts()
    for court, fingerprint in fingerprints.items():
        if court in courts:
            yield documents_materialization(documents_key, court, fingerprint, metadata)


def _latest_documents(
    context: dg.AssetExecutionContext | dg.OpExecutionContext, key: dg.AssetKey, courts: set[str]
) -> dict[str, tuple]:
    """Per court, the storage id and data version of the newest materialization of its documents."""
    if not courts:
        return {}
    storage_ids = context.instance.get_latest_storage_id_by_partition(
        key, dg.DagsterEventType.ASSET_MATERIALIZATION, courts
    )
    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=key, storage_ids=list(storage_ids.values())), limit=len(storage_ids)
    ).records
    versions = {record.storage_id: data_version_of(record.event_log_entry.tags) for record in records}
    return {court: (storage_id, versions.get(storage_id)) for court, storage_id in storage_ids.items()}


def documents_brought_up_to_date(
    context: dg.AssetExecutionContext | dg.OpExecutionContext,
    parsed: ParsedCourts,
    fingerprints: dict[str, str],
    known: dict[str, tuple],
) -> Iterator[dg.AssetMaterialization]:
    """Report the document partitions of courts whose documents (``fingerprints``) differ from
    what the run knows of them (``known``), and update ``known`` to their newest events.

    Each lookup costs event-log queries: only a court whose documents differ from what the run
    knows of them is looked up again (a download run may have reported them meanwhile). Documents
    stored by a download run that has not reported them yet: their partition says so now, so that
    the run reporting them later finds the same fingerprint and changes nothing. A partition never
    reported holds no documents, so a court without any needs no report: a materialization
    reading it points at no input event, and the first document stored there makes it unsynced.
    """

    def differing() -> list[str]:
        return [
            court for court, fingerprint in fingerprints.items() if known.get(court, NO_DOCUMENTS)[1] != fingerprint
        ]

    known |= _latest_documents(context, parsed.documents_key, set(differing()))
    behind = differing()
    for court in behind:
        yield documents_materialization(
            parsed.documents_key, court, fingerprints[court], {"reported_before_their_download_run": True}
        )
    known |= _latest_documents(context, parsed.documents_key, set(behind))


def court_events(
    context: dg.AssetExecutionContext | dg.OpExecutionContext,
    engine: Engine,
    parsed: ParsedCourts,
    summaries: Sequence[CourtSummary],
    extra: dict[str, dict[str, Any]] | None = None,
    known_documents: dict[str, tuple] | None = None,
    states: dict[str, CourtState] | None = None,
) -> Iterator[dg.AssetMaterialization | dg.AssetObservation]:
    """What a run tells Dagster about the courts it worked (never one event per entity: each costs ~10 ms).

    A court is materialized, with the current code version, only when every company filed there
    is now parsed by that version: a run that parsed some companies of a court leaves it unsynced
    while others are not, and says so in an observation. The materialization names the court's
    documents as its input (their fingerprint and newest event), so that a document stored later
    makes the court unsynced again, and its newest records as its data version.

    ``known_documents`` (court -> storage id and data version of its documents' newest event) is
    what a run that reports court after court has looked up already; it is kept up to date here.
    ``states`` are the courts' states when the caller has just read them.
    """
    courts = [summary.court for summary in summaries]
    if states is None:
        with engine.connect() as conn:
            states = court_states(conn, parsed.queries, courts, parsed.code_version)
    current = [court for court in courts if states[court].current]
    known = {} if known_documents is None else known_documents
    yield from documents_brought_up_to_date(
        context, parsed, {court: states[court].documents for court in current}, known
    )
    for summary in summaries:
        state = states[summary.court]
        metadata = court_metadata(summary, {**(extra or {}).get(summary.court, {}), "unfinished": state.unfinished})
        if not state.current:
            context.log.info(f"court {summary.court}: {state.unfinished} companies not yet parsed by this version")
            yield dg.AssetObservation(asset_key=parsed.asset_key, partition=summary.court, metadata=metadata)
            continue
        storage_id, _ = known.get(summary.court, NO_DOCUMENTS)
        yield dg.AssetMaterialization(
            asset_key=parsed.asset_key,
            partition=summary.court,
            metadata=metadata,
            tags=provenance_tags(parsed.code_version, state.records, parsed.documents_key, state.documents, storage_id),
        )


def work_queue_by_court(
    context: dg.AssetExecutionContext | dg.OpExecutionContext,
    engine: Engine,
    stage: Stage,
    parsed: ParsedCourts,
    *,
    max_batches: int = 0,
    report: BatchReport | None = None,
    checked: bool = True,
) -> Generator[CourtEvent, None, BatchReport]:
    """A run without a partition (the sensor's): up to ``max_batches`` batches of due jobs (or the
    ``report`` of jobs the run has worked already), then the events of every court a job touched
    (court_events), so each partition's status stays true, and unless not ``checked`` the asset's
    checks of the batches. Returns the batches' report."""
    if report is None:
        report = work_batch(context, engine, stage, max_batches=max_batches)
    with engine.connect() as conn:
        summaries = run_by_court(conn, context.run.run_id, stage.job_type, parsed.written)
    courts = register_courts()
    worked = []
    for summary in sorted(summaries.values(), key=lambda s: s.court):
        if summary.court in courts:
            worked.append(summary)
        else:
            context.log.warning(f"{summary.completed} jobs of court {summary.court!r}, which is no register court")
    extra = {summary.court: {"parser_version": parsed.code_version} for summary in worked}
    yield from court_events(context, engine, parsed, worked, extra)
    if checked:
        yield from run_checks(engine, parsed.checks, report, parsed.asset_key)
    return report
