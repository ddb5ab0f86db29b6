"""Shareholders read from the lists downloaded from the DK tree (assets.document_assets), and the
ownership graph as a pandas DataFrame."""

from collections.abc import Generator

import dagster as dg
from sqlalchemy.engine import Engine

from assets.batch import check_specs
from assets.court_backfill import reparse_courts
from assets.court_partitions import CourtBackfills, register_court_partitions_def
from assets.court_reporting import ParsedCourts, work_queue_by_court
from assets.document_assets import declared
from assets.queue_runs import parsed_courts
from orchestration.jobs.specs import JOB_TYPES, JobTypeSpec
from orchestration.runtime.worker import BatchReport
from orchestration.shareholders.store import load_shareholders, review_summary
from resources.database import DatabaseResource
from resources.stages import StagesResource

# The lists are downloaded by shareholder_download jobs, into the asset their spec declares.
SHAREHOLDER_LIST_DOCUMENTS = dg.AssetKey(declared(JOB_TYPES.shareholder_download).key)
SHAREHOLDERS = dg.AssetKey("shareholders")
OWNERSHIP_GRAPH = dg.AssetKey("ownership_graph")


def parsed_shareholders(spec: JobTypeSpec) -> ParsedCourts:
    """shareholders as read by the reader version ``spec`` deploys."""
    return parsed_courts(spec, SHAREHOLDERS, SHAREHOLDER_LIST_DOCUMENTS)


def build_shareholders_asset(backfills: CourtBackfills, spec: JobTypeSpec) -> dg.AssetsDefinition:
    """shareholders as ``spec``'s reader reads them."""

    @dg.asset(
        key=SHAREHOLDERS,
        deps=[SHAREHOLDER_LIST_DOCUMENTS],
        code_version=spec.version,
        partitions_def=register_court_partitions_def,
        backfill_policy=backfills.policy,
        output_required=False,  # materialized per court partition by the asset itself
        group_name="shareholders",
        kinds={"postgres"},
        description="Shareholders read from the lists as tables (text layer or OCR, rules or LLM), one "
        "revision per list, verified or needs_review with its failed checks and low-confidence cells "
        "(content.shareholder_lists, content.shareholders).",
        check_specs=check_specs(spec.checks, SHAREHOLDERS),
    )
    def shareholders(context: dg.AssetExecutionContext, database: DatabaseResource, stages: StagesResource):
        engine = database.get_engine()
        report = yield from reparse_courts(
            context, engine, stages.stage(spec), parsed_shareholders(spec), give_way_seconds=backfills.give_way_seconds
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


def shareholders_from_the_queue(
    context: dg.OpExecutionContext, engine: Engine, stages: StagesResource, spec: JobTypeSpec, max_batches: int
) -> Generator[dg.AssetMaterialization | dg.AssetObservation | dg.AssetCheckResult, None, BatchReport]:
    """Works batches of due shareholder_parsing jobs and reports the shareholders of the courts touched."""
    report = yield from work_queue_by_court(
        context, engine, stages.stage(spec), parsed_shareholders(spec), max_batches=max_batches
    )
    yield review_observation(engine, report)
    return report


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
