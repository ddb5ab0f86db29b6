"""Shareholder lists: the documents from the DK tree, the shareholders read from them, and the
ownership graph as a pandas DataFrame."""

import functools

import dagster as dg
from sqlalchemy.engine import Engine

from assets.batch import BatchCheck, as_op_events, batch_metadata, check_specs, work_batch
from assets.court_backfill import reparse_courts
from assets.court_partitions import CourtBackfills, register_court_partitions_def
from assets.court_reporting import ParsedCourts, report_documents, work_queue_by_court
from assets.keys import COMPANY_RECORDS
from orchestration.records.court_state import SHAREHOLDER_RECORDS
from orchestration.records.reparse import SHAREHOLDER_LIST_REREAD, reparse_court
from orchestration.runtime.worker import BatchReport
from orchestration.shareholders.reader_version import PARSER_VERSION as SHAREHOLDER_READER_VERSION
from orchestration.shareholders.store import load_shareholders, review_summary
from orchestration.stages.shareholder_download import ShareholderDownloadStage
from orchestration.stages.shareholder_parsing import ShareholderParsingStage
from resources.database import DatabaseResource
from resources.documents import DocumentStoreResource
from resources.job_queue import JobQueueResource
from resources.register import RegisterResource
from resources.shareholders import ShareholderExtractorResource

SHAREHOLDER_LIST_DOCUMENTS = dg.AssetKey("shareholder_list_documents")
SHAREHOLDERS = dg.AssetKey("shareholders")
OWNERSHIP_GRAPH = dg.AssetKey("ownership_graph")


def parsed_shareholders() -> ParsedCourts:
    """shareholders as read by the reader version of this code."""
    return ParsedCourts(
        SHAREHOLDERS,
        SHAREHOLDER_LIST_DOCUMENTS,
        SHAREHOLDER_READER_VERSION,
        SHAREHOLDER_RECORDS,
        SHAREHOLDER_CHECKS,
        written="new_list",
    )


reread_lists = functools.partial(reparse_court, redo=SHAREHOLDER_LIST_REREAD)


def _validation_check(name: str, description: str) -> BatchCheck:
    """The batch's entities whose newest list fails the shareholder-list validation check ``name``."""
    return BatchCheck(name, description, "lists_failing_check", {"check_name": name})


SHAREHOLDER_CHECKS = [
    BatchCheck(
        "lists_verified",
        "every newest list is verified: all checks passed, no cell read with low confidence "
        "(otherwise it is stored as needs_review)",
        "lists_needing_review",
    ),
    _validation_check(
        "read_confidently",
        "no cell that carries a value was read with low OCR confidence",
    ),
    _validation_check(
        "percentages_sum_to_100",
        "shareholder percentages sum to 100 within the rounding GesLV §4 allows",
    ),
    _validation_check(
        "nominal_sum_matches_capital",
        "nominal amounts sum to the capital of the parsed register data",
    ),
    _validation_check(
        "shares_numbered",
        "every share has a running number, without gaps or repeats",
    ),
]


# Downloaded only by the queue's runs, which span courts: an asset the op below reports, per court.
shareholder_list_documents = dg.AssetSpec(
    key=SHAREHOLDER_LIST_DOCUMENTS,
    deps=[COMPANY_RECORDS],
    partitions_def=register_court_partitions_def,
    group_name="shareholders",
    kinds={"pdf"},
    description="Shareholder lists (Gesellschafterliste) downloaded from the DK tree, content-addressed "
    "(content.raw_documents), by register court; each run of shareholder_download_job works batches of "
    "due shareholder_download jobs. A partition's data version is the fingerprint of its companies' "
    "newest lists.",
)


@dg.op(out={}, description="Works batches of due shareholder_download jobs and reports the courts' lists.")
def shareholder_list_documents_from_the_queue(
    context: dg.OpExecutionContext,
    database: DatabaseResource,
    documents: DocumentStoreResource,
    register: RegisterResource,
    job_queue: JobQueueResource,
):
    engine = database.get_engine()
    stage = ShareholderDownloadStage(register.get_client, documents.get_store())
    report = work_batch(context, engine, stage, max_batches=job_queue.max_batches_per_run)
    yield from report_documents(
        engine,
        SHAREHOLDER_LIST_DOCUMENTS,
        SHAREHOLDER_RECORDS,
        report.entity_ids,
        batch_metadata(report, {"register": register.register_kind}),
    )


def build_shareholders_asset(backfills: CourtBackfills) -> dg.AssetsDefinition:
    @dg.asset(
        key=SHAREHOLDERS,
        deps=[SHAREHOLDER_LIST_DOCUMENTS],
        code_version=SHAREHOLDER_READER_VERSION,
        partitions_def=register_court_partitions_def,
        backfill_policy=backfills.policy,
        output_required=False,  # materialized per court partition by the asset itself
        group_name="shareholders",
        kinds={"postgres"},
        description="Shareholders read from the lists as tables (text layer or OCR, rules or LLM), one "
        "revision per list, verified or needs_review with its failed checks and low-confidence cells "
        "(content.shareholder_lists, content.shareholders).",
        check_specs=check_specs(SHAREHOLDER_CHECKS, SHAREHOLDERS),
    )
    def shareholders(
        context: dg.AssetExecutionContext,
        database: DatabaseResource,
        documents: DocumentStoreResource,
        shareholder_extractor: ShareholderExtractorResource,
    ):
        engine = database.get_engine()
        stage = ShareholderParsingStage(documents.get_store(), shareholder_extractor.parse)
        report = yield from reparse_courts(
            context,
            engine,
            stage,
            parsed_shareholders(),
            give_way_seconds=backfills.give_way_seconds,
            reparse=reread_lists,
        )
        yield review_observation(engine, report)

    return shareholders


def review_observation(engine: Engine, report: BatchReport) -> dg.AssetObservation:
    """Which lists a person should look at: one observation for a run's lists, whatever their courts."""
    with engine.connect() as conn:
        review = review_summary(conn, sorted(set(report.entity_ids)))
    return dg.AssetObservation(
        asset_key=SHAREHOLDERS,
        metadata={
            "lists_verified": review["verified"],
            "lists_needing_review": review["needs_review"],
            "to_review": dg.MetadataValue.json(review["to_review"]),
        },
    )


@dg.op(
    out={},
    description="Works batches of due shareholder_parsing jobs and reports the shareholders of the courts touched.",
)
def shareholders_from_the_queue(
    context: dg.OpExecutionContext,
    database: DatabaseResource,
    documents: DocumentStoreResource,
    shareholder_extractor: ShareholderExtractorResource,
    job_queue: JobQueueResource,
):
    engine = database.get_engine()
    stage = ShareholderParsingStage(documents.get_store(), shareholder_extractor.parse)
    report = yield from as_op_events(
        work_queue_by_court(context, engine, stage, parsed_shareholders(), max_batches=job_queue.max_batches_per_run)
    )
    yield review_observation(engine, report)


@dg.asset(
    key=OWNERSHIP_GRAPH,
    deps=[SHAREHOLDERS],
    # Rebuilt once the shareholder runs in progress are done, whenever a court of shareholders changed.
    # Courts never read are missing partitions of its input, not a reason to wait: eager() without
    # its any_deps_missing, which would hold the graph back until every court had a list.
    automation_condition=dg.AutomationCondition.eager().without(~dg.AutomationCondition.any_deps_missing()),
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


ownership_graph_sensor = dg.AutomationConditionSensorDefinition(
    "ownership_graph_sensor",
    target=[OWNERSHIP_GRAPH],
    default_status=dg.DefaultSensorStatus.RUNNING,
    minimum_interval_seconds=30,
    description="Requests a run of ownership_graph after shareholder runs changed its input.",
)
