"""The element names of each XJustiz generation, read once from ``data/element_names.toml``.

The generations keep the same blocks under other names (see ``record``), so the names are data:
the file gives them local to the XJustiz namespace, a path as a list; here they are in Clark
notation, the form lxml compares tags in.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, TypeVar

from orchestration.xjustiz.amounts import AmountNames
from orchestration.xjustiz.extract import ExtractNames
from orchestration.xjustiz.participants import ParticipantNames
from orchestration.xjustiz.xml_values import T


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordNames:
    """The names ``record`` reads the blocks of a register record by."""

    proceeding: tuple[str, str]  # from the root: Grunddaten/Verfahrensdaten
    register_data: str  # below the root: Fachdaten_Register
    basis: str  # below the register data: Basisdaten_Register
    extract: str
    additional: str
    rechtstraeger: str  # below the basis
    concerned: str  # below the register data: the role number of the company among the participants
    representation: str  # below the basis
    purpose: tuple[str, ...]  # below the basis: the first of these with a text
    statute: str  # below the basis
    statute_date: str | None = None  # below the statute: its date; None: the statute's own text
    name: str
    legal_form: str
    seat: str
    address: str
    city: str
    street: str
    house_number: str
    postal_code: str
    country: str
    amount: str  # below an amount: the number
    currency: str  # and its currency, for error paths
    role_reference: str


@dataclass(frozen=True, slots=True)
class ElementNames:
    """One generation's names, by the reader that uses them."""

    format: str  # the record's source format: the generation's key in the file
    record: RecordNames
    participants: ParticipantNames
    extract: ExtractNames
    amounts: AmountNames
    # Error texts that name this generation's elements.
    no_company: str
    name_path: str


Names = TypeVar("Names")


@cache
def element_names(generation: str) -> ElementNames:
    """The names of ``generation`` ("xjustiz-1", "xjustiz-3")."""
    text = resources.files(__package__).joinpath("data/element_names.toml").read_text(encoding="utf-8")
    table = tomllib.loads(text)[generation]
    return ElementNames(
        format=generation,
        record=_names(RecordNames, table["record"]),
        participants=_names(ParticipantNames, table["participants"]),
        extract=_names(ExtractNames, table["extract"]),
        amounts=_names(AmountNames, table["amounts"]),
        no_company=table["no_company"],
        name_path=table["name_path"],
    )


def _names(kind: type[Names], table: dict[str, Any]) -> Names:
    # A name the file misspells or leaves out, where the generation must have it, is a TypeError here.
    return kind(**{field: _clark(value) for field, value in table.items()})


def _clark(value: str | list) -> str | tuple:
    return T + value if isinstance(value, str) else tuple(_clark(item) for item in value)
