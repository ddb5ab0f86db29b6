"""The checks a job type's asset runs over what a batch wrote, as queries of db/sql/queries/batch_checks.sql."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BatchCheck:
    """A check over what a batch wrote: ``query`` (of db/sql/queries/batch_checks.sql) counts the
    rows that break ``description`` among the batch's entities, given as :entity_ids."""

    name: str
    description: str
    query: str
    parameters: Mapping[str, Any] = field(default_factory=dict)


DISCOVERY_CHECKS = (
    BatchCheck(
        "register_numbers_well_formed",
        "register numbers are digits only (the suffix apart) and court codes are XJustiz codes",
        "malformed_register_numbers",
    ),
)

COMPANY_RECORD_CHECKS = (
    BatchCheck(
        "record_register_matches_entity",
        "the register key in each current record is the key of the entity it was downloaded for",
        "records_of_another_register",
    ),
    BatchCheck(
        "records_have_name_and_register",
        "every current record has a name and a complete register key",
        "records_without_name_or_register",
    ),
)


def _validation_check(name: str, description: str) -> BatchCheck:
    """The batch's entities whose newest list fails the shareholder-list validation check ``name``."""
    return BatchCheck(name, description, "lists_failing_check", {"check_name": name})


SHAREHOLDER_CHECKS = (
    BatchCheck(
        "lists_verified",
        "every newest list is verified: all checks passed, no cell read with low confidence "
        "(otherwise it is stored as needs_review)",
        "lists_needing_review",
    ),
    _validation_check(
        "read_confidently",
        "no cell that carries a value was read with low OCR confidence",
    ),
    _validation_check(
        "percentages_sum_to_100",
        "shareholder percentages sum to 100 within the rounding GesLV §4 allows",
    ),
    _validation_check(
        "nominal_sum_matches_capital",
        "nominal amounts sum to the capital of the parsed register data",
    ),
    _validation_check(
        "shares_numbered",
        "every share has a running number, without gaps or repeats",
    ),
)
