"""Parsed XML: the canonical company records, one revision per change, from xml_parsing jobs."""

from collections.abc import Iterator, Sequence

import dagster as dg
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from assets.batch import BatchCheck, retry_policy_for
from assets.keys import COMPANY_RECORDS, RAW_SI_DOCUMENTS
from assets.partitions import (
    ParsedCourts,
    court_backfill_policy,
    register_court_partitions_def,
    reparse_courts,
    work_queue_by_court,
)
from orchestration import queue
from orchestration.court_state import SI_RECORDS
from orchestration.documents import DocumentStore
from orchestration.queue import JobType
from orchestration.stages.parsing import XmlParsingStage
from orchestration.worker import BatchAborted, work_claimed
from orchestration.xjustiz import PARSER_VERSION
from resources.database import DatabaseResource
from resources.documents import DocumentStoreResource


def parsed_company_records() -> ParsedCourts:
    """company_records as parsed by the parser version of this code."""
    return ParsedCourts(COMPANY_RECORDS, RAW_SI_DOCUMENTS, PARSER_VERSION, SI_RECORDS)


COMPANY_RECORD_CHECKS: list[BatchCheck] = [
    (
        "record_register_matches_entity",
        "the register key in each current record is the key of the entity it was downloaded for",
        sa.text("""
            SELECT count(*) FROM (
                SELECT DISTINCT ON (r.entity_id) r.record, e.court_code, e.register_type, e.register_number,
                       e.register_suffix
                  FROM content.entity_revisions r JOIN content.entities e ON e.id = r.entity_id
                 WHERE r.entity_id = ANY(CAST(:entity_ids AS uuid[]))
                 ORDER BY r.entity_id, r.id DESC) latest
             WHERE (record #>> '{register,court_code}', record #>> '{register,type}',
                    record #>> '{register,number}', coalesce(record #>> '{register,suffix}', ''))
                   IS DISTINCT FROM (court_code, register_type, register_number, register_suffix)
        """),
    ),
    (
        "records_have_name_and_register",
        "every current record has a name and a complete register key",
        sa.text("""
            SELECT count(*) FROM (
                SELECT DISTINCT ON (entity_id) record FROM content.entity_revisions
                 WHERE entity_id = ANY(CAST(:entity_ids AS uuid[]))
                 ORDER BY entity_id, id DESC) latest
             WHERE coalesce(record ->> 'name', '') = ''
                OR coalesce(record #>> '{register,court_code}', '') = ''
                OR coalesce(record #>> '{register,number}', '') = ''
        """),
    ),
]


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
    yield from work_queue_by_court(
        context, engine, stage, parsed_company_records(), [], written="new_revision", report=report
    )


def build_company_records_asset(job_type: JobType) -> dg.AssetsDefinition:
    @dg.asset(
        key=COMPANY_RECORDS,
        deps=[RAW_SI_DOCUMENTS],
        code_version=PARSER_VERSION,
        partitions_def=register_court_partitions_def,
        backfill_policy=court_backfill_policy,
        # Materializations are reported per court partition, by the asset itself.
        output_required=False,
        retry_policy=retry_policy_for(job_type),
        group_name="register",
        kinds={"postgres", "xml"},
        description="Canonical company records parsed from the SI documents (content.entity_revisions), "
        "partitioned by register court. A run for courts (a backfill after a parser change) re-parses "
        "their stored documents; a run without a partition (the sensor's) works batches of due "
        "xml_parsing jobs and reports the courts it touched.",
        check_specs=[
            dg.AssetCheckSpec(name, asset=COMPANY_RECORDS, description=d) for name, d, _ in COMPANY_RECORD_CHECKS
        ],
    )
    def company_records(
        context: dg.AssetExecutionContext, database: DatabaseResource, documents: DocumentStoreResource
    ):
        engine = database.get_engine()
        stage = XmlParsingStage(documents.get_store())
        run = reparse_courts if context.has_partition_key or context.has_partition_key_range else work_queue_by_court
        yield from run(context, engine, stage, parsed_company_records(), COMPANY_RECORD_CHECKS, written="new_revision")

    return company_records
