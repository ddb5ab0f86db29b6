"""Discovered entities and their raw SI documents, from basic_discovery jobs."""

from datetime import timedelta

import dagster as dg

from assets.batch import BatchCheck, batch_metadata, check_specs, retry_policy_for, run_checks, work_batch
from orchestration.queue import JobType
from orchestration.stages.discovery import DiscoveryStage
from resources.database import DatabaseResource
from resources.documents import DocumentStoreResource
from resources.register import RegisterResource

DISCOVERED_ENTITIES = dg.AssetKey("discovered_entities")
RAW_SI_DOCUMENTS = dg.AssetKey("raw_si_documents")

DISCOVERY_CHECKS = [
    BatchCheck(
        "register_numbers_well_formed",
        "register numbers are digits only (the suffix apart) and court codes are XJustiz codes",
        "malformed_register_numbers",
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
                description="Their SI documents (XJustiz XML) as downloaded, content-addressed (content.raw_documents).",
            ),
        ],
        check_specs=check_specs(DISCOVERY_CHECKS, DISCOVERED_ENTITIES),
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
        yield dg.MaterializeResult(
            asset_key=RAW_SI_DOCUMENTS,
            metadata={"si_downloaded": report.totals["si_downloaded"], "si_fresh": report.totals["si_fresh"]},
        )
        yield from run_checks(engine, DISCOVERY_CHECKS, report, DISCOVERED_ENTITIES)

    return basic_discovery
