"""Parsing a shareholder list: text of its pages, extraction by rules or an LLM, validation."""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Literal, get_args

from orchestration.failures import FailureClass, JobError
from orchestration.settings import Settings, get_settings
from orchestration.shareholders import rules
from orchestration.shareholders.llm import extract_with_llm
from orchestration.shareholders.model import ExtractedList, ShareholderList, derived_percentage
from orchestration.shareholders.reading import read_pages
from orchestration.shareholders.validation import validate

# Bump when parsed output changes, so a parser-change backfill re-parses stored lists.
PARSER_VERSION = "1.0.0"

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
    configured) only if the rules find no table or a result that fails validation.
    """
    pages = [page.text for page in read_pages(content)]
    return extract_shareholders(pages, capital=capital, method=method, settings=settings)


def extract_shareholders(
    pages: list[str],
    *,
    capital: Decimal | None = None,
    method: Method = "auto",
    settings: Settings | None = None,
) -> ShareholderList:
    """Extraction and validation of the text of a list's pages."""
    settings = settings or get_settings()
    if method == "llm":
        return _finish(extract_with_llm(pages, settings), "llm", capital)
    llm_configured = method == "auto" and bool(settings.llm_base_url)
    try:
        by_rules = _finish(rules.extract(pages), "rules", capital)
    except JobError as error:
        if not llm_configured or error.failure_class != FailureClass.PARSER_ERROR:
            raise
        log.info("rules found no shareholder table (%s); asking the LLM", error.message)
        return _finish(extract_with_llm(pages, settings), "llm", capital)
    if by_rules.validation.valid or not llm_configured:
        return by_rules
    failed = ", ".join(check.name for check in by_rules.validation.failed)
    log.info("rules result fails %s; asking the LLM", failed)
    try:
        by_llm = _finish(extract_with_llm(pages, settings), "llm", capital)
    except JobError as error:
        log.warning("LLM extraction failed, keeping the rules result: %s", error)
        return by_rules
    return by_llm if by_llm.validation.valid else by_rules


def _finish(extracted: ExtractedList, method: Literal["rules", "llm"], capital: Decimal | None) -> ShareholderList:
    """Derive percentages the list states only as "< 1 %", then validate."""
    total = extracted.total_nominal or sum((holder.nominal_total for holder in extracted.shareholders), Decimal(0))
    holders = [
        holder.model_copy(update={"percentage": derived_percentage(holder.nominal_total, total)})
        if holder.percentage_below_one and total
        else holder
        for holder in extracted.shareholders
    ]
    completed = ShareholderList(
        shareholders=holders, total_nominal=extracted.total_nominal, currency=extracted.currency, method=method
    )
    return completed.model_copy(update={"validation": validate(completed, capital)})
