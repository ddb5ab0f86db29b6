"""Parsing a shareholder list, as a straight line: pages → table → shareholder rows → checks.

pages (``page_reader``: images or text layer, upright) → table (``tables``: cells with text and
confidence) → shareholder rows (``rows``, or the LLM from the same cells) → checks
(``validation``). Either method's result is judged by the same checks.

A PDF's text layer is read first; when it holds no table, or a table from it does not verify, the
rendered pages are read by our OCR as well (a scanner's own OCR layer may garble letters and lose digits), and the better
reading is kept: verified over needs_review, else fewer failed checks, on a tie the text layer.
"""

from __future__ import annotations

import logging
from decimal import Decimal
from typing import Literal, get_args

from orchestration.runtime.failures import FailureClass, JobError
from orchestration.settings import LlmEndpoint
from orchestration.shareholders import rows
from orchestration.shareholders.llm import extract_with_llm
from orchestration.shareholders.page_layout import Page
from orchestration.shareholders.page_reader import read_by_ocr, read_pages
from orchestration.shareholders.shareholder_list import ExtractedList, ShareholderList, Source, derived_percentage
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
    llm: LlmEndpoint | None = None,
) -> ShareholderList:
    """The shareholders of a list file (PDF, TIFF, PNG, JPEG); raises JobError when it cannot be read.

    ``capital`` is the nominal capital from the parsed register data, checked against the list.
    ``method``: ``rules``; ``llm``; or ``auto``, which uses the rules and asks the LLM (when one is
    configured) only if the rules find no table or a result that fails a check. A PDF whose text
    layer reads as no verified list is read again by OCR of its rendered pages (``ocr_fallback``).
    """
    pages = read_pages(content)

    def read(pages: list[Page]) -> ShareholderList:
        return extract_shareholders(read_tables(pages), capital=capital, method=method, llm=llm)

    if not any(page.source == "text_layer" for page in pages):
        return read(pages)
    by_text: ShareholderList | None = None
    try:
        by_text = read(pages)
    except JobError as error:
        if error.failure_class != FailureClass.PARSER_ERROR:
            raise
        text_error = error
        log.info("the text layer reads as no list (%s); reading the rendered pages by OCR", error.message)
    else:
        if by_text.validation.valid or by_text.source == "ocr":
            return by_text  # verified, or its table is on pages already read by OCR (a text layer elsewhere)
        log.info("the text layer's reading fails %s; reading the rendered pages by OCR", _failed_names(by_text))
    try:
        by_ocr = read(read_by_ocr(content, pages))
    except JobError as ocr_error:
        if by_text is not None:
            log.warning("OCR of the rendered pages failed, keeping the text layer's reading: %s", ocr_error)
            return by_text.model_copy(update={"ocr_fallback": "failed"})
        if ocr_error.failure_class != FailureClass.PARSER_ERROR:
            raise
        raise JobError(
            FailureClass.PARSER_ERROR,
            f"{text_error.message} in the text layer; by OCR of the rendered pages: {ocr_error.message}",
            source="shareholders",
        ) from ocr_error
    if by_text is None or by_ocr.validation.valid or len(by_ocr.validation.failed) < len(by_text.validation.failed):
        return by_ocr.model_copy(update={"ocr_fallback": "used"})
    log.info("the OCR reading fails %s; keeping the text layer's", _failed_names(by_ocr))
    return by_text.model_copy(update={"ocr_fallback": "not_better"})


def _failed_names(result: ShareholderList) -> str:
    return ", ".join(check.name for check in result.validation.failed)


def extract_shareholders(
    table: Table | None,
    *,
    capital: Decimal | None = None,
    method: Method = "auto",
    llm: LlmEndpoint | None = None,
) -> ShareholderList:
    """Shareholders of a list's table, by rules or the LLM, checked."""
    table = _required(table)
    if method == "llm":
        return _finish(extract_with_llm(table, llm), "llm", table.source, capital)
    llm_configured = method == "auto" and llm is not None
    try:
        by_rules = _finish(rows.extract(table), "rules", table.source, capital)
    except JobError as error:
        if not llm_configured or error.failure_class != FailureClass.PARSER_ERROR:
            raise
        log.info("rules read no shareholders (%s); asking the LLM", error.message)
        return _finish(extract_with_llm(table, llm), "llm", table.source, capital)
    if by_rules.validation.valid or not llm_configured:
        return by_rules
    log.info("rules result fails %s; asking the LLM", _failed_names(by_rules))
    try:
        by_llm = _finish(extract_with_llm(table, llm), "llm", table.source, capital)
    except JobError as error:
        log.warning("LLM extraction failed, keeping the rules result: %s", error)
        return by_rules
    return by_llm if by_llm.validation.valid else by_rules


def _required(table: Table | None) -> Table:
    if table is None:
        raise JobError(FailureClass.PARSER_ERROR, "no shareholder table found", source="shareholders")
    return table


def _finish(
    extracted: ExtractedList, method: Literal["rules", "llm"], source: Source, capital: Decimal | None
) -> ShareholderList:
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
        source=source,
    )
    return completed.model_copy(update={"validation": validate(completed, capital)})
