"""Parsed XML: the canonical company records, one revision per change, from xml_parsing jobs."""

from collections.abc import Iterator, Sequence

import dagster as dg
from sqlalchemy.engine import Engine

from assets.batch import BatchCheck, as_op_events, check_specs
from assets.court_backfill import reparse_courts
from assets.court_partitions import CourtBackfills, register_court_partitions_def
from assets.court_reporting import ParsedCourts, work_queue_by_court
from assets.keys import COMPANY_RECORDS, RAW_SI_DOCUMENTS
from orchestration.records.court_state import SI_RECORDS
from orchestration.records.documents import DocumentStore
from orchestration.runtime import queue
from orchestration.runtime.worker import BatchAborted, work_claimed
from orchestration.stages.parsing import XmlParsingStage
from orchestration.xjustiz import PARSER_VERSION
from resources.database import DatabaseResource
from resources.documents import DocumentStoreResource
from resources.job_queue import JobQueueResource

COMPANY_RECORD_CHECKS = [
    BatchCheck(
        "record_register_matches_entity",
        "the register key in each current record is the key of the entity it was downloaded for",
        "records_of_another_register",
    ),
    BatchCheck(
        "records_have_name_and_register",
        "every current record has a name and a complete register key",
        "records_without_name_or_register",
    ),
]


def parsed_company_records() -> ParsedCourts:
    """company_records as parsed by the parser version of this code."""
    return ParsedCourts(
        COMPANY_RECORDS, RAW_SI_DOCUMENTS, PARSER_VERSION, SI_RECORDS, COMPANY_RECORD_CHECKS, written="new_revision"
    )


def parse_downloaded(
    context: dg.AssetExecutionContext, engine: Engine, store: DocumentStore, entity_ids: Sequence[str]
) -> Iterator[dg.AssetMaterialization | dg.AssetObservation]:
    """Parse, in this run, the documents a person's discovery run has just stored: the due
    interactive xml_parsing jobs of ``entity_ids`` (which the database queued for them), so that
    opening a company takes one run. They are worked as a sensor's run works them (same jobs,
    step history with this run's id) and reported as company_records of their courts."""
    run_id = context.run.run_id
    with engine.begin() as conn:
        lease_seconds = queue.job_types(conn)["xml_parsing"].lease_seconds
        jobs = queue.claim_interactive_for_entities(conn, "xml_parsing", entity_ids, run_id, lease_seconds)
    if not jobs:
        return
    stage = XmlParsingStage(store)
    try:
        report = work_claimed(engine, stage, run_id, jobs, lease_seconds)
    except BatchAborted as exc:
        # The downloads stand; the parses left over go back to the queue through the lease reaper.
        context.log.warning(f"parsing the downloaded documents: {exc}")
        return
    context.log.info(f"xml_parsing: parsed {report.completed} downloaded documents, failed {report.failed}")
    # The checks of company_records belong to its own runs, which take every other parse.
    yield from work_queue_by_court(context, engine, stage, parsed_company_records(), report=report, checked=False)


def build_company_records_asset(backfills: CourtBackfills) -> dg.AssetsDefinition:
    @dg.asset(
        key=COMPANY_RECORDS,
        deps=[RAW_SI_DOCUMENTS],
        code_version=PARSER_VERSION,
        partitions_def=register_court_partitions_def,
        backfill_policy=backfills.policy,
        # Materializations are reported per court partition, by the asset itself.
        output_required=False,
        group_name="register",
        kinds={"postgres", "xml"},
        description="Canonical company records parsed from the SI documents (content.entity_revisions), "
        "partitioned by register court. A run for courts (a backfill after a parser change) re-parses "
        "their stored documents; the sensor's runs (xml_parsing_job) work batches of due xml_parsing "
        "jobs and report the courts they touched.",
        check_specs=check_specs(COMPANY_RECORD_CHECKS, COMPANY_RECORDS),
    )
    def company_records(
        context: dg.AssetExecutionContext, database: DatabaseResource, documents: DocumentStoreResource
    ):
        stage = XmlParsingStage(documents.get_store())
        yield from reparse_courts(
            context, database.get_engine(), stage, parsed_company_records(), give_way_seconds=backfills.give_way_seconds
        )

    return company_records


@dg.op(
    out={},
    description="Works batches of due xml_parsing jobs and reports the company_records of the courts touched.",
)
def company_records_from_the_queue(
    context: dg.OpExecutionContext,
    database: DatabaseResource,
    documents: DocumentStoreResource,
    job_queue: JobQueueResource,
):
    stage = XmlParsingStage(documents.get_store())
    events = work_queue_by_court(
        context, database.get_engine(), stage, parsed_company_records(), max_batches=job_queue.max_batches_per_run
    )
    yield from as_op_events(events)
