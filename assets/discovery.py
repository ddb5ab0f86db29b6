"""Discovered entities and their raw SI documents, from basic_discovery jobs."""

from datetime import timedelta

import dagster as dg
import sqlalchemy as sa

from assets.batch import BatchCheck, batch_metadata, retry_policy_for, run_checks, work_batch
from assets.company_records import parse_downloaded
from assets.keys import DISCOVERED_ENTITIES, RAW_SI_DOCUMENTS
from assets.partitions import register_court_partitions_def, report_documents
from orchestration.court_state import SI_RECORDS
from orchestration.queue import JobType
from orchestration.stages.discovery import DiscoveryStage
from resources.database import DatabaseResource
from resources.documents import DocumentStoreResource
from resources.register import RegisterResource

DISCOVERY_CHECKS: list[BatchCheck] = [
    (
        "register_numbers_well_formed",
        "register numbers are digits only (the suffix apart) and court codes are XJustiz codes",
        sa.text("""
            SELECT count(*) FROM content.entities
             WHERE id = ANY(CAST(:entity_ids AS uuid[]))
               AND NOT (register_number ~ '^[1-9][0-9]{0,6}$' AND court_code ~ '^[A-Z][0-9]{4}$')
        """),
    ),
]


def build_discovery_assets(job_type: JobType) -> dg.AssetsDefinition:
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
        check_specs=[
            dg.AssetCheckSpec(name, asset=DISCOVERED_ENTITIES, description=d) for name, d, _ in DISCOVERY_CHECKS
        ],
        retry_policy=retry_policy_for(job_type),
        name="basic_discovery",
    )
    def basic_discovery(
        context: dg.AssetExecutionContext,
        database: DatabaseResource,
        documents: DocumentStoreResource,
        register: RegisterResource,
    ):
        engine = database.get_engine()
        settings = register.settings()
        stage = DiscoveryStage(
            register.get_client,
            documents.get_store(),
            result_pages=settings.discovery_result_pages,
            search_opens=settings.effective_search_opens,
            fresh_for=timedelta(hours=settings.document_fresh_hours),
        )
        report = work_batch(context, engine, stage)
        yield dg.MaterializeResult(
            asset_key=DISCOVERED_ENTITIES,
            metadata=batch_metadata(report, {"register": register.kind}),
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

    return basic_discovery
