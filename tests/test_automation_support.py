"""Builders shared by the automation tests: companies, revisions, failed jobs, a webhook receiver.

Holds no tests; the test modules import from it."""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from typing import Any

import pytest
import sqlalchemy as sa

from orchestration.automation import create_rule, watch
from orchestration.automation.sources import Event
from orchestration.settings import parse_networks

ORGANIZATION = uuid.UUID("00000000-0000-4000-8000-0000000000a1")
OTHER_ORGANIZATION = uuid.UUID("00000000-0000-4000-8000-0000000000a2")
USER = uuid.UUID("00000000-0000-4000-8000-0000000000b1")
_register_numbers = count(1000)


def make_entity(
    conn: sa.Connection,
    name: str = "Muster GmbH",
    *,
    status: str = "parsed",
    register_type: str = "HRB",
    court_code: str = "D2601",
) -> uuid.UUID:
    return conn.execute(
        sa.text("""INSERT INTO content.entities (court_code, court_name, register_type, register_number, name, processing_status)
                   VALUES (:court, 'Amtsgericht Testhausen', :type, :number, :name, :status) RETURNING id"""),
        {
            "court": court_code,
            "type": register_type,
            "number": str(next(_register_numbers)),
            "name": name,
            "status": status,
        },
    ).scalar_one()


def company_record(**changes: Any) -> dict[str, Any]:
    record = {
        "parser_version": "1",
        "source": {"format": "xjustiz-3", "xjustiz_version": "3.3.1"},
        "name": "Muster GmbH",
        "seat": "Hamburg",
        "capital": {"amount": "25000.00", "currency": "EUR"},
        "officers": [{"role": "Geschäftsführer", "name": "Erika Muster"}],
    }
    record.update(changes)
    return record


def add_revision(conn: sa.Connection, entity_id: uuid.UUID, record: dict[str, Any]) -> int:
    body = json.dumps(record, sort_keys=True)
    return conn.execute(
        sa.text("""INSERT INTO content.entity_revisions (entity_id, source_record_key, content_hash, record, parser_version)
                   VALUES (:entity, :key, :hash, CAST(:record AS jsonb), '1') RETURNING id"""),
        {
            "entity": entity_id,
            "key": f"si:{entity_id}",
            "hash": hashlib.sha256(body.encode()).hexdigest(),
            "record": body,
        },
    ).scalar_one()


def add_shareholder_list(conn: sa.Connection, entity_id: uuid.UUID, content_hash: str, *, valid: bool = True) -> int:
    return conn.execute(
        sa.text("""INSERT INTO content.shareholder_lists (entity_id, content_hash, method, valid)
                   VALUES (:entity, :hash, 'rules', :valid) RETURNING id"""),
        {"entity": entity_id, "hash": content_hash, "valid": valid},
    ).scalar_one()


def fail_job(conn: sa.Connection, entity_id: uuid.UUID, failure_class: str, job_type: str = "xml_parsing") -> uuid.UUID:
    """A job that fails once with ``failure_class``; the database retries transient classes."""
    job_id = conn.execute(
        sa.text("INSERT INTO processing.processing_jobs (type, entity_id) VALUES (:type, :entity) RETURNING id"),
        {"type": job_type, "entity": entity_id},
    ).scalar_one()
    conn.execute(
        sa.text("""UPDATE processing.processing_jobs
                      SET status = 'failed', failure_class = :class, updated_at = now(),
                          result = jsonb_build_object('error', jsonb_build_object('message', 'unreadable SI document'))
                    WHERE id = :id"""),
        {"class": failure_class, "id": job_id},
    )
    return job_id


def save_search(conn: sa.Connection, query: str, mode: str = "all", register_type: str | None = None) -> uuid.UUID:
    return conn.execute(
        sa.text(
            "INSERT INTO public.searches (user_id, query, mode, register_type) VALUES (:user, :query, :mode, :type) RETURNING id"
        ),
        {"user": USER, "query": query, "mode": mode, "type": register_type},
    ).scalar_one()


def make_rule(
    conn: sa.Connection,
    source_type: str,
    action_type: str = "notification",
    *,
    source_config: dict | None = None,
    action_config: dict | None = None,
    frequency: str = "always",
    watched: tuple[uuid.UUID, ...] = (),
    **options: Any,
):
    """A rule of ORGANIZATION; ``watched`` companies go on the organization's watch list."""
    rule = create_rule(
        conn,
        name=f"{source_type} -> {action_type}",
        organization_id=ORGANIZATION,
        created_by=USER,
        source_type=source_type,
        source_config=source_config or {},
        action_type=action_type,
        action_config=action_config or {},
        frequency=frequency,
        **options,
    )
    watch(conn, ORGANIZATION, watched)
    return rule


def change_event(entity_id: uuid.UUID, key: str = "revision:1") -> Event:
    """A capital change of ``entity_id``, as the entity_changed source reports it."""
    return Event(
        source_type="entity_changed",
        key=key,
        subject_id=entity_id,
        entity_id=entity_id,
        occurred_at=datetime.now(UTC),
        summary="Muster GmbH: capital changed",
        details={"name": "Muster GmbH", "changed_fields": ["capital"]},
        changed_fields=frozenset({"capital"}),
    )


def log_rows(conn: sa.Connection, rule_id: int) -> list[sa.Row]:
    return conn.execute(
        sa.text("SELECT * FROM automation.trigger_log WHERE trigger_rule_id = :r ORDER BY id"), {"r": rule_id}
    ).all()


def notification_titles(conn: sa.Connection) -> list[str]:
    return list(conn.execute(sa.text("SELECT title FROM automation.notifications ORDER BY id")).scalars())


# A webhook receiver ----------------------------------------------------------------------------


@dataclass
class Delivery:
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.body)


@dataclass
class WebhookReceiver:
    """A real HTTP server on 127.0.0.1 that records deliveries and answers with ``statuses`` in turn."""

    url: str
    deliveries: list[Delivery] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)


# The receiver listens on loopback, which webhooks reach only when allowed.
LOOPBACK = "127.0.0.0/8, ::1/128"
LOOPBACK_NETWORKS = parse_networks(LOOPBACK)


@pytest.fixture
def receiver():
    state = WebhookReceiver(url="")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # http.server's naming
            body = self.rfile.read(int(self.headers["Content-Length"]))
            with lock:
                state.deliveries.append(Delivery(dict(self.headers), body))
                status = state.statuses.pop(0) if state.statuses else 204
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
