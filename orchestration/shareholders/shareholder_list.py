"""The one model every extraction method produces, serialised with decimals as strings, and the
LLM's answer it is built from when the LLM reads."""

from __future__ import annotations

from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, computed_field, model_validator

# Decimals travel as strings ("66.68") so no amount passes through a float; the schema says so,
# without the look-ahead pattern pydantic would emit, which structured-output endpoints reject.
DecimalString = Annotated[Decimal, WithJsonSchema({"type": "string", "pattern": r"^-?[0-9]+(\.[0-9]+)?$"})]

RUNNING_NUMBER_PATTERN = r"^[0-9]+(\.[0-9]+)*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Share(_Strict):
    """One row of shares: a single running number, or a range "1 bis 12.500" of equal shares."""

    number: str = Field(description='Running number of the share, e.g. "1" or "1.1"; the first of a range.')
    last_number: str | None = Field(None, description="Last running number of a range; null for a single share.")
    nominal: DecimalString = Field(description="Nominal amount of each share in the row.")
    percentage: DecimalString | None = Field(
        None,
        description="The row's share of the capital in percent as the list states it (a range's intermediate "
        'sum, "Zwischensumme (25 %)"); null where the row states none.',
    )

    @property
    def count(self) -> int | None:
        """How many shares the row holds; None when the range cannot be counted (mixed numbering)."""
        if self.last_number is None:
            return 1
        first, last = self.number.split("."), self.last_number.split(".")
        if len(first) != len(last) or first[:-1] != last[:-1] or not all(p.isdigit() for p in first + last):
            return None
        return int(last[-1]) - int(first[-1]) + 1


class StatedShareholder(_Strict):
    """A shareholder as the list states it, all the LLM is asked to fill in; the checked list's
    Shareholder adds what is derived."""

    kind: Literal["person", "organisation"] | None = Field(
        description="null where the list does not say which: the reading tells it from what is read of "
        "the shareholder (a birth date, a legal form, a seat, a register)."
    )
    name: str = Field(description='Full name of a person ("Max Mustermann") or the firm of an organisation.')
    first_name: str | None = None
    last_name: str | None = None
    birth_date: date | None = None
    residence: str | None = Field(None, description="Place of residence of a person.")
    seat: str | None = Field(
        None, description='Seat of an organisation, with the country the list names beside it, e.g. "Cork, Irland".'
    )
    register_court: str | None = Field(
        None,
        description='Register court of an organisation, e.g. "München"; for a foreign register its court or '
        'authority, e.g. "Greffe du Tribunal de Commerce de Paris".',
    )
    register_type: str | None = Field(None, description="HRA, HRB, GnR, PR or VR; null for a foreign register.")
    register_number: str | None = Field(None, description='Register number with any suffix, e.g. "12345 B".')
    register_country: str | None = Field(
        None, description='ISO 3166 code of the register\'s country, e.g. "DE", "FR"; null when the list names none.'
    )
    shares: list[Share]
    nominal_total: DecimalString = Field(description="Sum of the nominal amounts of the shareholder's shares.")
    percentage: DecimalString | None = Field(
        None,
        description="Share of the capital in percent as the list states it; null where it only says "
        '"< 1 %" (the checked list derives it from the nominal amounts).',
    )
    percentage_below_one: bool = Field(False, description='The list states "< 1 %" instead of a number.')
    changes: str | None = Field(
        None,
        description='The text of the changes column ("Veränderungen") beside the shareholder\'s rows, as read: '
        "where its shares came from.",
    )


# The register types of the German registers: a list names such a register by court and type only.
GERMAN_REGISTER_TYPES = frozenset({"HRA", "HRB", "GnR", "PR", "VR"})


class Shareholder(StatedShareholder):
    """A shareholder of a checked list."""

    kind: Literal["person", "organisation"]
    percentage_derived: bool = Field(
        False, description="The list states no percentage (older lists need not); derived from the nominal amounts."
    )

    @model_validator(mode="after")
    def _german_register_in_germany(self) -> Shareholder:
        # Whoever read the cell (rules or a model asked only for a foreign register's country).
        if self.register_country is None and self.register_type in GERMAN_REGISTER_TYPES:
            self.register_country = "DE"
        return self


class LowConfidenceCell(_Strict):
    """A table cell that carries a value and that OCR read with low confidence, or that does not
    read as the value it must hold (confidence 0: an intermediate sum that is not its row's)."""

    page: int
    text: str
    confidence: float


class ExtractedList(_Strict):
    """What an extraction method reads from a list, before validation."""

    shareholders: list[Shareholder]
    total_nominal: DecimalString | None = Field(
        None, description="Total nominal capital: the list's sum line, else the sum of the shareholders."
    )
    total_stated: bool = Field(
        False, description="total_nominal is the list's own sum line, not the sum of the shareholders."
    )
    currency: str | None = Field(None, description='ISO currency code such as "EUR".')
    low_confidence_cells: list[LowConfidenceCell] = Field(
        default_factory=list, description="Cells read with low OCR confidence; empty for a text layer."
    )


class LlmAnswer(_Strict):
    """What the LLM is asked to read from the table: nothing the code works out itself (derived
    percentages, the cells OCR was unsure of), which the table and the checks add."""

    shareholders: list[StatedShareholder]
    total_nominal: DecimalString | None = Field(None, description="The list's sum line; null when it has none.")
    currency: str | None = Field(None, description='ISO currency code such as "EUR".')


class Check(_Strict):
    name: str
    status: Literal["passed", "failed", "skipped"]
    message: str


class Validation(BaseModel):
    checks: list[Check] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form, which mypy does not model
    @property
    def valid(self) -> bool:
        return not self.failed

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form, which mypy does not model
    @property
    def status(self) -> Literal["verified", "needs_review"]:
        """verified only when every check passed; anything else is for a person to look at."""
        return "verified" if self.valid else "needs_review"

    @property
    def failed(self) -> list[Check]:
        return [check for check in self.checks if check.status == "failed"]


Source = Literal["text_layer", "ocr", "mixed"]
OcrFallback = Literal["used", "not_better", "failed"]


class ShareholderList(ExtractedList):
    method: Literal["rules", "llm"]
    source: Source = Field(
        description="Where the table's words came from: the PDF's text layer, OCR of page images, or both."
    )
    ocr_fallback: OcrFallback | None = Field(
        None,
        description="A PDF's text layer that read as no verified list was read again by OCR of its rendered "
        "pages: used (that reading was better), not_better, or failed; null when not tried.",
    )
    validation: Validation = Field(default_factory=Validation)


def derived_percentage(nominal: Decimal, total: Decimal) -> Decimal:
    """A percentage of ``total`` computed from nominal amounts, to two decimals; for lists that say "< 1 %"."""
    return (nominal * 100 / total).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
