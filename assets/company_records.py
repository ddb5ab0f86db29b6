"""Parsed XML: the canonical company records, one revision per change, from the parsing jobs."""

from collections.abc import Generator, Iterator, Sequence

import dagster as dg
from sqlalchemy.engine import Engine

from assets.batch import check_specs
from assets.court_backfill import reparse_courts
from assets.court_partitions import CourtBackfills, register_court_partitions_def
from assets.court_reporting import ParsedCourts, work_queue_by_court
from assets.keys import COMPANY_RECORDS, RAW_SI_DOCUMENTS
from assets.queue_runs import parsed_courts
from orchestration.jobs.specs import JobTypeSpec
from orchestration.runtime import queue
from orchestration.runtime.worker import BatchAborted, BatchReport, Stage, work_claimed
from resources.database import DatabaseResource
from resources.stages import StagesResource


def parsed_company_records(spec: JobTypeSpec) -> ParsedCourts:
    """company_records as parsed by the parser ``spec`` deploys."""
    return parsed_courts(spec, COMPANY_RECORDS, RAW_SI_DOCUMENTS)


def parse_downloaded(
    context: dg.AssetExecutionContext, engine: Engine, stage: Stage, entity_ids: Sequence[str]
) -> Iterator[dg.AssetMaterialization | dg.AssetObservation | dg.AssetCheckResult]:
    """Parse, in this run, the documents a person's discovery run has just stored: the due
    interactive parsing jobs of ``entity_ids`` (which the database queued for them), so that
    opening a company takes one run. They are worked by the parsing ``stage`` as a sensor's run
    works them (same jobs, step history with this run's id) and reported as company_records of
    their courts."""
    run_id = context.run.run_id
    with engine.begin() as conn:
        lease_seconds = queue.job_types(conn)[stage.job_type].lease_seconds
        jobs = queue.claim_interactive_for_entities(conn, stage.job_type, entity_ids, run_id, lease_seconds)
    if not jobs:
        return
    try:
        report = work_claimed(engine, stage, run_id, jobs, lease_seconds)
    except BatchAborted as exc:
        # The downloads stand; the parses left over go back to the queue through the lease reaper.
        context.log.warning(f"parsing the downloaded documents: {exc}")
        return
    context.log.info(f"{stage.job_type}: parsed {report.completed} downloaded documents, failed {report.failed}")
    # The checks of company_records belong to its own runs, which take every other parse.
    parsed = parsed_company_records(stage.spec)
    yield from work_queue_by_court(context, engine, stage, parsed, report=report, checked=False)


def build_company_records_asset(backfills: CourtBackfills, spec: JobTypeSpec) -> dg.AssetsDefinition:
    """company_records as ``spec``'s parser reads them."""

    @dg.asset(
        key=COMPANY_RECORDS,
        deps=[RAW_SI_DOCUMENTS],
        code_version=spec.version,
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
        check_specs=check_specs(spec.checks, COMPANY_RECORDS),
    )
    def company_records(context: dg.AssetExecutionContext, database: DatabaseResource, stages: StagesResource):
        yield from reparse_courts(
            context,
            database.get_engine(),
            stages.stage(spec),
            parsed_company_records(spec),
            give_way_seconds=backfills.give_way_seconds,
        )

    return company_records


def company_records_from_the_queue(
    context: dg.OpExecutionContext, engine: Engine, stages: StagesResource, spec: JobTypeSpec, max_batches: int
) -> Generator[dg.AssetMaterialization | dg.AssetObservation | dg.AssetCheckResult, None, BatchReport]:
    """Works batches of due xml_parsing jobs and reports the company_records of the courts touched."""
    return work_queue_by_court(
        context, engine, stages.stage(spec), parsed_company_records(spec), max_batches=max_batches
    )
