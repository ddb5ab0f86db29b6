"""What a person waits for, through the running stack: a search or an open until its companies
are parsed, timed by the database's clock from the row or job a person's action writes."""

from __future__ import annotations

import random
import statistics
import time
import uuid

import sqlalchemy as sa

from orchestration.register.results import SearchMode
from sample_register.corpus import load_corpus

# Done: the search is completed and each result it opened (the first ``opens``) is parsed.
SEARCH_DONE = sa.text("""
    SELECT s.status = 'completed'
           AND NOT EXISTS (SELECT 1 FROM public.search_results r JOIN content.entities e ON e.id = r.entity_id
                            WHERE r.search_id = s.id AND r.position < :opens AND e.processing_status <> 'parsed')
               AS done,
           extract(epoch FROM clock_timestamp() - s.created_at) AS seconds
      FROM public.searches s WHERE s.id = :search_id
""")
OPEN_DONE = sa.text("""
    SELECT e.processing_status = 'parsed' AS done, extract(epoch FROM clock_timestamp() - j.created_at) AS seconds
      FROM content.entities e
      JOIN processing.processing_jobs j ON j.id = CAST(:job_id AS uuid)
     WHERE e.id = CAST(:entity_id AS uuid)
""")
OPEN = sa.text("""
    SELECT processing.open_entity(CAST(:entity_id AS uuid))
""")
OPENED_JOB = sa.text("""
    SELECT id::text FROM processing.processing_jobs
     WHERE entity_id = CAST(:entity_id AS uuid) AND type = 'basic_discovery' ORDER BY created_at DESC LIMIT 1
""")


def _wait(engine: sa.Engine, query: sa.TextClause, params: dict, what: str, timeout_s: float) -> float:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            row = conn.execute(query, params).one()
        if row.done:
            return float(row.seconds)
        time.sleep(0.25)
    raise TimeoutError(f"{what} not done within {timeout_s:.0f} s")


def search_to_parsed_s(engine: sa.Engine, query: str, opens: int, timeout_s: float = 900) -> float:
    """Seconds from a search's row until it is completed and the ``opens`` results it opened are parsed."""
    with engine.begin() as conn:
        search_id = conn.execute(
            sa.text("INSERT INTO public.searches (user_id, query) VALUES (:u, :q) RETURNING id"),
            {"u": str(uuid.uuid4()), "q": query},
        ).scalar_one()
    return _wait(engine, SEARCH_DONE, {"search_id": search_id, "opens": opens}, f"search {query!r}", timeout_s)


def open_to_parsed_s(engine: sa.Engine, entity_id: str, timeout_s: float = 300) -> float:
    """Seconds from opening a discovered company (its discovery job) until it is parsed."""
    with engine.begin() as conn:
        conn.execute(OPEN, {"entity_id": entity_id})
        job_id = conn.execute(OPENED_JOB, {"entity_id": entity_id}).scalar_one()
    return _wait(engine, OPEN_DONE, {"entity_id": entity_id, "job_id": job_id}, f"open of {entity_id}", timeout_s)


def p50_p95(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def fresh_queries(count: int, opens: int, *, most_hits: int = 20, seed: int = 2026) -> list[str]:
    """``count`` one-word searches of the sample register, each of which opens ``opens`` companies
    that no earlier one opened: what a person waits for is then the same work every time (a
    search, downloads, parses), not a repeat that finds its companies parsed already. Each word
    matches between ``opens`` and ``most_hits`` companies, so that no search records hundreds."""
    corpus = load_corpus()
    words = sorted({w for c in corpus.companies for w in c.words if w.isalpha() and len(w) >= 4})
    random.Random(seed).shuffle(words)
    opened: set[tuple[str, str, str]] = set()
    queries = []
    for word in words:
        hits = corpus.search(word, SearchMode.ALL)
        first = {c.key for c in hits[:opens]}
        if opens <= len(hits) <= most_hits and not first & opened:
            opened |= first
            queries.append(word)
            if len(queries) == count:
                return queries
    raise ValueError(f"the sample register has only {len(queries)} such searches, not {count}")
