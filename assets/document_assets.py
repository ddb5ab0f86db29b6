"""The assets of documents that job types download (shareholder lists, printouts), made from the
``DocumentAsset`` their specs declare (orchestration.jobs.specs): a new type of download needs no
asset code of its own.

Only the queue's runs download them, and a run spans courts: the asset is a court-partitioned
``AssetSpec`` that the type's queue run reports, a materialization per court whose companies it
touched, with the fingerprint of their newest documents as the partition's data version.
"""

from __future__ import annotations

from collections.abc import Generator

import dagster as dg
from sqlalchemy.engine import Engine

from assets.batch import batch_metadata, work_batch
from assets.court_partitions import register_court_partitions_def
from assets.court_reporting import report_documents
from assets.queue_runs import QueueWork
from orchestration.jobs.specs import DocumentAsset, JobTypeSpec
from orchestration.records import court_state
from orchestration.runtime.worker import BatchReport
from resources.stages import StagesResource


def declared(spec: JobTypeSpec) -> DocumentAsset:
    if spec.document_asset is None:
        raise ValueError(f"{spec.name} declares no document asset")
    return spec.document_asset


def document_asset(spec: JobTypeSpec) -> dg.AssetSpec:
    """The court-partitioned asset of the documents ``spec``'s jobs download."""
    documents = declared(spec)
    return dg.AssetSpec(
        key=documents.key,
        deps=[documents.follows],
        partitions_def=register_court_partitions_def,
        group_name=documents.group,
        kinds={documents.kind},
        description=f"{documents.description}, content-addressed (content.raw_documents), by register court; "
        f"each run of {spec.name}_job works batches of due {spec.name} jobs. A partition's data version is "
        "the fingerprint of its companies' newest documents.",
    )


def documents_from_the_queue(spec: JobTypeSpec) -> QueueWork:
    """The queue run of ``spec``'s sensor: batches of due jobs, then the courts' documents reported."""
    documents = declared(spec)
    key = dg.AssetKey(documents.key)
    fingerprints = court_state.QUERIES[documents.fingerprints]

    def work(
        context: dg.OpExecutionContext, engine: Engine, stages: StagesResource, spec: JobTypeSpec, max_batches: int
    ) -> Generator[dg.AssetMaterialization, None, BatchReport]:
        report = work_batch(context, engine, stages.stage(spec), max_batches=max_batches)
        metadata = batch_metadata(report, {"register": stages.register_resource.register_kind})
        yield from report_documents(engine, key, fingerprints, report.entity_ids, metadata)
        return report

    # The op's name and description (assets.queue_runs.queue_op).
    work.__name__ = f"{documents.key}_from_the_queue"
    work.__doc__ = f"Works batches of due {spec.name} jobs and reports the courts' {documents.key}."
    return work
