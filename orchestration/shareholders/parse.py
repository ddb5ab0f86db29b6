"""Parsing a shareholder list, as a straight line: pages → table → shareholder rows → checks.

pages (``pages``: images or text layer, upright) → table (``tables``: cells with text and
confidence) → shareholder rows (``rules``, or the LLM from the same cells) → checks
(``validation``). Either method's result is judged by the same checks.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Literal, get_args

from orchestration.failures import FailureClass, JobError
from orchestration.settings import Settings, get_settings
from orchestration.shareholders import rules
from orchestration.shareholders.llm import extract_with_llm
from orchestration.shareholders.model import ExtractedList, ShareholderList, derived_percentage
from orchestration.shareholders.pages import read_pages
from orchestration.shareholders.tables import Table, read_tables
from orchestration.shareholders.validation import validate

Method = Literal["auto", "rules", "llm"]
METHODS: tuple[str, ...] = get_args(Method)

log = logging.getLogger(__name__)


def parse_shareholder_list(
    content: bytes,
    *,
    capital: Decimal | None = None,
    method: Method = "auto",
    settings: Settings | None = None,
) -> ShareholderList:
    """The shareholders of a list file (PDF, TIFF, PNG, JPEG); raises JobError when it cannot be read.

    ``capital`` is the nominal capital from the parsed register data, checked against the list.
    ``method``: ``rules``; ``llm``; or ``auto``, which uses the rules and asks the LLM (when one is
    configured) only if the rules find no table or a result that fails a check.
    """
    return extract_shareholders(read_tables(read_pages(content)), capital=capital, method=method, settings=settings)


def extract_shareholders(
    table: Table | None,
    *,
    capital: Decimal | None = None,
    method: Method = "auto",
    settings: Settings | None = None,
) -> ShareholderList:
    """Shareholders of a list's table, by rules or the LLM, checked."""
    settings = settings or get_settings()
    if method == "llm":
        return _finish(_by_llm(_required(table), settings), "llm", capital)
    llm_configured = method == "auto" and bool(settings.llm_base_url) and table is not None
    try:
        by_rules = _finish(rules.extract(table), "rules", capital)
    except JobError as error:
        if not llm_configured or error.failure_class != FailureClass.PARSER_ERROR:
            raise
        log.info("rules read no shareholders (%s); asking the LLM", error.message)
        return _finish(_by_llm(table, settings), "llm", capital)
    if by_rules.validation.valid or not llm_configured:
        return by_rules
    failed = ", ".join(check.name for check in by_rules.validation.failed)
    log.info("rules result fails %s; asking the LLM", failed)
    try:
        by_llm = _finish(_by_llm(table, settings), "llm", capital)
    except JobError as error:
        log.warning("LLM extraction failed, keeping the rules result: %s", error)
        return by_rules
    return by_llm if by_llm.validation.valid else by_rules


def _by_llm(table: Table, settings: Settings) -> ExtractedList:
    """The LLM's reading, with the cells OCR was unsure of: the model cannot tell which they are."""
    extracted = extract_with_llm(table, settings)
    return extracted.model_copy(update={"low_confidence_cells": table.low_confidence_cells()})


def _required(table: Table | None) -> Table:
    if table is None:
        raise JobError(FailureClass.PARSER_ERROR, "no shareholder table found", source="shareholders")
    return table


def _finish(extracted: ExtractedList, method: Literal["rules", "llm"], capital: Decimal | None) -> ShareholderList:
    """Derive percentages the list states only as "< 1 %" or not at all, then validate."""
    total = extracted.total_nominal or sum((holder.nominal_total for holder in extracted.shareholders), Decimal(0))
    states_percentages = any(h.percentage is not None or h.percentage_below_one for h in extracted.shareholders)
    holders = []
    for holder in extracted.shareholders:
        if holder.percentage_below_one and total:
            holder = holder.model_copy(update={"percentage": derived_percentage(holder.nominal_total, total)})
        elif not states_percentages and total:
            holder = holder.model_copy(
                update={"percentage": derived_percentage(holder.nominal_total, total), "percentage_derived": True}
            )
        holders.append(holder)
    completed = ShareholderList(
        shareholders=holders,
        total_nominal=extracted.total_nominal,
        total_stated=extracted.total_stated,
        currency=extracted.currency,
        low_confidence_cells=extracted.low_confidence_cells,
        method=method,
    )
    return completed.model_copy(update={"validation": validate(completed, capital)})
