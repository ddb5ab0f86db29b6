"""What the benchmarks share: a database to run against, a corpus of SI documents, peak memory."""

from __future__ import annotations

import atexit
import itertools
import os
import random
import resource
import socket
import sys
import tempfile
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import URL, make_url

from orchestration.db import embedded
from orchestration.db.engine import create_app_engine, ensure_database
from orchestration.db.migrate import upgrade
from orchestration.records.courts import register_courts
from orchestration.records.documents import DocumentStore
from orchestration.settings import Settings
from orchestration.xjustiz import CompanyRecord, parse_si
from sample_register.si_writer import write_si

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLES_DIR = REPO_ROOT.parent / "shared" / "samples" / "xjustiz"


def bench_database(name: str) -> URL:
    """A fresh, migrated database: on HREG_DATABASE_URL's server, or an embedded one in a temp dir,
    which stops when the benchmark exits."""
    if os.environ.get("HREG_DATABASE_URL"):
        server = make_url(os.environ["HREG_DATABASE_URL"]).set(drivername="postgresql+psycopg2")
    else:
        # One server per benchmark process: stopping it at exit must not stop another benchmark's.
        pgdata = Path(tempfile.gettempdir()) / f"hreg-bench-pg-{os.getpid()}"
        server = make_url(embedded.server_url(pgdata, "postgres"))
        # The server outlives its starter by design (the CLI's and Dagster's processes share it);
        # a benchmark's is its own, so it goes when the benchmark does.
        atexit.register(embedded.stop, pgdata)
    url = server.set(database=name)
    admin = sa.create_engine(server.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}_dagster" WITH (FORCE)'))
    admin.dispose()
    ensure_database(url)
    engine = create_app_engine(url)
    upgrade(engine, Settings(database_url=url.render_as_string(hide_password=False)))
    engine.dispose()
    return url


def bench_stack_environment(name: str, extra: dict[str, str] | None = None) -> tuple[URL, Path, Settings]:
    """A fresh database ``name`` and data dir, set in this process's environment where the stack
    reads its configuration (with the sample register on a free port, and ``extra`` variables),
    and the settings they make."""
    url = bench_database(name)
    data_dir = Path(tempfile.mkdtemp(prefix=name.replace("_", "-") + "-"))
    os.environ.update(
        {
            "HREG_DATABASE_URL": url.render_as_string(hide_password=False),
            "HREG_DATA_DIR": str(data_dir),
            "HREG_SAMPLE_REGISTER_PORT": str(free_port()),
            **(extra or {}),
        }
    )
    return url, data_dir, Settings()


def template_records() -> list[CompanyRecord]:
    """The real samples, parsed: templates for cloned companies."""
    return [parse_si(path.read_bytes()) for path in sorted(SAMPLES_DIR.glob("*.xml"))]


# A register number no clone gets (clones have six digits), and a court no clone is filed at,
# each written once per template and version and replaced in every copy.
PLACEHOLDER_NUMBER = "9876543"
PLACEHOLDER_COURT = ("X0000", "Amtsgericht Platzhalter")


def register_court_shares() -> dict[str, float]:
    """A synthetic share of the register per court, for a corpus spread like a register.

    Shares fall off as a power law (exponent 0.6) over the 173 courts in a fixed shuffled order:
    the largest court holds 5.6 %, the smallest 0.25 %, and large courts sit anywhere in the
    partition order. The register publishes no counts per court that this project holds; what
    matters here is that every court holds some companies and a few hold many.
    """
    courts = list(register_courts())
    random.Random(2026).shuffle(courts)
    weights = [(rank + 1) ** -0.6 for rank in range(len(courts))]
    total = sum(weights)
    return {court: weight / total for court, weight in zip(courts, weights)}


def iter_cloned_documents(
    count: int,
    versions: tuple[str, ...] = ("3.3.1", "3.5.1", "1.x"),
    *,
    max_bytes: int | None = None,
    spread_over_courts: bool = False,
    among_courts: Collection[str] | None = None,
) -> Iterator[tuple[CompanyRecord, bytes]]:
    """``count`` SI documents of distinct companies: the samples with register numbers 100000 + i.

    Each template is written once per version with a placeholder number that every copy
    replaces: writing a document takes milliseconds, a replace microseconds. Templates whose
    documents exceed ``max_bytes`` are left out. The companies are filed at their sample's court,
    or, with ``spread_over_courts``, at courts drawn by ``register_court_shares`` (from
    ``among_courts`` only, when given).
    """
    courts = register_courts()
    shares = register_court_shares() if spread_over_courts else {}
    if among_courts is not None:
        shares = {court: share for court, share in shares.items() if court in among_courts}
    filed_at = random.Random(count).choices(list(shares), weights=list(shares.values()), k=count) if shares else []
    placeholders = [PLACEHOLDER_NUMBER.encode(), *(p.encode() for p in PLACEHOLDER_COURT)]
    written: list[tuple[CompanyRecord, dict[str, bytes]]] = []
    for template in template_records():
        register = template.register.model_copy(update={"number": PLACEHOLDER_NUMBER, "suffix": None})
        if spread_over_courts:
            register = register.model_copy(
                update={"court_code": PLACEHOLDER_COURT[0], "court_name": PLACEHOLDER_COURT[1]}
            )
        record = template.model_copy(update={"register": register})
        by_version = {version: write_si(record, version) for version in versions}
        if any(content.count(placeholders[0]) != 1 for content in by_version.values()):
            raise ValueError(f"the register number of {template.name} is not written exactly once")
        if max_bytes is None or max(map(len, by_version.values())) <= max_bytes:
            written.append((record, by_version))
    for i in range(count):
        record, by_version = written[i % len(written)]
        content = by_version[versions[i % len(versions)]]
        number = str(100000 + i)
        update = {"number": number}
        content = content.replace(placeholders[0], number.encode())
        if spread_over_courts:
            court = filed_at[i]
            update |= {"court_code": court, "court_name": courts[court]}
            content = content.replace(placeholders[1], court.encode()).replace(placeholders[2], courts[court].encode())
        yield record.model_copy(update={"register": record.register.model_copy(update=update)}), content


def cloned_documents(
    count: int, versions: tuple[str, ...] = ("3.3.1", "3.5.1", "1.x")
) -> list[tuple[CompanyRecord, bytes]]:
    """``count`` SI documents of distinct companies, in a list (see ``iter_cloned_documents``)."""
    return list(iter_cloned_documents(count, versions))


def peak_rss_mb(include_children: bool = True) -> float:
    """Peak resident memory of this process (and of its finished children), in MB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if include_children:
        peak = max(peak, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return round(peak / 1024, 1)  # ru_maxrss is in KiB on Linux


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


INSERT_ENTITIES = sa.text("""
    INSERT INTO content.entities (court_code, court_name, register_type, register_number, register_suffix, name)
    SELECT * FROM unnest(CAST(:court_codes AS text[]), CAST(:court_names AS text[]), CAST(:register_types AS text[]),
                         CAST(:register_numbers AS text[]), CAST(:register_suffixes AS text[]), CAST(:names AS text[]))
    RETURNING id, court_code, register_type, register_number, register_suffix
""")
ATTACH_SI = sa.text("""
    UPDATE content.entities e SET current_si_document_id = a.document_id, processing_status = 'xml_ready'
      FROM unnest(CAST(:entity_ids AS uuid[]), CAST(:document_ids AS uuid[])) AS a(entity_id, document_id)
     WHERE e.id = a.entity_id
""")


def load_entities(
    engine: sa.Engine, store: DocumentStore, documents: Iterable[tuple[CompanyRecord, bytes]], chunk_size: int = 1000
) -> list[str]:
    """Entities with stored SI documents, made xml_ready: the trigger queues an xml_parsing job each.

    ``documents`` may be a generator: it is read and loaded ``chunk_size`` at a time, one
    transaction each, so memory stays flat however many there are.
    """
    entity_ids: list[str] = []
    iterator = iter(documents)
    while chunk := list(itertools.islice(iterator, chunk_size)):
        registers = [record.register for record, _ in chunk]
        with engine.begin() as conn:
            rows = conn.execute(
                INSERT_ENTITIES,
                {
                    "court_codes": [r.court_code for r in registers],
                    "court_names": [r.court_name for r in registers],
                    "register_types": [r.type for r in registers],
                    "register_numbers": [r.number for r in registers],
                    "register_suffixes": [r.suffix or "" for r in registers],
                    "names": [record.name for record, _ in chunk],
                },
            )
            ids = {
                (row.court_code, row.register_type, row.register_number, row.register_suffix): str(row.id)
                for row in rows
            }
            chunk_ids = [ids[(r.court_code, r.type, r.number, r.suffix or "")] for r in registers]
            document_ids = [
                store.store(conn, content, kind="si", media_type="application/xml", entity_id=entity_id)
                for entity_id, (_, content) in zip(chunk_ids, chunk)
            ]
            conn.execute(ATTACH_SI, {"entity_ids": chunk_ids, "document_ids": document_ids})
        entity_ids.extend(chunk_ids)
    return entity_ids


# Entities of one court with a stand-in SI document each (``<a/>``, distinct by its hash), for
# benchmarks of the queue that need entities and jobs but no document to parse.
LOAD_STAND_IN_ENTITIES = sa.text("""
    WITH documents AS (
        INSERT INTO content.raw_documents (sha256, kind, media_type, size_bytes, content)
        SELECT encode(sha256(convert_to('bench-' || n, 'UTF8')), 'hex'), 'si', 'application/xml', 5, '\\x3c612f3e'
          FROM generate_series(1, :count) AS n
        RETURNING id
    )
    INSERT INTO content.entities (court_code, register_type, register_number, name, processing_status,
                                  current_si_document_id)
    SELECT 'D2601V', 'HRB', (100000 + row_number() OVER ())::text, 'Bench GmbH ' || row_number() OVER (),
           :status, id
      FROM documents
""")


def load_stand_in_entities(conn: sa.Connection, count: int, status: str) -> None:
    """``count`` entities in ``status``, each pointing at a stored stand-in SI document: entities
    made ``xml_ready`` get an xml_parsing job each from the entity trigger, as after a download."""
    conn.execute(LOAD_STAND_IN_ENTITIES, {"count": count, "status": status})
