"""Shareholder lists: the documents from the DK tree, the shareholders read from them, and the
ownership graph as a pandas DataFrame."""

import functools

import dagster as dg
import sqlalchemy as sa

from assets.batch import BatchCheck, batch_metadata, retry_policy_for, work_batch
from assets.partitions import court_backfill_policy, register_court_partitions_def, reparse_courts, work_queue_by_court
from orchestration.queue import JobType
from orchestration.reparse import SHAREHOLDER_LIST_REREAD, reparse_court
from orchestration.shareholders.store import load_shareholders, review_summary
from orchestration.shareholders.version import PARSER_VERSION as SHAREHOLDER_READER_VERSION
from orchestration.stages.shareholder_download import ShareholderDownloadStage
from orchestration.stages.shareholder_parsing import ShareholderParsingStage
from resources.database import DatabaseResource
from resources.documents import DocumentStoreResource
from resources.register import RegisterResource
from resources.shareholders import ShareholderExtractorResource

SHAREHOLDER_LIST_DOCUMENTS = dg.AssetKey("shareholder_list_documents")
SHAREHOLDERS = dg.AssetKey("shareholders")
OWNERSHIP_GRAPH = dg.AssetKey("ownership_graph")

reread_lists = functools.partial(reparse_court, redo=SHAREHOLDER_LIST_REREAD)


def _failed_validation(check_name: str) -> sa.TextClause:
    """Counts the batch's entities whose newest list fails the named validation check."""
    return sa.text(f"""
        SELECT count(*) FROM (
            SELECT DISTINCT ON (entity_id) validation FROM content.shareholder_lists
             WHERE entity_id = ANY(CAST(:entity_ids AS uuid[]))
             ORDER BY entity_id, id DESC) latest
         WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(latest.validation -> 'checks') c
                        WHERE c ->> 'name' = '{check_name}' AND c ->> 'status' = 'failed')
    """)


_NEEDS_REVIEW = sa.text("""
    SELECT count(*) FROM (
        SELECT DISTINCT ON (entity_id) valid FROM content.shareholder_lists
         WHERE entity_id = ANY(CAST(:entity_ids AS uuid[]))
         ORDER BY entity_id, id DESC) latest
     WHERE NOT latest.valid
""")

SHAREHOLDER_CHECKS: list[BatchCheck] = [
    (
        "lists_verified",
        "every newest list is verified: all checks passed, no cell read with low confidence "
        "(otherwise it is stored as needs_review)",
        _NEEDS_REVIEW,
    ),
    (
        "read_confidently",
        "no cell that carries a value was read with low OCR confidence",
        _failed_validation("read_confidently"),
    ),
    (
        "percentages_sum_to_100",
        "shareholder percentages sum to 100 within the rounding GesLV §4 allows",
        _failed_validation("percentages_sum_to_100"),
    ),
    (
        "nominal_sum_matches_capital",
        "nominal amounts sum to the capital of the parsed register data",
        _failed_validation("nominal_sum_matches_capital"),
    ),
    (
        "shares_numbered",
        "every share has a running number, without gaps or repeats",
        _failed_validation("shares_numbered"),
    ),
]


def build_shareholder_list_documents_asset(job_type: JobType) -> dg.AssetsDefinition:
    @dg.asset(
        key=SHAREHOLDER_LIST_DOCUMENTS,
        deps=[dg.AssetKey("company_records")],
        retry_policy=retry_policy_for(job_type),
        group_name="shareholders",
        kinds={"pdf"},
        description="Shareholder lists (Gesellschafterliste) downloaded from the DK tree, content-addressed "
        "(content.raw_documents); each run works one batch of due shareholder_download jobs.",
    )
    def shareholder_list_documents(
        context: dg.AssetExecutionContext,
        database: DatabaseResource,
        documents: DocumentStoreResource,
        register: RegisterResource,
    ) -> dg.MaterializeResult:
        stage = ShareholderDownloadStage(register.get_client, documents.get_store())
        report = work_batch(context, database.get_engine(), stage)
        return dg.MaterializeResult(metadata=batch_metadata(report, {"register": register.kind}))

    return shareholder_list_documents


def build_shareholders_asset(job_type: JobType) -> dg.AssetsDefinition:
    @dg.asset(
        key=SHAREHOLDERS,
        deps=[SHAREHOLDER_LIST_DOCUMENTS],
        code_version=SHAREHOLDER_READER_VERSION,
        partitions_def=register_court_partitions_def,
        backfill_policy=court_backfill_policy,
        output_required=False,  # materialized per court partition by the asset itself
        retry_policy=retry_policy_for(job_type),
        group_name="shareholders",
        kinds={"postgres"},
        description="Shareholders read from the lists as tables (text layer or OCR, rules or LLM), one "
        "revision per list, verified or needs_review with its failed checks and low-confidence cells "
        "(content.shareholder_lists, content.shareholders).",
        check_specs=[dg.AssetCheckSpec(name, asset=SHAREHOLDERS, description=d) for name, d, _ in SHAREHOLDER_CHECKS],
    )
    def shareholders(
        context: dg.AssetExecutionContext,
        database: DatabaseResource,
        documents: DocumentStoreResource,
        shareholder_extractor: ShareholderExtractorResource,
    ):
        engine = database.get_engine()
        stage = ShareholderParsingStage(documents.get_store(), shareholder_extractor.parse)
        # A run for courts re-reads their stored lists; a run without a partition works the queue.
        if context.has_partition_key or context.has_partition_key_range:
            report = yield from reparse_courts(
                context,
                engine,
                stage,
                SHAREHOLDERS,
                SHAREHOLDER_READER_VERSION,
                SHAREHOLDER_CHECKS,
                written="new_list",
                reparse=reread_lists,
            )
        else:
            report = yield from work_queue_by_court(
                context, engine, stage, SHAREHOLDERS, SHAREHOLDER_READER_VERSION, SHAREHOLDER_CHECKS, written="new_list"
            )
        # Which lists a person should look at: one observation for the run's lists, whatever their courts.
        with engine.connect() as conn:
            review = review_summary(conn, sorted(set(report.entity_ids)))
        yield dg.AssetObservation(
            asset_key=SHAREHOLDERS,
            metadata={
                "lists_verified": review["verified"],
                "lists_needing_review": review["needs_review"],
                "to_review": dg.MetadataValue.json(review["to_review"]),
            },
        )

    return shareholders


@dg.asset(
    key=OWNERSHIP_GRAPH,
    deps=[SHAREHOLDERS],
    io_manager_key="ownership_graph_io_manager",
    group_name="shareholders",
    kinds={"pandas"},
    description="Who holds what: each company's newest shareholder list as rows of a DataFrame, corporate "
    "shareholders linked to their own entity (linked_entity_id), for analysis in pandas.",
)
def ownership_graph(database: DatabaseResource) -> dg.Output:
    with database.get_engine().connect() as conn:
        frame = load_shareholders(conn)
    return dg.Output(
        frame,
        metadata={
            "rows": len(frame),
            "companies": int(frame["entity_id"].nunique()) if len(frame) else 0,
            "corporate_links": int(frame["linked_entity_id"].notna().sum()) if len(frame) else 0,
            "preview": dg.MetadataValue.md(frame.head(20).to_markdown() if len(frame) else "(empty)"),
        },
    )
