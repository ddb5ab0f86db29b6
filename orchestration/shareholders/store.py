"""Shareholder lists in PostgreSQL: one content.shareholder_lists revision per list and its rows
in content.shareholders, corporate shareholders linked to the entities they are; and the
resulting ownership graph as a pandas DataFrame."""

from __future__ import annotations

import hashlib
import json
import re
from decimal import Decimal
from typing import TYPE_CHECKING

import sqlalchemy as sa

from orchestration.db import queries
from orchestration.shareholders.shareholder_list import Shareholder, ShareholderList

if TYPE_CHECKING:
    import pandas as pd

# Words that name a kind of court rather than a place: "Amtsgericht München" is the court "München".
_COURT_NOISE = frozenset({"amtsgericht", "registergericht", "local", "district", "court", "of", "ag"})

QUERIES = queries.load("shareholders")


def list_content_hash(result: ShareholderList) -> str:
    """Hash of what the list says; how it was read (method) and its checks stay out."""
    content = result.model_dump(mode="json", include={"shareholders", "total_nominal", "currency"})
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def store_shareholder_list(
    conn: sa.Connection,
    *,
    entity_id: str,
    raw_document_id: str | None,
    job_id: str | None,
    result: ShareholderList,
    capital: Decimal | None,
) -> int | None:
    """Write a new list revision with its shareholders; None when the entity's latest list already
    says the same, against the same capital with the same checks (a re-parse that changed nothing)."""
    # Serialise writers of one entity so two parses cannot both decide that they are new.
    conn.execute(QUERIES["lock_entity_lists"], {"key": f"shareholders:{entity_id}"})
    content_hash = list_content_hash(result)
    validation = result.validation.model_dump(mode="json")
    latest = conn.execute(QUERIES["latest_list"], {"entity_id": entity_id}).first()
    if (
        latest is not None
        and latest.content_hash == content_hash
        and latest.capital == capital
        and latest.validation == validation
    ):
        return None
    list_id = conn.execute(
        QUERIES["insert_list"],
        {
            "entity_id": entity_id,
            "raw_document_id": raw_document_id,
            "job_id": job_id,
            "content_hash": content_hash,
            "method": result.method,
            "source": result.source,
            "ocr_fallback": result.ocr_fallback,
            "total_nominal": result.total_nominal,
            "currency": result.currency,
            "capital": capital,
            "validation": json.dumps(validation, ensure_ascii=False),
            "valid": result.validation.valid,
        },
    ).scalar_one()
    rows = [
        {
            "list_id": list_id,
            "entity_id": entity_id,
            "position": position,
            **holder.model_dump(
                include={
                    "kind",
                    "name",
                    "first_name",
                    "last_name",
                    "birth_date",
                    "residence",
                    "seat",
                    "register_court",
                    "register_type",
                    "register_number",
                    "register_country",
                    "nominal_total",
                    "percentage",
                    "percentage_below_one",
                    "changes",
                }
            ),
            "linked_entity_id": linked_entity_id(conn, holder),
            "shares": json.dumps([share.model_dump(mode="json") for share in holder.shares]),
        }
        for position, holder in enumerate(result.shareholders, 1)
    ]
    if rows:
        conn.execute(QUERIES["insert_shareholder"], rows)
    return list_id


def linked_entity_id(conn: sa.Connection, holder: Shareholder):
    """The entity a corporate shareholder is, by register type, number and court; None unless exactly one."""
    if holder.kind != "organisation" or not (holder.register_type and holder.register_number and holder.register_court):
        return None
    match = re.fullmatch(r"(\d+)\s*([A-Za-z]{0,3})", holder.register_number.strip())
    if not match:
        return None
    candidates = conn.execute(
        QUERIES["entities_by_register"],
        {"register_type": holder.register_type, "register_number": match.group(1), "suffix": match.group(2).upper()},
    ).all()
    same_court = [row.id for row in candidates if _same_court(holder.register_court, row.court_name)]
    return same_court[0] if len(same_court) == 1 else None


def _court_words(name: str) -> frozenset[str]:
    return frozenset(re.findall(r"[^\W\d_]+", name.casefold())) - _COURT_NOISE


def _same_court(stated: str, registered: str | None) -> bool:
    """ "Charlottenburg" is "Berlin (Charlottenburg)", "München" is "Amtsgericht München"."""
    if not registered:
        return False
    ours, theirs = _court_words(stated), _court_words(registered)
    return bool(ours and theirs) and (ours <= theirs or theirs <= ours)


def load_shareholders(
    conn: sa.Connection, *, entity_ids: list[str] | None = None, latest_only: bool = True
) -> pd.DataFrame:
    """One row per shareholder of each list: an edge of the ownership graph from the shareholder
    (``linked_entity_id`` when it is a known entity) to the company (``entity_id``)."""
    import pandas as pd  # only here: every run process loads this module, few need pandas

    params = {
        "latest_only": latest_only,
        "entity_ids": None if entity_ids is None else [str(entity_id) for entity_id in entity_ids],
    }
    frame = pd.read_sql_query(QUERIES["shareholder_table"], conn, params=params)
    for column in ("nominal_total", "percentage"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("float64")
    for column in ("entity_id", "linked_entity_id"):
        # Object columns of str or None: pandas 3 would otherwise store a missing link as NaN.
        frame[column] = pd.Series(
            [None if pd.isna(value) else str(value) for value in frame[column]], index=frame.index, dtype=object
        )
    return frame


def review_summary(conn: sa.Connection, entity_ids: list[str], *, shown: int = 20) -> dict:
    """The newest lists of these entities by review status, with the failed checks and
    low-confidence cells of those that need review, and where their words came from."""
    rows = (
        conn.execute(QUERIES["newest_lists"], {"entity_ids": [str(e) for e in entity_ids]}).all() if entity_ids else []
    )
    review = [
        {
            "list_id": row.id,
            "entity_id": str(row.entity_id),
            "source": row.source,
            "ocr_fallback": row.ocr_fallback,
            "failed_checks": [c["name"] for c in row.validation.get("checks", []) if c["status"] == "failed"],
            "messages": [c["message"] for c in row.validation.get("checks", []) if c["status"] == "failed"],
        }
        for row in rows
        if not row.valid
    ]
    return {"verified": sum(1 for row in rows if row.valid), "needs_review": len(review), "to_review": review[:shown]}
