"""Job archive: the claim's cost as completed jobs pile up, with and without moving them out.

Each entity of the queue has a queued shareholder_download job, and the stage gate looks at the
entity's earlier stages for every candidate it claims. A register that lives through parser
changes gathers completed xml_parsing jobs per entity (one per change); left in the hot table,
the gate reads every one of them. `archive_completed_jobs` moves them to processing.job_archive.
Each claim runs in a transaction that is rolled back, so every measurement claims from the same
queue; the best of several claims is the one least disturbed by other work on the machine.

First the completed jobs stay in the table, round after round; then they are archived, and more
rounds are added and archived. Last line: one JSON object with the claim's best time with 0 and
with N archived jobs and their ratio (flat: close to 1), the time with the completed jobs kept in
the table and its ratio, and the archive's rate.

    .venv/bin/python -m bench.archive     # an embedded server in a temp dir unless HREG_DATABASE_URL is set
    BENCH_ENTITIES=500 .venv/bin/python -m bench.archive   # a check that it runs (claims of 500)
"""

from __future__ import annotations

import json
import os
import statistics
import time
from datetime import timedelta

import sqlalchemy as sa

from bench.common import bench_database, load_stand_in_entities, log
from orchestration.db.engine import create_app_engine
from orchestration.runtime import queue

ENTITIES = int(os.environ.get("BENCH_ENTITIES", "10000"))
ROUNDS = 4
PARSER_CHANGES_PER_ROUND = 5  # completed xml_parsing jobs per entity and round
CLAIM_BATCH = min(1000, ENTITIES)
CLAIM_REPEATS = 15
ARCHIVE_BATCH = 10_000
RETENTION = timedelta(days=7)

QUEUE_DOWNLOADS = sa.text("""
    INSERT INTO processing.processing_jobs (type, entity_id) SELECT 'shareholder_download', id FROM content.entities
""")
# Re-parses of every entity by parser versions that finished a month ago.
ADD_COMPLETED_PARSES = sa.text("""
    INSERT INTO processing.processing_jobs
        (type, status, entity_id, raw_document_id, parser_version, trigger, started_at, completed_at)
    SELECT 'xml_parsing', 'completed', e.id, e.current_si_document_id, 'bench-' || v, 'parser_change',
           now() - interval '30 days', now() - interval '30 days'
      FROM content.entities e, generate_series(:first_version, :last_version) AS v
""")
COMPLETED_IN_HOT_TABLE = sa.text("SELECT count(*) FROM processing.processing_jobs WHERE status = 'completed'")
ARCHIVED = sa.text("SELECT count(*) FROM processing.job_archive")


def vacuum(engine: sa.Engine) -> None:
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(sa.text("VACUUM ANALYZE processing.processing_jobs"))
        conn.execute(sa.text("VACUUM ANALYZE processing.job_archive"))


def claim_ms(engine: sa.Engine) -> float:
    """Best time of claiming one batch of shareholder downloads (rolled back each time): the least
    disturbed by other work on the machine."""
    vacuum(engine)
    times = []
    for _ in range(CLAIM_REPEATS):
        with engine.connect() as conn:
            start = time.perf_counter()
            claimed = queue.claim(conn, "shareholder_download", CLAIM_BATCH, "bench-worker", 300)
            times.append((time.perf_counter() - start) * 1000)
            conn.rollback()
        assert len(claimed) == CLAIM_BATCH, len(claimed)
    return min(times)


def add_completed_parses(engine: sa.Engine, round_number: int) -> int:
    """One round of parser changes: completed re-parses of every entity; returns completed jobs in the table."""
    first = round_number * PARSER_CHANGES_PER_ROUND + 1
    with engine.begin() as conn:
        conn.execute(
            ADD_COMPLETED_PARSES, {"first_version": first, "last_version": first + PARSER_CHANGES_PER_ROUND - 1}
        )
        return conn.execute(COMPLETED_IN_HOT_TABLE).scalar_one()


def archive(engine: sa.Engine) -> tuple[int, float]:
    """Archive everything past retention; returns (jobs in the archive, jobs moved per second)."""
    vacuum(engine)
    start = time.perf_counter()
    moved = queue.archive_all_completed(engine, RETENTION, ARCHIVE_BATCH, max_batches=1_000_000)
    rate = moved / (time.perf_counter() - start)
    with engine.connect() as conn:
        return conn.execute(ARCHIVED).scalar_one(), rate


def main() -> None:
    url = bench_database("hreg_bench_archive")
    engine = create_app_engine(url)
    with engine.begin() as conn:
        load_stand_in_entities(conn, ENTITIES, "parsed")
        conn.execute(QUEUE_DOWNLOADS)
    claim_ms(engine)  # warm the caches
    baseline = claim_ms(engine)
    log(f"{ENTITIES} queued shareholder downloads; claim of {CLAIM_BATCH}: {baseline:.1f} ms, nothing archived")

    log("Completed jobs kept in the job table:")
    log(f"{'completed in table':>19} {'claim':>10}")
    for round_number in range(ROUNDS):
        completed = add_completed_parses(engine, round_number)
        kept = claim_ms(engine)
        log(f"{completed:>19} {kept:>7.1f} ms")

    log("Archived after each round:")
    log(f"{'archived':>10} {'claim':>10} {'archive/s':>10}")
    archived, rate = archive(engine)
    rates = [rate]
    archived_ms = claim_ms(engine)
    log(f"{archived:>10} {archived_ms:>7.1f} ms {rate:>10.0f}")
    for round_number in range(ROUNDS, 2 * ROUNDS):
        add_completed_parses(engine, round_number)
        archived, rate = archive(engine)
        rates.append(rate)
        archived_ms = claim_ms(engine)
        log(f"{archived:>10} {archived_ms:>7.1f} ms {rate:>10.0f}")

    engine.dispose()
    print(
        json.dumps(
            {
                "archived_jobs": archived,
                "claim_ms_0_archived": round(baseline, 2),
                "claim_ms_n_archived": round(archived_ms, 2),
                "ratio": round(archived_ms / baseline, 3),
                "completed_kept": completed,
                "claim_ms_completed_kept": round(kept, 2),
                "kept_ratio": round(kept / baseline, 3),
                "archive_jobs_per_s": round(statistics.median(rates)),
            }
        )
    )


if __name__ == "__main__":
    main()
