"""The canonical company record that every XJustiz generation is parsed into.

The JSON field names are a contract shared with the CLI, the database and downstream readers:
rename nothing without bumping PARSER_VERSION. Dates are ISO 8601 strings, amounts decimal
strings, codes XJustiz codes (legal forms use the one code set of ``codes.LEGAL_FORMS``).
"""

from __future__ import annotations

import warnings
from typing import Literal

from pydantic import BaseModel, ConfigDict

RegisterType = Literal["HRA", "HRB", "GnR", "PR", "VR"]


class _Record(BaseModel):
    # Frozen and strict about unknown fields: a record is a value, and a typo is a bug.
    model_config = ConfigDict(frozen=True, extra="forbid")


class Source(_Record):
    format: Literal["xjustiz-1", "xjustiz-3"]
    xjustiz_version: str
    producer: str | None = None
    retrieved_at: str | None = None


class Register(_Record):
    court_code: str
    court_name: str | None = None
    type: RegisterType
    number: str
    suffix: str | None = None


class LegalForm(_Record):
    code: str
    label: str


class Address(_Record):
    street: str | None = None
    house_number: str | None = None
    postal_code: str | None = None
    city: str | None = None
    country: str | None = None


class Money(_Record):
    amount: str
    currency: str


class Officer(_Record):
    role_code: str
    role: str
    kind: Literal["person", "organisation"]
    name: str
    first_name: str | None = None
    last_name: str | None = None
    birth_date: str | None = None
    city: str | None = None
    representation: str | None = None
    exempt_181: bool | None = None
    liability_amount: Money | None = None


class Entry(_Record):
    column: int | None = None
    position: int | None = None
    number: int | None = None
    kind: str | None = None
    text: str


# The contract's field "register" shadows ABCMeta.register, which records never use.
warnings.filterwarnings("ignore", message='Field name "register"', category=UserWarning)


class CompanyRecord(_Record):
    parser_version: str
    source: Source
    register: Register
    name: str
    legal_form: LegalForm
    seat: str | None = None
    address: Address | None = None
    capital: Money | None = None
    purpose: str | None = None
    statute_date: str | None = None
    representation: str | None = None
    officers: tuple[Officer, ...] = ()
    entries: tuple[Entry, ...] = ()
    last_entry_date: str | None = None
