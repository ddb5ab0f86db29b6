"""Comparing a list as read with the values a person read from it by eye (the JSON files of
``tests/data/real_shareholder_lists``): what the tests on real lists and the benchmark judge by."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

from orchestration.shareholders.shareholder_list import ShareholderList

KINDS = {"natural_person": "person", "organisation": "organisation"}
PERCENT_TOLERANCE = Decimal("0.1")


def load_expected(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def firm_key(name: str | None) -> str:
    """A firm compared without case, spaces and punctuation: "S.à r.l." is "S. à r. l."."""
    return re.sub(r"[\W_]", "", (name or "").casefold())


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
        if truth["kind"] == "organisation" and firm_key(got.name) != firm_key(truth["name"]):
            wrong.append(f"firm {got.name!r}, expected {truth['name']!r}")
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
