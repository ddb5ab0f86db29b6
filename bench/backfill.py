"""Parser-change backfill at register scale: re-parse every stored SI document, as the product does.

Set-up (not measured): ENTITIES entities whose SI documents are cloned from the samples with
varied register numbers, loaded in chunks and parsed once. The sample above the inline limit
(the 600 KB history of one large company) is left out: a few thousand copies of it would take
most of the parse time and hide the per-document cost of the backfill.

Measured, each as the UI-launched backfill does it (enqueue_reparse, then runs that work due
xml_parsing jobs batch after batch; a run here is a worker process running run_batches, and
WORKERS of them run at once, as the sensor's runs help the launched one):

(a) a version bump whose output is unchanged: every document is re-parsed, nothing written;
(b) a parser change that renames every 10th company: only those get a new revision.

In the same run, the plain parser loop (parse_si over the same documents in one process,
timing the parse calls only) gives the throughput the backfill is compared with. The backfill's
workers share the machine's cores with PostgreSQL; the log also gives the ratio per worker
process (the backfill against WORKERS such parser loops).

Last line: one JSON object with entities, wall_s (both re-parses), runs_launched,
entities_per_s, parser_only_per_s, ratio, revisions_written_noop, revisions_written_changed,
expected_changed and peak_rss_mb (the largest of this process and its workers).

    .venv/bin/python -m bench.backfill                       # 100,000 entities, 2 workers
    BENCH_ENTITIES=10000 BENCH_WORKERS=1 .venv/bin/python -m bench.backfill
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

import orchestration.stages.parsing
from bench.common import bench_database, iter_cloned_documents, load_entities, log, peak_rss_mb
from orchestration import queue
from orchestration.db.engine import create_app_engine
from orchestration.documents import INLINE_LIMIT_BYTES, DocumentStore
from orchestration.reparse import ReparseScope, enqueue_reparse
from orchestration.settings import get_settings
from orchestration.stages.parsing import XmlParsingStage
from orchestration.worker import run_batches
from orchestration.xjustiz import PARSER_VERSION, parse_si

ENTITIES = int(os.environ.get("BENCH_ENTITIES", "100000"))
WORKERS = int(os.environ.get("BENCH_WORKERS", "2"))
CHANGED_EVERY = 10
UNCHANGED_VERSION = f"{PARSER_VERSION}-bench-unchanged"
CHANGED_VERSION = f"{PARSER_VERSION}-bench-changed"


def renaming_parse_si(data: bytes, **options):
    """The changed parser: it names every 10th company (by register number) differently."""
    record = parse_si(data, **options)
    if int(record.register.number) % CHANGED_EVERY == 0:
        record = record.model_copy(update={"name": f"{record.name} (neu)"})
    return record


@dataclass(frozen=True)
class RunResult:
    claimed: int = 0
    completed: int = 0
    failed: int = 0

    def __add__(self, other: RunResult) -> RunResult:
        return RunResult(self.claimed + other.claimed, self.completed + other.completed, self.failed + other.failed)


def work_run(url: str, documents_dir: str, worker_id: str, changed_parser: bool) -> RunResult:
    """One run in its own process: batches of due xml_parsing jobs until none is due."""
    if changed_parser:
        # What deploying the new parser code does to this process.
        orchestration.stages.parsing.parse_si = renaming_parse_si
    engine = create_app_engine(url)
    try:
        report = run_batches(
            engine, XmlParsingStage(DocumentStore(Path(documents_dir))), worker_id,
            max_batches=get_settings().max_batches_per_run,
        )
    finally:
        engine.dispose()
    return RunResult(report.claimed, report.completed, report.failed)


class Backfill:
    def __init__(self, url: sa.URL, documents_dir: Path) -> None:
        self.url_text = url.render_as_string(hide_password=False)
        self.documents_dir = documents_dir
        self.engine = create_app_engine(url)

    def revisions(self) -> int:
        with self.engine.connect() as conn:
            return conn.execute(sa.text("SELECT count(*) FROM content.entity_revisions")).scalar_one()

    def due(self) -> int:
        with self.engine.connect() as conn:
            return queue.count_due(conn, "xml_parsing")

    def work_queue(self, *, changed_parser: bool = False) -> tuple[RunResult, int]:
        """Launch WORKERS runs at a time while due jobs remain, as the sensor would; (totals, runs)."""
        totals, runs = RunResult(), 0
        with ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context("spawn")) as pool:
            while True:
                futures = [
                    pool.submit(work_run, self.url_text, str(self.documents_dir), f"backfill-{runs + k}", changed_parser)
                    for k in range(WORKERS)
                ]
                runs += WORKERS
                for future in futures:
                    totals += future.result()
                if not self.due():
                    return totals, runs

    def reparse(self, parser_version: str, *, changed_parser: bool) -> tuple[float, int, int]:
        """A measured backfill: queue a re-parse of every document and work it; (seconds, revisions written, runs)."""
        revisions_before = self.revisions()
        started = time.perf_counter()
        with self.engine.begin() as conn:
            queued = enqueue_reparse(conn, ReparseScope(), parser_version=parser_version)
        enqueued_s = time.perf_counter() - started
        result, runs = self.work_queue(changed_parser=changed_parser)
        seconds = time.perf_counter() - started
        written = self.revisions() - revisions_before
        log(f"parser {parser_version}: queued {queued} in {enqueued_s:.1f}s; {runs} runs completed {result.completed}, "
            f"failed {result.failed} in {seconds:.1f}s ({result.claimed / seconds:.0f}/s); {written} revisions written")
        if (queued, result.completed) != (ENTITIES, ENTITIES):
            raise RuntimeError(f"expected {ENTITIES} re-parses, queued {queued}, completed {result.completed}")
        return seconds, written, runs

    def parser_only_per_s(self) -> float:
        """The plain parser loop: parse_si over every stored document, timing only the parse calls."""
        documents, seconds = 0, 0.0
        with self.engine.connect() as conn:
            rows = conn.execution_options(yield_per=500).execute(sa.text("""
                SELECT d.content FROM content.entities e JOIN content.raw_documents d ON d.id = e.current_si_document_id
            """))
            for row in rows:
                content = bytes(row.content)
                started = time.perf_counter()
                parse_si(content)
                seconds += time.perf_counter() - started
                documents += 1
        if documents != ENTITIES:
            raise RuntimeError(f"the parser loop read {documents} documents, expected {ENTITIES}")
        return documents / seconds


def set_up(backfill: Backfill) -> None:
    started = time.perf_counter()
    store = DocumentStore(backfill.documents_dir)
    documents = iter_cloned_documents(ENTITIES, max_bytes=INLINE_LIMIT_BYTES)
    loaded = load_entities(backfill.engine, store, documents)
    log(f"loaded {len(loaded)} entities with SI documents in {time.perf_counter() - started:.0f}s")
    started = time.perf_counter()
    result, _ = backfill.work_queue()
    if result.completed != ENTITIES:
        raise RuntimeError(f"the first parse completed {result.completed} of {ENTITIES} jobs")
    # A database that has had time for autovacuum: the measured runs start from clean tables.
    with backfill.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("VACUUM ANALYZE"))
    log(f"parsed them once in {time.perf_counter() - started:.0f}s")


def main() -> None:
    url = bench_database("hreg_bench_backfill")
    backfill = Backfill(url, Path(get_settings().documents_dir))
    set_up(backfill)

    noop_s, revisions_noop, noop_runs = backfill.reparse(UNCHANGED_VERSION, changed_parser=False)
    changed_s, revisions_changed, changed_runs = backfill.reparse(CHANGED_VERSION, changed_parser=True)
    parser_only_per_s = backfill.parser_only_per_s()
    wall_s = noop_s + changed_s
    entities_per_s = 2 * ENTITIES / wall_s
    log(f"parser alone: {parser_only_per_s:.0f} documents/s in one process; the backfill with {WORKERS} workers: "
        f"{entities_per_s:.0f}/s, {entities_per_s / (WORKERS * parser_only_per_s):.3f} of the parser per worker process")
    backfill.engine.dispose()
    print(json.dumps({
        "entities": ENTITIES,
        "wall_s": round(wall_s, 1),
        "runs_launched": noop_runs + changed_runs,
        "entities_per_s": round(entities_per_s, 1),
        "parser_only_per_s": round(parser_only_per_s, 1),
        "ratio": round(entities_per_s / parser_only_per_s, 3),
        "revisions_written_noop": revisions_noop,
        "revisions_written_changed": revisions_changed,
        "expected_changed": len(range(0, ENTITIES, CHANGED_EVERY)),
        "peak_rss_mb": peak_rss_mb(),  # this process and its workers, which have all ended
    }), flush=True)


if __name__ == "__main__":
    main()
