"""Small helpers shared by the queue, trigger and security tests: rows to start from and ways to
look at what the database did with them."""

from __future__ import annotations

import hashlib
import itertools
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

from orchestration.runtime import queue
from orchestration.runtime.failures import JobError

_register_numbers = itertools.count(1000)


def insert_search(conn: sa.Connection, query: str = "Muster GmbH", user_id: str | None = None, **options: Any) -> str:
    columns = {"user_id": user_id or str(uuid.uuid4()), "query": query, **options}
    names = ", ".join(columns)
    values = ", ".join(f":{name}" for name in columns)
    return str(
        conn.execute(
            sa.text(f"INSERT INTO public.searches ({names}) VALUES ({values}) RETURNING id"), columns
        ).scalar_one()
    )


def insert_entity(conn: sa.Connection, processing_status: str = "discovered", name: str = "Muster GmbH") -> str:
    """An entity; one in xml_ready gets a stored SI document first, as a worker would store it."""
    entity_id = str(
        conn.execute(
            sa.text("""
            INSERT INTO content.entities (court_code, register_type, register_number, name)
            VALUES ('D2601V', 'HRB', :number, :name) RETURNING id
        """),
            {"number": str(next(_register_numbers)), "name": name},
        ).scalar_one()
    )
    if processing_status == "xml_ready":
        store_si_document(conn, entity_id)
    elif processing_status != "discovered":
        set_entity(conn, entity_id, processing_status=processing_status)
    return entity_id


def insert_raw_document(conn: sa.Connection, entity_id: str, kind: str = "si") -> str:
    content = uuid.uuid4().bytes
    return str(
        conn.execute(
            sa.text("""
            INSERT INTO content.raw_documents (sha256, entity_id, kind, media_type, size_bytes, content)
            VALUES (:sha256, :entity_id, :kind, 'application/xml', :size, :content) RETURNING id
        """),
            {
                "sha256": hashlib.sha256(content).hexdigest(),
                "entity_id": entity_id,
                "kind": kind,
                "size": len(content),
                "content": content,
            },
        ).scalar_one()
    )


def store_si_document(conn: sa.Connection, entity_id: str) -> str:
    """What a download does: store a new SI document and mark the entity xml_ready."""
    document_id = insert_raw_document(conn, entity_id)
    set_entity(conn, entity_id, current_si_document_id=document_id, processing_status="xml_ready")
    return document_id


def set_entity(conn: sa.Connection, entity_id: str, **columns: Any) -> None:
    assignments = ", ".join(f"{name} = :{name}" for name in columns)
    conn.execute(sa.text(f"UPDATE content.entities SET {assignments} WHERE id = :id"), {"id": entity_id, **columns})


def entity(conn: sa.Connection, entity_id: str) -> sa.Row:
    return conn.execute(sa.text("SELECT * FROM content.entities WHERE id = :id"), {"id": entity_id}).one()


def search(conn: sa.Connection, search_id: str) -> sa.Row:
    return conn.execute(sa.text("SELECT * FROM public.searches WHERE id = :id"), {"id": search_id}).one()


def jobs(conn: sa.Connection, **links: str) -> list[sa.Row]:
    """Jobs linked to a search or an entity (and of a type)."""
    where = " AND ".join(f"{name} = :{name}" for name in links)
    return conn.execute(
        sa.text(f"SELECT * FROM processing.processing_jobs WHERE {where} ORDER BY created_at"), links
    ).all()


def job(conn: sa.Connection, job_id: str) -> sa.Row:
    return conn.execute(sa.text("SELECT * FROM processing.processing_jobs WHERE id = :id"), {"id": job_id}).one()


def history(conn: sa.Connection, job_id: str) -> list[sa.Row]:
    """The job's step history in the order it was written."""
    return conn.execute(
        sa.text("SELECT * FROM processing.job_step_history WHERE job_id = :id ORDER BY id"), {"id": job_id}
    ).all()


def make_due(conn: sa.Connection, job_id: str) -> None:
    """Skip the backoff of a re-queued job, so that a test need not wait for it."""
    conn.execute(
        sa.text("UPDATE processing.processing_jobs SET next_attempt_at = now() WHERE id = :id"), {"id": job_id}
    )


def expire_lease(conn: sa.Connection, job_id: str) -> None:
    """Move the lease into the past, as if the worker had stopped heart-beating long ago."""
    conn.execute(
        sa.text("UPDATE processing.processing_jobs SET lease_until = now() - interval '1 second' WHERE id = :id"),
        {"id": job_id},
    )


def claim_one(
    conn: sa.Connection, job_type: str, worker_id: str = "worker-1", lease_seconds: int = 60
) -> queue.ClaimedJob:
    [claimed] = queue.claim(conn, job_type, 1, worker_id, lease_seconds)
    return claimed


def claim_and_fail(conn: sa.Connection, job_type: str, error: JobError, worker_id: str = "worker-1") -> str:
    """One failed attempt of the next due job of ``job_type``; returns its id."""
    claimed = claim_one(conn, job_type, worker_id)
    assert queue.fail(conn, worker_id, [(claimed.id, error)]) == {claimed.id}
    return claimed.id


def request_research(conn: sa.Connection, entity_id: str) -> str:
    """What the application calls when a user asks for shareholders; returns the download job."""
    return str(
        conn.execute(sa.text("SELECT processing.request_shareholder_research(:id)"), {"id": entity_id}).scalar_one()
    )


def download_shareholder_list(conn: sa.Connection, entity_id: str, worker_id: str = "worker-1") -> str:
    """Claim and complete the entity's shareholder download; returns the stored list's id."""
    claimed = claim_one(conn, "shareholder_download", worker_id)
    list_id = insert_raw_document(conn, entity_id, kind="shareholder_list")
    queue.complete(conn, worker_id, [(claimed.id, {"raw_document_id": list_id})])
    return list_id


def count_trigger_calls(conn: sa.Connection) -> dict[str, int]:
    """How often each trigger function ran in the current transaction (needs track_functions)."""
    return dict(
        conn.execute(
            sa.text("SELECT funcname, calls FROM pg_stat_xact_user_functions WHERE schemaname = 'processing'")
        ).all()
    )


def track_function_calls(conn: sa.Connection) -> None:
    conn.execute(sa.text("SET LOCAL track_functions = 'pl'"))


@contextmanager
def as_role(engine: sa.Engine, role: str, user_id: str | None = None) -> Iterator[sa.Connection]:
    """A transaction running as ``role``; ``user_id`` is what the application sets for row-level security."""
    with engine.begin() as conn:
        conn.execute(sa.text(f"SET LOCAL ROLE {role}"))
        if user_id is not None:
            conn.execute(sa.text("SELECT set_config('hreg.user_id', :u, true)"), {"u": user_id})
        yield conn


def sqlstate_of(conn: sa.Connection, statement: str, params: dict[str, Any] | None = None) -> str | None:
    """Run ``statement`` in a savepoint; return the SQLSTATE it failed with, or None when it succeeded."""
    savepoint = conn.begin_nested()
    try:
        conn.execute(sa.text(statement), params or {})
    except sa.exc.DBAPIError as error:
        savepoint.rollback()
        return error.orig.pgcode
    savepoint.commit()
    return None
