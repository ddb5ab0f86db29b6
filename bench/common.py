"""What the benchmarks share: a database to run against, a corpus of SI documents, peak memory."""

from __future__ import annotations

import os
import resource
import sys
import tempfile
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import URL, make_url

from orchestration.db import embedded
from orchestration.db.engine import create_app_engine, ensure_database
from orchestration.db.migrate import upgrade
from orchestration.documents import DocumentStore
from orchestration.settings import Settings
from orchestration.xjustiz import CompanyRecord, parse_si, write_si

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLES_DIR = REPO_ROOT.parent / "shared" / "samples" / "xjustiz"


def bench_database(name: str) -> URL:
    """A fresh, migrated database: on HREG_DATABASE_URL's server, or an embedded one in a temp dir."""
    if os.environ.get("HREG_DATABASE_URL"):
        server = make_url(os.environ["HREG_DATABASE_URL"]).set(drivername="postgresql+psycopg2")
    else:
        pgdata = Path(tempfile.gettempdir()) / f"hreg-bench-pg-{os.getuid()}"
        server = make_url(embedded.server_url(pgdata, "postgres"))
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


def template_records() -> list[CompanyRecord]:
    """The real samples, parsed: templates for cloned companies."""
    return [parse_si(path.read_bytes()) for path in sorted(SAMPLES_DIR.glob("*.xml"))]


def cloned_documents(count: int, versions: tuple[str, ...] = ("3.3.1", "3.5.1", "1.x")) -> list[tuple[CompanyRecord, bytes]]:
    """``count`` SI documents of distinct companies: the samples with varied register numbers."""
    templates = template_records()
    documents = []
    for i in range(count):
        template = templates[i % len(templates)]
        record = template.model_copy(
            update={"register": template.register.model_copy(update={"number": str(100000 + i), "suffix": None})}
        )
        documents.append((record, write_si(record, versions[i % len(versions)])))
    return documents


def peak_rss_mb(include_children: bool = True) -> float:
    """Peak resident memory of this process (and of its finished children), in MB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if include_children:
        peak = max(peak, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return round(peak / 1024, 1)  # ru_maxrss is in KiB on Linux


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


INSERT_ENTITY = sa.text("""
    INSERT INTO content.entities (court_code, court_name, register_type, register_number, register_suffix, name)
    VALUES (:court_code, :court_name, :register_type, :register_number, coalesce(:suffix, ''), :name)
    RETURNING id
""")
ATTACH_SI = sa.text("""
    UPDATE content.entities SET current_si_document_id = :document_id, processing_status = 'xml_ready'
     WHERE id = :entity_id
""")


def load_entities(engine: sa.Engine, store: DocumentStore, documents: list[tuple[CompanyRecord, bytes]]) -> list[str]:
    """Entities with stored SI documents, made xml_ready: the trigger queues an xml_parsing job each."""
    entity_ids = []
    with engine.begin() as conn:
        for record, content in documents:
            register = record.register
            entity_id = str(conn.execute(INSERT_ENTITY, {
                "court_code": register.court_code, "court_name": register.court_name,
                "register_type": register.type, "register_number": register.number,
                "suffix": register.suffix, "name": record.name,
            }).scalar_one())
            document_id = store.store(conn, content, kind="si", media_type="application/xml", entity_id=entity_id)
            conn.execute(ATTACH_SI, {"document_id": document_id, "entity_id": entity_id})
            entity_ids.append(entity_id)
    return entity_ids
