"""Discovered entities and their raw SI documents, from basic_discovery jobs."""

import dagster as dg

from assets.batch import BatchCheck, batch_metadata, check_specs, run_checks, work_batch
from assets.company_records import parse_downloaded
from assets.court_partitions import register_court_partitions_def
from assets.court_reporting import report_documents
from assets.keys import DISCOVERED_ENTITIES, RAW_SI_DOCUMENTS
from orchestration.records.court_state import SI_RECORDS
from orchestration.stages.discovery import DiscoveryStage
from resources.database import DatabaseResource
from resources.discovery import SearchPolicyResource
from resources.documents import DocumentStoreResource
from resources.job_queue import JobQueueResource
from resources.register import RegisterResource

DISCOVERY_CHECKS = [
    BatchCheck(
        "register_numbers_well_formed",
        "register numbers are digits only (the suffix apart) and court codes are XJustiz codes",
        "malformed_register_numbers",
    ),
]


@dg.multi_asset(
    specs=[
        dg.AssetSpec(
            DISCOVERED_ENTITIES,
            group_name="register",
            kinds={"postgres"},
            description="Companies found by searches (content.entities).",
        ),
        dg.AssetSpec(
            RAW_SI_DOCUMENTS,
            deps=[DISCOVERED_ENTITIES],
            group_name="register",
            kinds={"xml"},
            # A run reports the court partitions whose companies it touched.
            partitions_def=register_court_partitions_def,
            skippable=True,
            description="Their SI documents (XJustiz XML) as downloaded, content-addressed (content.raw_documents), "
            "by register court; a partition's data version is the fingerprint of its companies' current documents.",
        ),
    ],
    check_specs=check_specs(DISCOVERY_CHECKS, DISCOVERED_ENTITIES),
    name="basic_discovery",
)
def basic_discovery(
    context: dg.AssetExecutionContext,
    database: DatabaseResource,
    documents: DocumentStoreResource,
    register: RegisterResource,
    search_policy: SearchPolicyResource,
    job_queue: JobQueueResource,
):
    engine = database.get_engine()
    stage = DiscoveryStage(
        register.get_client,
        documents.get_store(),
        result_pages=search_policy.result_pages,
        search_opens=search_policy.search_opens,
        fresh_for=search_policy.fresh_for,
    )
    report = work_batch(context, engine, stage, max_batches=job_queue.max_batches_per_run)
    yield dg.MaterializeResult(
        asset_key=DISCOVERED_ENTITIES,
        metadata=batch_metadata(report, {"register": register.register_kind}),
    )
    yield from report_documents(
        engine,
        RAW_SI_DOCUMENTS,
        SI_RECORDS,
        report.entity_ids,
        {"run_si_downloaded": report.totals["si_downloaded"], "run_si_fresh": report.totals["si_fresh"]},
    )
    yield from run_checks(engine, DISCOVERY_CHECKS, report, DISCOVERED_ENTITIES)
    yield from parse_downloaded(context, engine, documents.get_store(), report.entity_ids)
