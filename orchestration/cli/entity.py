"""`hreg entity`: what a person looks at (a company's record, officers, shareholders, stored
documents, history) and what a person asks for: open a company, which fetches its register data,
or its current printout, each as an interactive job."""

from __future__ import annotations

import json
import uuid
from typing import Any

import click
import sqlalchemy as sa

from orchestration.cli import cli_engine, user_option
from orchestration.cli.status import format_table
from orchestration.records import companies


@click.group()
def entity() -> None:
    """A company: show what we know of it, or open it to fetch its register data."""


def _resolve(conn: sa.Connection, key: tuple[str, ...]) -> uuid.UUID:
    """An entity given as ID, or as COURT TYPE NUMBER [SUFFIX]."""
    if len(key) == 1:
        try:
            return uuid.UUID(key[0])
        except ValueError:
            raise click.BadParameter(f"{key[0]!r} is not an entity id", param_hint="ENTITY") from None
    if len(key) not in (3, 4):
        raise click.BadParameter("give an entity id, or COURT TYPE NUMBER (e.g. D2601 HRB 1234)", param_hint="ENTITY")
    court, register_type, number = key[:3]
    found = companies.entities_by_register(
        conn,
        court,
        register_type.upper() if register_type.isascii() else register_type,
        number,
        key[3] if len(key) == 4 else None,
    )
    if not found:
        raise click.ClickException(
            f"no entity {' '.join(key)} is known; search for it first (hreg search --court {court} ...)"
        )
    if len(found) > 1:
        raise click.ClickException(f"{' '.join(key)} names {len(found)} entities (with suffixes); add the suffix")
    return found[0]


def _load(conn: sa.Connection, entity_id: uuid.UUID) -> sa.Row:
    row = companies.entity(conn, entity_id)
    if row is None:
        raise click.ClickException(f"there is no entity {entity_id}")
    return row


def entity_view(conn: sa.Connection, entity_id: uuid.UUID) -> dict[str, Any]:
    """Everything `hreg entity show` prints, as one JSON-ready dict."""
    row = _load(conn, entity_id)
    revisions = companies.revisions(conn, entity_id)
    shareholder_list = companies.current_shareholder_list(conn, entity_id)
    holders = companies.shareholders(conn, shareholder_list.id) if shareholder_list else []
    record = revisions[0].record if revisions else None
    view: dict[str, Any] = {
        "entity": {
            k: row._mapping[k]
            for k in (
                "id",
                "name",
                "court_code",
                "court_name",
                "register_type",
                "register_number",
                "register_suffix",
                "legal_form",
                "seat",
                "register_status",
                "processing_status",
                "shareholder_research_status",
                "documents_offered",
                "earlier_names",
                "si_retrieved_at",
                "updated_at",
            )
        },
        "discovery_job": companies.active_discovery(conn, entity_id),
        "record": record,
        "officers": list(record.get("officers", ())) if record else [],
        "shareholders": None,
        "documents": companies.stored_documents(conn, entity_id),
        "revisions": [
            {
                "revision": r.id,
                "created_at": r.created_at,
                "parser_version": r.parser_version,
                "content_hash": r.content_hash,
                "document_retrieved_at": r.retrieved_at,
                "document": r.filename,
            }
            for r in revisions
        ],
    }
    if shareholder_list:
        failed = [c for c in (shareholder_list.validation or {}).get("checks", []) if c.get("status") == "failed"]
        view["shareholders"] = {
            "list": shareholder_list.id,
            "created_at": shareholder_list.created_at,
            "method": shareholder_list.method,
            "source": shareholder_list.source,
            "ocr_fallback": shareholder_list.ocr_fallback,
            # Rules that did not hold mark the list for review; it is never shown as checked then.
            "review_status": "checked" if shareholder_list.valid else "needs review",
            "failed_checks": failed,
            "total_nominal": shareholder_list.total_nominal,
            "currency": shareholder_list.currency,
            "holders": holders,
        }
    return view


@entity.command("show")
@click.argument("key", nargs=-1, required=True, metavar="ID | COURT TYPE NUMBER [SUFFIX]")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def show(key: tuple[str, ...], as_json: bool) -> None:
    """The current record of an entity, its officers, current shareholders and revision history."""
    with cli_engine().connect() as conn:
        view = entity_view(conn, _resolve(conn, key))
    if as_json:
        click.echo(json.dumps(view, default=str))
        return
    _print(view)


def _print(view: dict[str, Any]) -> None:
    e, record = view["entity"], view["record"]
    designation = " ".join(p for p in (e["register_type"], e["register_number"], e["register_suffix"]) if p)
    click.echo(f"{e['name']}  ({e['id']})")
    click.echo(
        f"register      {e['court_name'] or ''} ({e['court_code']}) {designation}, "
        f"{e['register_status'] or 'status unknown'}"
    )
    click.echo(
        f"status        {e['processing_status']}, shareholders {e['shareholder_research_status']}"
        + (
            f"; register data {view['discovery_job']['status']} ({view['discovery_job']['priority']})"
            if view["discovery_job"]
            else ""
        )
    )
    click.echo(
        f"documents     {' '.join(e['documents_offered'] or ()) or 'unknown'}"
        + (f"; SI retrieved {e['si_retrieved_at']:%Y-%m-%d %H:%M}" if e["si_retrieved_at"] else "")
    )
    if e["earlier_names"]:
        click.echo(
            "earlier names "
            + "; ".join(n["name"] + (f" ({n['seat']})" if n.get("seat") else "") for n in e["earlier_names"])
        )
    if record is None:
        hint = "it is being fetched" if view["discovery_job"] else f"open it with: hreg entity open {e['id']}"
        click.echo(f"\nNo parsed record yet: {hint}.")
    else:
        click.echo("\nCurrent record")
        capital = record.get("capital")
        address = record.get("address") or {}
        lines = [
            ("legal form", (record.get("legal_form") or {}).get("label")),
            ("seat", record.get("seat")),
            (
                "address",
                " ".join(str(address[k]) for k in ("street", "house_number", "postal_code", "city") if address.get(k)),
            ),
            ("capital", f"{capital['amount']} {capital['currency']}" if capital else None),
            ("purpose", record.get("purpose")),
            ("representation", record.get("representation")),
            ("last entry", record.get("last_entry_date")),
        ]
        for label, value in lines:
            if value:
                click.echo(f"  {label:<14} {value}")
        click.echo("\nOfficers")
        if view["officers"]:
            click.echo(
                format_table(
                    ("role", "name", "city", "representation"),
                    [
                        (o["role"], o["name"], o.get("city") or "", o.get("representation") or "")
                        for o in view["officers"]
                    ],
                )
            )
        else:
            click.echo("none in the record")
    click.echo("\nShareholders")
    holders = view["shareholders"]
    if holders is None:
        click.echo(f"no list read yet (ask with: hreg shareholders request {e['id']})")
    else:
        failed = "; ".join(f"{c['name']}: {c['message']}" for c in holders["failed_checks"])
        click.echo(
            f"list {holders['list']} of {holders['created_at']:%Y-%m-%d}, read by {holders['method']}: "
            f"{holders['review_status']}{' (' + failed + ')' if failed else ''}"
        )
        if holders["source"]:
            fallback = (
                f", OCR fallback for the text layer: {holders['ocr_fallback']}" if holders["ocr_fallback"] else ""
            )
            click.echo(f"read from: {holders['source']}{fallback}")
        click.echo(
            format_table(
                ("#", "shareholder", "kind", "nominal", "%"),
                [
                    (
                        h["position"],
                        h["name"],
                        h["kind"],
                        f"{h['nominal_total']} {holders['currency'] or ''}".strip(),
                        "< 1" if h["percentage_below_one"] else str(h["percentage"] or ""),
                    )
                    for h in holders["holders"]
                ],
            )
        )
    click.echo("\nStored documents")
    if view["documents"]:
        click.echo(
            format_table(
                ("document", "kind", "retrieved", "file", "bytes"),
                [
                    (d["id"], d["kind"], f"{d['retrieved_at']:%Y-%m-%d %H:%M:%S}", d["filename"] or "", d["size_bytes"])
                    for d in view["documents"]
                ],
            )
        )
    if not any(d["kind"] == "printout" for d in view["documents"]):
        click.echo(f"no printout yet (ask with: hreg entity printout {e['id']})")
    click.echo("\nRevision history")
    if view["revisions"]:
        click.echo(
            format_table(
                ("revision", "parsed at", "parser", "document retrieved", "content"),
                [
                    (
                        r["revision"],
                        f"{r['created_at']:%Y-%m-%d %H:%M:%S}",
                        r["parser_version"],
                        f"{r['document_retrieved_at']:%Y-%m-%d %H:%M:%S}" if r["document_retrieved_at"] else "",
                        r["content_hash"][:12],
                    )
                    for r in view["revisions"]
                ],
            )
        )
    else:
        click.echo("no revisions")


@entity.command("open")
@click.argument("key", nargs=-1, required=True, metavar="ID | COURT TYPE NUMBER [SUFFIX]")
@user_option("requested_by", "Who opens it (default HREG_USER_ID).")
def open_command(key: tuple[str, ...], requested_by: uuid.UUID | None) -> None:
    """Open an entity as a person does: its SI document is fetched (unless one fresh enough is
    stored) and parsed, as an interactive job served before background work."""
    with cli_engine().begin() as conn:
        entity_id = _resolve(conn, key)
        _load(conn, entity_id)
        job_id = companies.open_entity(conn, entity_id, requested_by, "opened from the command line")
        status = _load(conn, entity_id).processing_status
    click.echo(f"entity {entity_id}: {status}, job {job_id}")
    click.echo(f"follow it with: hreg entity show {entity_id}")


@entity.command("printout")
@click.argument("key", nargs=-1, required=True, metavar="ID | COURT TYPE NUMBER [SUFFIX]")
@user_option("requested_by", "Who asks (default HREG_USER_ID); without it the request counts as automatic.")
def printout_command(key: tuple[str, ...], requested_by: uuid.UUID | None) -> None:
    """Ask for an entity's current printout (AD, Aktueller Abdruck) as an interactive job: the
    register's PDF is downloaded and stored, unless one retrieved within HREG_DOCUMENT_FRESH_HOURS
    is stored; `hreg entity show` lists it among the stored documents."""
    with cli_engine().begin() as conn:
        entity_id = _resolve(conn, key)
        _load(conn, entity_id)
        params = {"entity_id": entity_id, "requested_by": requested_by, "priority": "interactive"}
        job_id = conn.execute(companies.QUERIES["request_printout"], params).scalar_one()
    click.echo(f"entity {entity_id}: printout requested, job {job_id}")
    click.echo(f"follow it with: hreg entity show {entity_id}")
