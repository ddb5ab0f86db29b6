"""Extraction by a language model behind an OpenAI-compatible chat-completions endpoint.

The model answers in JSON constrained by the JSON schema of ``LlmAnswer`` (structured output, strict
mode): only what it is asked to read. The answer is validated by that same pydantic model and
completed from the table (the cells OCR was unsure of, whether the list states its total) into the
ExtractedList the rules produce too, so a result of either method has the same shape and the same
guarantees.
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from typing import Any

import openai
from pydantic import ValidationError

from orchestration.runtime.failures import FailureClass, JobError
from orchestration.settings import LlmEndpoint
from orchestration.shareholders.shareholder_list import ExtractedList, LlmAnswer, Shareholder, StatedShareholder
from orchestration.shareholders.tables import Table
from orchestration.shareholders.validation import holder_kinds

MAX_TEXT_CHARS = 100_000
REQUEST_TIMEOUT_S = 180
SCHEMA_NAME = "shareholder_list"

INSTRUCTIONS = """\
You read the table of a German shareholder list (Gesellschafterliste, GmbHG §40), given as JSON:
its column headings and its lines, each a mapping from heading to the text of that cell, and
return its shareholders as JSON matching the schema. The cells may come from OCR and contain small
errors. A shareholder's cells may run over several lines; the changes column (Veränderungen) is
never part of a name: its text beside the shareholder's rows goes to changes.
- One entry per shareholder, in the order of the list, with all of their shares.
- kind: "person" for a natural person, "organisation" for a company, foundation or association;
  null where the list does not say which.
- Persons: name as "First Last", first_name, last_name, birth_date (YYYY-MM-DD), residence.
- Organisations: name is the firm alone; seat; register_court as the court's place (e.g. "München"),
  register_type (HRA, HRB, GnR, PR, VR) and register_number with any suffix (e.g. "12345 B").
  A foreign register: register_court is its court or authority ("Greffe du Tribunal de Commerce
  de Lyon", "Companies House"), register_type null, register_number its number; register_country
  the ISO code of the register's country ("FR").
- shares: one entry per running number, or per range: "1 bis 12.500" is number "1",
  last_number "12500"; nominal is the nominal amount of EACH share in the row; percentage the
  row's own percentage where the list states one (a range's intermediate sum, "Zwischensumme
  6.250,00 (25 %)"), else null. A range's intermediate sum is never the shareholder's total.
- Amounts and percentages are decimal strings with a dot and no thousands separator
  ("12500.00", "66.7"), keeping the printed number of decimals of a percentage.
- percentage: the shareholder's total percentage as printed. If the list prints "< 1 %", set
  percentage_below_one to true and percentage to null.
- total_nominal: the list's sum line; currency: ISO code such as "EUR".
Leave a field null when the list does not state it; never invent values."""


def response_schema() -> dict[str, Any]:
    """The JSON schema of LlmAnswer in the strict form structured outputs require."""
    return _strict(copy.deepcopy(LlmAnswer.model_json_schema()))


def _strict(node: Any) -> Any:
    """Every property required (optional ones are nullable), no extra properties, no defaults."""
    if isinstance(node, dict):
        node.pop("default", None)
        if node.get("type") == "object" and "properties" in node:
            node["required"] = list(node["properties"])
            node["additionalProperties"] = False
        for value in node.values():
            _strict(value)
    elif isinstance(node, list):
        for value in node:
            _strict(value)
    return node


def extract_with_llm(table: Table, llm: LlmEndpoint | None) -> ExtractedList:
    """The model's reading of the table, completed from the table; raises JobError for an
    unreachable (or unconfigured) endpoint or an unusable answer."""
    answer = _ask(table, llm)
    return ExtractedList(
        shareholders=[_checked(holder) for holder in answer.shareholders],
        total_nominal=answer.total_nominal
        if answer.total_nominal is not None
        else sum((holder.nominal_total for holder in answer.shareholders), Decimal(0)),
        total_stated=answer.total_nominal is not None,
        currency=answer.currency,
        # The model cannot tell which cells OCR was unsure of; the table can.
        low_confidence_cells=table.low_confidence_cells(),
    )


def _checked(holder: StatedShareholder) -> Shareholder:
    """The model's shareholder as a checked list's. A kind the model left open is the one what it
    read fits; where that is both or neither, the holder is recorded as a person, and the
    kinds_match check, which then fails, sends the list to review."""
    kinds = holder_kinds(holder)
    kind = holder.kind or (kinds.pop() if len(kinds) == 1 else "person")
    return Shareholder.model_validate({**holder.model_dump(), "kind": kind})


def _ask(table: Table, llm: LlmEndpoint | None) -> LlmAnswer:
    if llm is None:
        raise JobError(
            FailureClass.DEPENDENCY_UNAVAILABLE,
            "no LLM endpoint configured (HREG_LLM_BASE_URL)",
            source="shareholders",
            code="llm",
        )
    text = json.dumps(
        {"headings": [column.heading for column in table.columns], "lines": table.as_rows()}, ensure_ascii=False
    )
    client = openai.OpenAI(
        base_url=llm.base_url,
        api_key=llm.api_key or "not-needed",
        timeout=REQUEST_TIMEOUT_S,
        max_retries=1,
    )
    try:
        completion = client.chat.completions.create(
            model=llm.model,
            temperature=0,
            messages=[
                {"role": "system", "content": INSTRUCTIONS},
                {"role": "user", "content": text[:MAX_TEXT_CHARS]},
            ],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": SCHEMA_NAME, "schema": response_schema(), "strict": True},
            },
        )
    except openai.APITimeoutError as error:
        raise JobError(
            FailureClass.TIMEOUT, f"LLM endpoint timed out: {error}", source="shareholders", code="llm"
        ) from error
    except openai.APIConnectionError as error:
        raise _unavailable(f"LLM endpoint unreachable: {error}") from error
    except openai.APIStatusError as error:
        if error.status_code == 429 or error.status_code >= 500:
            raise _unavailable(f"LLM endpoint answered {error.status_code}: {error.message}") from error
        raise _parser_error(f"LLM endpoint rejected the request ({error.status_code}): {error.message}") from error
    finally:
        client.close()

    if not completion.choices:
        raise _parser_error("LLM endpoint returned no choices")
    message = completion.choices[0].message
    if getattr(message, "refusal", None):
        raise _parser_error(f"the model refused: {message.refusal}")
    try:
        return LlmAnswer.model_validate_json(message.content or "")
    except ValidationError as error:
        raise _parser_error(
            f"LLM answer does not match the model: {error.error_count()} errors, first: "
            f"{error.errors()[0]['msg']} at {error.errors()[0]['loc']}"
        ) from error


def _unavailable(message: str) -> JobError:
    return JobError(FailureClass.DEPENDENCY_UNAVAILABLE, message, source="shareholders", code="llm")


def _parser_error(message: str) -> JobError:
    return JobError(FailureClass.PARSER_ERROR, message, source="shareholders", code="llm")
