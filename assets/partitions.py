"""The partitions of the parsed assets: the register court (orchestration.records.courts).

173 keys, however many companies the register holds: a person can ask for "München" (D2601) on
the Backfills page, and a parser change is one backfill over them.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg
import sqlalchemy as sa
from dagster._core.definitions.data_version import (
    CODE_VERSION_TAG,
    DATA_VERSION_IS_USER_PROVIDED_TAG,
    DATA_VERSION_TAG,
    NULL_EVENT_POINTER,
    get_input_data_version_tag,
    get_input_event_pointer_tag,
)
from dagster._core.storage.tags import (
    ASSET_PARTITION_RANGE_END_TAG,
    ASSET_PARTITION_RANGE_START_TAG,
    BACKFILL_ID_TAG,
    PARTITION_NAME_TAG,
)
from sqlalchemy.engine import Engine

from assets.batch import BatchCheck, run_checks, work_batch
from assets.retries import retried_before_claim
from orchestration.records.court_state import (
    EMPTY_FINGERPRINT,
    CourtState,
    CourtStateQueries,
    court_failures,
    court_states,
    courts_of_entities,
    document_fingerprints,
)
from orchestration.records.courts import CourtSummary, register_courts, run_by_court
from orchestration.records.reparse import CourtReparse, StoredDocumentRedo, reparse_court
from orchestration.runtime import queue
from orchestration.runtime.worker import BatchAborted, BatchReport, Stage

register_court_partitions_def = dg.StaticPartitionsDefinition(list(register_courts()))
# How often a backfill run looks again at a court that was not current once it had worked it.
HELD_POLL_SECONDS = 1.0
# The storage id and data version of a documents partition never reported.
NO_DOCUMENTS = (None, EMPTY_FINGERPRINT)
# A backfill's runs in these states may have courts left that another of its runs can help with.
UNFINISHED_RUN_STATUSES = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]


def courts_per_backfill_run(run_slots: int) -> int:
    """Courts one backfill run re-parses at most: a backfill of every court makes one run per run
    slot that backfill runs may take at once (3 with the defaults: 3 of 4 slots), which all start
    as the backfill does. A run that is done with its courts helps the others with theirs
    (reparse_courts), so a run whose courts were small does not leave its slot idle; more runs
    would each start a process that loads the code (seconds of CPU) and wait for a free slot."""
    return math.ceil(len(register_courts()) / run_slots)


def court_backfill_policy(run_slots: int) -> dg.BackfillPolicy:
    """Backfills of the court partitions, whose runs may take ``run_slots`` run slots at once."""
    return dg.BackfillPolicy.multi_run(max_partitions_per_run=courts_per_backfill_run(run_slots))


@dataclass(frozen=True)
class CourtBackfills:
    """How backfills of a court-partitioned asset run: its backfill policy, and how long a run
    gives way to people's work at most before each chunk of its own (0: never)."""

    policy: dg.BackfillPolicy
    give_way_seconds: float = 0


def courts_of_run(tags: Mapping[str, str]) -> Sequence[str]:
    """The court partitions a run works, by its tags: a range (a multi-run backfill's) or one court."""
    if ASSET_PARTITION_RANGE_START_TAG in tags:
        keys = dg.PartitionKeyRange(tags[ASSET_PARTITION_RANGE_START_TAG], tags[ASSET_PARTITION_RANGE_END_TAG])
        return register_court_partitions_def.get_partition_keys_in_range(keys)
    return [tags[PARTITION_NAME_TAG]] if PARTITION_NAME_TAG in tags else []


def courts_of_other_runs(context: dg.AssetExecutionContext) -> list[Sequence[str]]:
    """The courts of each unfinished other run of this run's backfill, the runs in court order from
    the one after this run's courts on, so that runs done at once start helping different runs."""
    backfill_id = context.run.tags.get(BACKFILL_ID_TAG)
    if backfill_id is None:
        return []
    runs = context.instance.get_runs(
        dg.RunsFilter(tags={BACKFILL_ID_TAG: backfill_id}, statuses=UNFINISHED_RUN_STATUSES)
    )
    position = {court: index for index, court in enumerate(register_courts())}
    others = sorted(
        (courts for run in runs if run.run_id != context.run.run_id and (courts := courts_of_run(run.tags))),
        key=lambda courts: position[courts[0]],
    )
    mine = position[context.partition_keys[0]]
    return [courts for courts in others if position[courts[0]] > mine] + [
        courts for courts in others if position[courts[0]] < mine
    ]


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


def data_version_tags(data_version: str) -> dict[str, str]:
    return {DATA_VERSION_TAG: data_version, DATA_VERSION_IS_USER_PROVIDED_TAG: "true"}


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
    queries: CourtStateQueries,
    entity_ids: Sequence[str],
    metadata: dict[str, Any],
) -> Iterator[dg.AssetMaterialization]:
    """The document partitions of the courts whose companies a download run touched."""
    with engine.connect() as conn:
        fingerprints = document_fingerprints(conn, queries, courts_of_entities(conn, entity_ids))
    courts = register_courts()
    for court, fingerprint in fingerprints.items():
        if court in courts:
            yield documents_materialization(documents_key, court, fingerprint, metadata)


def _latest_documents(context: dg.AssetExecutionContext, key: dg.AssetKey, courts: set[str]) -> dict[str, tuple]:
    """Per court, the storage id and data version of the newest materialization of its documents."""
    if not courts:
        return {}
    storage_ids = context.instance.get_latest_storage_id_by_partition(
        key, dg.DagsterEventType.ASSET_MATERIALIZATION, courts
    )
    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=key, storage_ids=list(storage_ids.values())), limit=len(storage_ids)
    ).records
    versions = {record.storage_id: (record.event_log_entry.tags or {}).get(DATA_VERSION_TAG) for record in records}
    return {court: (storage_id, versions.get(storage_id)) for court, storage_id in storage_ids.items()}


def documents_brought_up_to_date(
    context: dg.AssetExecutionContext, parsed: ParsedCourts, fingerprints: dict[str, str], known: dict[str, tuple]
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
    context: dg.AssetExecutionContext,
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
            tags={
                CODE_VERSION_TAG: parsed.code_version,
                **data_version_tags(state.records),
                get_input_data_version_tag(parsed.documents_key): state.documents,
                get_input_event_pointer_tag(parsed.documents_key): (
                    NULL_EVENT_POINTER if storage_id is None else str(storage_id)
                ),
            },
        )


def reparse_courts(
    context: dg.AssetExecutionContext,
    engine: Engine,
    stage: Stage,
    parsed: ParsedCourts,
    *,
    give_way_seconds: float = 0,
) -> Generator[dg.AssetMaterialization | dg.AssetObservation | dg.AssetCheckResult, None, BatchReport]:
    """A backfill run: redo each of its courts with the current code, one materialization per court.

    A court with a failed job is not materialized, and the run fails once every court is done, so
    the Backfills page shows exactly those courts failed, ready to be re-executed. A court that is
    not current once worked (other workers are parsing some of its companies, as a person's run
    does, or a document was stored there meanwhile) is reported once it is: the run takes up what
    is left (a failure re-queued, a new document's job), and waits at most a lease and one reaper
    interval, after which a worker that never reported has lost its jobs to the reaper. Before
    each chunk of its work, the run gives way to people's work for up to ``give_way_seconds``.
    Returns what the run did over all its courts.
    """
    run_id = context.run.run_id
    touched = BatchReport(job_type=stage.job_type, worker_id=run_id)
    failed: list[CourtSummary] = []
    # The job type's row, read as the step starts; a failure before a court's jobs are claimed
    # retries the step as the row says.
    with retried_before_claim(context, engine, stage.job_type) as job_type:

        def redo(court: str, *, backward: bool = False) -> CourtReparse:
            try:
                result = reparse_court(
                    engine,
                    stage,
                    run_id,
                    court,
                    redo=parsed.redo,
                    parser_version=parsed.code_version,
                    batch_size=job_type.batch_size,
                    lease_seconds=job_type.lease_seconds,
                    # A helper leaves every failed document to the court's owner: the owner tries
                    # a failure from before its run once more, and reports the court failed on one since.
                    since=None if backward else since,
                    backward=backward,
                    give_way_seconds=give_way_seconds,
                )
            except BatchAborted as exc:
                raise dg.Failure(description=f"court {court}: {exc}", allow_retries=False) from exc
            touched.absorb(result.report)
            return result

        def report_if_done(court: str):
            """Report the court once it is done: every company current, or failed for good since
            the run began, by any worker (this run's failures and those of runs that helped it).
            Until then it stays pending: other workers are parsing some of its companies (a
            person's open), or documents were stored there while the run worked it."""
            result, held_before = pending[court]
            with engine.connect() as conn:
                states = court_states(conn, parsed.queries, [court], parsed.code_version)
                failures = (
                    Counter()
                    if states[court].current
                    else court_failures(conn, parsed.queries, [court], parsed.code_version, since)[court]
                )
            if states[court].unfinished > failures.total():
                return
            del pending[court]
            summary = CourtSummary(court, result.report.completed, result.report.totals[parsed.written], failures)
            # A log line is an event of its own (tens of milliseconds in the event log); a court's
            # materialization carries its figures, so only what needs a person's eye is logged.
            if summary.failed or held_before:
                context.log.info(
                    f"court {court}: {summary.completed} re-parsed, {summary.written} written, failed "
                    f"{dict(summary.failures_by_class)}, {held_before} parsed by other workers"
                )
            if summary.failed:
                failed.append(summary)
                return
            extra = {
                "parser_version": parsed.code_version,
                "held_by_other_workers": held_before,
                "seconds": round(result.report.seconds, 2),
            }
            yield from court_events(
                context, engine, parsed, [summary], {court: extra}, known_documents=known_documents, states=states
            )

        with engine.connect() as conn:
            # A document that failed for good from now on is not tried again by this run.
            since = conn.execute(sa.select(sa.func.now())).scalar_one()
            fingerprints = document_fingerprints(conn, parsed.queries, context.partition_keys)
        # The run's courts' documents as Dagster knows them, brought up to date once for all of
        # them: reported court by court, those of a first backfill cost four event-log queries each.
        known_documents: dict[str, tuple] = {}
        yield from documents_brought_up_to_date(context, parsed, fingerprints, known_documents)
        pending: dict[str, tuple[CourtReparse, int]] = {}
        for court in context.partition_keys:
            result = redo(court)
            pending[court] = (result, result.held_elsewhere)
            yield from report_if_done(court)
        # Done with its own courts, the run helps the backfill's other runs with theirs: each from
        # its last company backward, until it meets that run's own progress. Those runs report
        # their courts; the companies parsed here count in this run's checks.
        helped: dict[str, int] = {}
        for courts in courts_of_other_runs(context):
            for court in reversed(courts):
                help_given = redo(court, backward=True)
                if help_given.report.claimed:
                    helped[court] = help_given.report.claimed
                if help_given.caught_up:
                    break
        if helped:
            context.log.info(
                f"helped the backfill's other runs: {sum(helped.values())} companies of {len(helped)} courts"
            )
        # The run takes up what the other workers leave (a failure re-queued, a document stored
        # meanwhile); a worker that never reports loses its jobs to the reaper after its lease.
        deadline = time.monotonic() + job_type.lease_seconds + queue.REAPER_INTERVAL_SECONDS
        while pending and time.monotonic() < deadline:
            time.sleep(HELD_POLL_SECONDS)
            for court in list(pending):
                result, held_before = pending[court]
                again = redo(court)
                result.report.absorb(again.report)
                pending[court] = (result, max(held_before, again.held_elsewhere))
                yield from report_if_done(court)
    yield from run_checks(engine, parsed.checks, touched, parsed.asset_key)
    if failed or pending:
        problems = [f"{s.court} {dict(s.failures_by_class)}" for s in failed] + [
            f"{court} (companies not parsed by this version, {held} held by other workers)"
            for court, (_, held) in pending.items()
        ]
        raise dg.Failure(
            description=f"{len(problems)} of {len(context.partition_keys)} courts are not done: " + "; ".join(problems),
            metadata={s.court: dg.MetadataValue.json(dict(s.failures_by_class)) for s in failed},
            allow_retries=False,
        )
    return touched


def work_queue_by_court(
    context: dg.AssetExecutionContext,
    engine: Engine,
    stage: Stage,
    parsed: ParsedCourts,
    *,
    max_batches: int = 0,
    report: BatchReport | None = None,
    checked: bool = True,
) -> Generator[dg.AssetMaterialization | dg.AssetObservation | dg.AssetCheckResult, None, BatchReport]:
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
