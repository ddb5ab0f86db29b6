"""Parsed XML: the canonical company records, one revision per change, from xml_parsing jobs."""

from typing import Literal

import dagster as dg
import sqlalchemy as sa
from pydantic import Field

from assets.batch import BatchCheck, batch_metadata, retry_policy_for, run_checks, work_batch
from orchestration.queue import JobType
from orchestration.reparse import ReparseScope, enqueue_reparse
from orchestration.stages.parsing import XmlParsingStage
from orchestration.xjustiz import PARSER_VERSION
from resources.database import DatabaseResource
from resources.documents import DocumentStoreResource

COMPANY_RECORDS = dg.AssetKey("company_records")

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


class CompanyRecordsConfig(dg.Config):
    reparse: Literal["stale", "all", "none"] = Field(
        "stale",
        description="Before working the queue, queue parser_change re-parses of the stored SI documents: "
        "'stale' those no job of this parser version has taken (what a parser change leaves to do), "
        "'all' every one, 'none' nothing (what the sensor's runs ask for).",
    )


# What the xml_parsing sensor's runs ask for: just the queue.
SENSOR_RUN_CONFIG = {"ops": {"company_records": {"config": {"reparse": "none"}}}}


def build_company_records_asset(job_type: JobType) -> dg.AssetsDefinition:
    @dg.asset(
        key=COMPANY_RECORDS,
        deps=[dg.AssetKey("raw_si_documents")],
        code_version=PARSER_VERSION,
        retry_policy=retry_policy_for(job_type),
        group_name="register",
        kinds={"postgres", "xml"},
        description="Canonical company records parsed from the SI documents (content.entity_revisions); "
        "each run works one batch of due xml_parsing jobs.",
        check_specs=[dg.AssetCheckSpec(name, asset=COMPANY_RECORDS, description=d) for name, d, _ in COMPANY_RECORD_CHECKS],
    )
    def company_records(
        context: dg.AssetExecutionContext,
        config: CompanyRecordsConfig,
        database: DatabaseResource,
        documents: DocumentStoreResource,
    ):
        engine = database.get_engine()
        queued = 0
        if config.reparse != "none":
            with engine.begin() as conn:
                queued = enqueue_reparse(
                    conn, ReparseScope(stale_only=config.reparse == "stale"), parser_version=PARSER_VERSION
                )
            context.log.info(f"queued {queued} parser_change re-parses ({config.reparse}) for parser {PARSER_VERSION}")
        report = work_batch(context, engine, XmlParsingStage(documents.get_store()))
        yield dg.MaterializeResult(
            asset_key=COMPANY_RECORDS,
            metadata=batch_metadata(report, {"parser_version": PARSER_VERSION, "reparses_queued": queued}),
        )
        yield from run_checks(engine, COMPANY_RECORD_CHECKS, report, COMPANY_RECORDS)

    return company_records
