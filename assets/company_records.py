"""Parsed XML: the canonical company records, one revision per change, from xml_parsing jobs."""

import dagster as dg

from assets.batch import BatchCheck, check_specs
from assets.partitions import register_court_partitions_def, reparse_courts, work_queue_by_court
from orchestration.stages.parsing import XmlParsingStage
from orchestration.xjustiz import PARSER_VERSION
from resources.database import DatabaseResource
from resources.documents import DocumentStoreResource
from resources.job_queue import JobQueueResource

COMPANY_RECORDS = dg.AssetKey("company_records")

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


def build_company_records_asset(backfill_policy: dg.BackfillPolicy) -> dg.AssetsDefinition:
    @dg.asset(
        key=COMPANY_RECORDS,
        deps=[dg.AssetKey("raw_si_documents")],
        code_version=PARSER_VERSION,
        partitions_def=register_court_partitions_def,
        backfill_policy=backfill_policy,
        # Materializations are reported per court partition, by the asset itself.
        output_required=False,
        group_name="register",
        kinds={"postgres", "xml"},
        description="Canonical company records parsed from the SI documents (content.entity_revisions), "
        "partitioned by register court. A run for courts (a backfill after a parser change) re-parses "
        "their stored documents; a run without a partition (the sensor's) works batches of due "
        "xml_parsing jobs and reports the courts it touched.",
        check_specs=check_specs(COMPANY_RECORD_CHECKS, COMPANY_RECORDS),
    )
    def company_records(
        context: dg.AssetExecutionContext,
        database: DatabaseResource,
        documents: DocumentStoreResource,
        job_queue: JobQueueResource,
    ):
        engine = database.get_engine()
        stage = XmlParsingStage(documents.get_store())
        args = (context, engine, stage, COMPANY_RECORDS, PARSER_VERSION, COMPANY_RECORD_CHECKS)
        if context.has_partition_key or context.has_partition_key_range:
            yield from reparse_courts(*args, written="new_revision")
        else:
            yield from work_queue_by_court(*args, written="new_revision", max_batches=job_queue.max_batches_per_run)

    return company_records
