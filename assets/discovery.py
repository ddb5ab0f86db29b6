"""Discovered entities and their raw SI documents, from the discovery jobs."""

import dagster as dg

from assets.batch import batch_metadata, check_specs, run_checks, work_batch
from assets.company_records import parse_downloaded
from assets.court_partitions import register_court_partitions_def
from assets.court_reporting import report_documents
from assets.keys import DISCOVERED_ENTITIES, RAW_SI_DOCUMENTS
from orchestration.jobs.specs import JobTypeSpec
from orchestration.records.court_state import SI_RECORDS
from resources.database import DatabaseResource
from resources.job_queue import JobQueueResource
from resources.stages import StagesResource


def build_discovery_asset(spec: JobTypeSpec, parsing: JobTypeSpec) -> dg.AssetsDefinition:
    """The entities and documents ``spec``'s jobs discover; what a person opened is parsed in the
    same run, by ``parsing``'s stage."""

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
                description="Their SI documents (XJustiz XML) as downloaded, content-addressed "
                "(content.raw_documents), by register court; a partition's data version is the "
                "fingerprint of its companies' current documents.",
            ),
        ],
        check_specs=check_specs(spec.checks, DISCOVERED_ENTITIES),
        name=spec.name,
    )
    def discovery(
        context: dg.AssetExecutionContext,
        database: DatabaseResource,
        stages: StagesResource,
        job_queue: JobQueueResource,
    ):
        engine = database.get_engine()
        report = work_batch(context, engine, stages.stage(spec), max_batches=job_queue.max_batches_per_run)
        yield dg.MaterializeResult(
            asset_key=DISCOVERED_ENTITIES,
            metadata=batch_metadata(report, {"register": stages.register_resource.register_kind}),
        )
        yield from report_documents(
            engine,
            RAW_SI_DOCUMENTS,
            SI_RECORDS.document_fingerprints,
            report.entity_ids,
            {"run_si_downloaded": report.totals["si_downloaded"], "run_si_fresh": report.totals["si_fresh"]},
        )
        yield from run_checks(engine, spec.checks, report, DISCOVERED_ENTITIES)
        yield from parse_downloaded(context, engine, stages.stage(parsing), report.entity_ids)

    return discovery
