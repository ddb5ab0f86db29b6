"""Each job type, declared once: what its jobs do (its stage), how often its sensor polls, how its
work is chunked, the version it stamps and, for a parsed asset partitioned by register court, how
the courts' state is read and their stored documents redone, or, for a type that downloads
documents, the court-partitioned asset they make.

The rest of the code names a job type only through these specs (tests/test_architecture.py holds
it to that); processing.job_types holds the settings an operator changes without a deploy
(retries, leases, batch sizes), and a test proves that its rows and these specs agree.

A deployment's specs are configuration: a code location is built from a ``JobTypes`` (by default
``JOB_TYPES``, this code's), and `hreg db upgrade` writes the versions they stamp into
processing.job_types (orchestration.db.migrate.sync_job_types). A new parser version is deployed
as ``JOB_TYPES.deploying(...)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from orchestration.jobs.checks import COMPANY_RECORD_CHECKS, DISCOVERY_CHECKS, SHAREHOLDER_CHECKS, BatchCheck
from orchestration.records.court_state import SHAREHOLDER_RECORDS, SI_RECORDS, CourtStateQueries
from orchestration.records.documents import DocumentStore
from orchestration.records.reparse import SHAREHOLDER_LIST_REREAD, SI_REPARSE, StoredDocumentRedo
from orchestration.register.client import RegisterClient
from orchestration.register.ratelimit import Priority
from orchestration.runtime.worker import Stage
from orchestration.shareholders.reader_version import PARSER_VERSION as SHAREHOLDER_READER_VERSION
from orchestration.stages.discovery import DiscoveryStage
from orchestration.stages.parsing import XmlParsingStage
from orchestration.stages.printout_download import PrintoutDownloadStage
from orchestration.stages.shareholder_download import ShareholderDownloadStage
from orchestration.stages.shareholder_parsing import Extract, ShareholderParsingStage
from orchestration.xjustiz import parse_si
from orchestration.xjustiz.parser_version import PARSER_VERSION


@dataclass(frozen=True)
class StageTools:
    """What the stages work with, taken from the code location's resources."""

    documents: DocumentStore
    register_client: Callable[[Priority], RegisterClient]
    extract_shareholders: Extract
    result_pages: int
    search_opens: tuple[str, int]
    fresh_for: timedelta


@dataclass(frozen=True)
class CourtParsing:
    """A parsed asset partitioned by register court: its courts' state (which parser version has
    done which company), how a backfill redoes their stored documents, and the result flag of a
    job that wrote a new version of what it parsed."""

    queries: CourtStateQueries
    redo: StoredDocumentRedo
    written: str


@dataclass(frozen=True)
class DocumentAsset:
    """The asset of the documents a job type downloads, partitioned by register court: the code
    location makes it, and the queue run of the type's sensor that reports it, from this
    declaration (assets/document_assets.py). ``fingerprints`` names the query of
    db/sql/queries/court_state.sql that gives each court's fingerprint of its companies' newest
    documents, the data version of its partition."""

    key: str
    fingerprints: str
    # The asset the documents are downloaded for (its key), where the UI shows them, and as what
    # (the asset's description adds how they are stored and reported).
    follows: str
    group: str
    kind: str
    description: str


@dataclass(frozen=True)
class JobTypeSpec:
    name: str
    # processing.job_types.stage: its place in the pipeline; None for a request beside it, which
    # waits for no earlier stage of its company and holds no later one back (processing.due_jobs).
    step: int | None
    build_stage: Callable[[JobTypeSpec, StageTools], Stage]
    sensor_interval_seconds: int
    # People first: the register's retrievals of its background jobs hold only a few claims
    # (processing.job_types.background_slots), so a person's job never waits behind them.
    people_first: bool
    # Jobs processed and reported per transaction: large for cheap CPU work, 1 for slow I/O.
    chunk_size: int
    # What the asset checks over each batch its runs work.
    checks: tuple[BatchCheck, ...] = ()
    # The version its jobs stamp (processing.job_types.current_version), and what parses.
    version: str | None = None
    parse: Callable[[bytes], Any] | None = None
    courts: CourtParsing | None = None
    # The asset of the documents it downloads, which its sensor's runs report.
    document_asset: DocumentAsset | None = None

    def stage(self, tools: StageTools) -> Stage:
        return self.build_stage(self, tools)


@dataclass(frozen=True)
class JobTypes:
    """The job types of a deployment, in pipeline order; each field is named as its type."""

    basic_discovery: JobTypeSpec
    xml_parsing: JobTypeSpec
    shareholder_download: JobTypeSpec
    shareholder_parsing: JobTypeSpec
    printout_download: JobTypeSpec

    def __iter__(self) -> Iterator[JobTypeSpec]:
        return (getattr(self, field.name) for field in dataclasses.fields(self))

    def versions(self) -> dict[str, str]:
        """The version each versioned type stamps, which processing.job_types must name."""
        return {spec.name: spec.version for spec in self if spec.version is not None}

    def deploying(self, spec: JobTypeSpec, version: str, parse: Callable[[bytes], Any] | None = None) -> JobTypes:
        """These job types with ``spec``'s parser replaced: ``version``, and ``parse`` unless None."""
        deployed = dataclasses.replace(spec, version=version, parse=parse or spec.parse)
        return dataclasses.replace(self, **{spec.name: deployed})


JOB_TYPES = JobTypes(
    basic_discovery=JobTypeSpec(
        "basic_discovery",
        step=1,
        build_stage=lambda spec, tools: DiscoveryStage(
            spec,
            tools.register_client,
            tools.documents,
            result_pages=tools.result_pages,
            search_opens=tools.search_opens,
            fresh_for=tools.fresh_for,
        ),
        # Discovery is what a person waits for.
        sensor_interval_seconds=5,
        people_first=True,
        chunk_size=1,
        checks=DISCOVERY_CHECKS,
    ),
    xml_parsing=JobTypeSpec(
        "xml_parsing",
        step=2,
        build_stage=lambda spec, tools: XmlParsingStage(spec, tools.documents),
        sensor_interval_seconds=5,
        people_first=False,
        # Parsing is CPU work of ~0.2 ms a document: large chunks keep the database round trips rare.
        chunk_size=250,
        checks=COMPANY_RECORD_CHECKS,
        version=PARSER_VERSION,
        parse=parse_si,
        courts=CourtParsing(SI_RECORDS, SI_REPARSE, written="new_revision"),
    ),
    shareholder_download=JobTypeSpec(
        "shareholder_download",
        step=3,
        build_stage=lambda spec, tools: ShareholderDownloadStage(spec, tools.register_client, tools.documents),
        sensor_interval_seconds=10,
        people_first=True,
        chunk_size=1,
        document_asset=DocumentAsset(
            "shareholder_list_documents",
            fingerprints="shareholder_list_fingerprints",
            follows="company_records",
            group="shareholders",
            kind="pdf",
            description="Shareholder lists (Gesellschafterliste) downloaded from the DK tree",
        ),
    ),
    shareholder_parsing=JobTypeSpec(
        "shareholder_parsing",
        step=4,
        build_stage=lambda spec, tools: ShareholderParsingStage(spec, tools.documents, tools.extract_shareholders),
        sensor_interval_seconds=10,
        people_first=False,
        chunk_size=1,
        checks=SHAREHOLDER_CHECKS,
        version=SHAREHOLDER_READER_VERSION,
        courts=CourtParsing(SHAREHOLDER_RECORDS, SHAREHOLDER_LIST_REREAD, written="new_list"),
    ),
    printout_download=JobTypeSpec(
        "printout_download",
        # Beside the pipeline: a person's printout waits for none of the company's other jobs.
        step=None,
        build_stage=lambda spec, tools: PrintoutDownloadStage(
            spec, tools.register_client, tools.documents, tools.fresh_for
        ),
        # A person waits for it, as for discovery.
        sensor_interval_seconds=5,
        people_first=True,
        chunk_size=1,
        document_asset=DocumentAsset(
            "printouts",
            fingerprints="printout_fingerprints",
            follows="discovered_entities",
            group="register",
            kind="pdf",
            description="Current printouts (AD, Aktueller Abdruck) of the companies people asked for",
        ),
    ),
)
