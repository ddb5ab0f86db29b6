"""Comparing a list as read with the values a person read from it by eye (the JSON files of
``tests/data/real_shareholder_lists``): what the tests on real lists and the benchmark judge by."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

from orchestration.shareholders.shareholder_list import Shareholder, ShareholderList

KINDS = {"natural_person": "person", "organisation": "organisation"}
PERCENT_TOLERANCE = Decimal("0.1")


def load_expected(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def firm_key(name: str | None) -> str:
    """A firm compared without case, spaces and punctuation: "S.à r.l." is "S. à r. l."."""
    return re.sub(r"[\W_]", "", (name or "").casefold())


def place_key(place: str | None) -> str:
    """A seat compared as a place: "28237 Bremen" is "Bremen" (the files give seats without the
    postal code the list may print), "Breda/ Niederlande" is "Breda, Niederlande"; "Cork, Irland"
    keeps its country, so "Cork" is not it."""
    return firm_key(re.sub(r"^\s*(?:D-)?\d{5}\s+", "", place or ""))


def register_key(register: str | None) -> str:
    """A register compared as its court (or foreign authority), type and number, without the words
    that introduce a German court or a number: "Amtsgericht Walsrode HRB 206723" is "AG Walsrode
    HRB 206723" and court "Walsrode", type "HRB", number "206723" as the reading holds them;
    "Companies Registration Office Nr. 470672" is the office and number "470672"."""
    return firm_key(re.sub(r"\b(?:Amtsgericht|AG|Registergericht)\b|\bNr\.(?=\s*\d)", "", register or ""))


def read_register(holder: Shareholder) -> str:
    parts = (holder.register_court, holder.register_type, holder.register_number)
    return " ".join(part for part in parts if part)


def running_numbers(holder: Shareholder) -> list[str]:
    """The shares' running numbers as the files write them: "1", a range "1-25000"."""
    return [f"{share.number}-{share.last_number}" if share.last_number else share.number for share in holder.shares]


def shareholder_problems(result: ShareholderList, expected: dict) -> list[list[str]]:
    """For each expected shareholder, what the reading got wrong (empty when right)."""
    problems = []
    for index, truth in enumerate(expected["shareholders"]):
        if index >= len(result.shareholders):
            problems.append(["missing"])
            continue
        got = result.shareholders[index]
        wrong = []
        if got.kind != KINDS[truth["kind"]]:
            wrong.append(f"kind {got.kind}, expected {KINDS[truth['kind']]}")
        if got.nominal_total != Decimal(truth["nominal_total"]):
            wrong.append(f"nominal {got.nominal_total}, expected {truth['nominal_total']}")
        count = sum(share.count or 0 for share in got.shares)
        if count != truth["share_count"]:
            wrong.append(f"{count} shares, expected {truth['share_count']}")
        if got.percentage is None or abs(got.percentage - Decimal(truth["percentage"])) > PERCENT_TOLERANCE:
            wrong.append(f"percentage {got.percentage}, expected {truth['percentage']}")
        if truth["kind"] == "organisation":
            if firm_key(got.name) != firm_key(truth["name"]):
                wrong.append(f"firm {got.name!r}, expected {truth['name']!r}")
            if place_key(got.seat) != place_key(truth["seat"]):
                wrong.append(f"seat {got.seat!r}, expected {truth['seat']!r}")
            if register_key(read_register(got)) != register_key(truth["register"]):
                wrong.append(f"register {read_register(got)!r}, expected {truth['register']!r}")
        numbers = running_numbers(got)
        if numbers != truth["running_numbers"]:
            wrong.append(f"running numbers {numbers}, expected {truth['running_numbers']}")
        problems.append(wrong)
    return problems


def list_problems(result: ShareholderList, expected: dict) -> list[str]:
    """Everything wrong with a reading: per shareholder, extra shareholders, the list's total."""
    wrong = [
        f"shareholder {index}: {', '.join(items)}"
        for index, items in enumerate(shareholder_problems(result, expected), 1)
        if items
    ]
    if len(result.shareholders) > len(expected["shareholders"]):
        wrong.append(f"{len(result.shareholders)} shareholders, expected {len(expected['shareholders'])}")
    if result.total_nominal != Decimal(expected["list_total_nominal"]):
        wrong.append(f"total {result.total_nominal}, expected {expected['list_total_nominal']}")
    return wrong
