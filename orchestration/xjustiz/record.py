"""The reading of an SI document that XJustiz 1.x and 3.x share: the same blocks in the same
places, under other names. A ``Generation`` gives the names and the few readers that really
differ (register, legal form, roles, representation, currency, country); ``read_record`` turns a
document into the plain data that ``parser`` validates into a CompanyRecord in one call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from lxml import etree

from orchestration.xjustiz import codes
from orchestration.xjustiz.amounts import AmountNames, read_capital, read_liabilities
from orchestration.xjustiz.extract import ExtractNames, read_extract
from orchestration.xjustiz.parser_version import PARSER_VERSION
from orchestration.xjustiz.participants import Representation, Role, officers
from orchestration.xjustiz.xml_values import (
    XJUSTIZ_NS,
    child_text,
    children,
    decimal_amount,
    descend,
    first_of,
    iso_date,
    structure_error,
    text_of,
)


@dataclass(frozen=True, slots=True)
class Generation:
    """The element names (Clark notation) and own readers of one XJustiz generation."""

    format: str  # the record's source format
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
    statute_date: str | None  # below the statute: its date; None: the statute's own text
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
    extract_names: ExtractNames
    amount_names: AmountNames
    # Error texts that name this generation's elements.
    no_company: str
    name_path: str
    # What differs beyond names:
    roles: Callable[[etree._Element], list[Role]]
    register: Callable[[etree._Element, dict, list[Role]], dict]  # (proceeding, root's children, roles)
    producer: Callable[[dict, etree._Element], str | None]  # (root's children, proceeding)
    legal_form_of: Callable[[dict, list[Role]], dict]
    read_representation: Callable[[etree._Element | None], tuple[str | None, dict[str, Representation]]]
    currency_code: Callable[[dict], str | None]  # from the children of an amount
    country_of: Callable[[etree._Element], str | None]
    entry_kind: Callable[[tuple], str | None] | None = None


def read_record(root: etree._Element, top: dict, version: str, retrieved_at: str | None, g: Generation) -> dict:
    """``top``: the first child of each tag of ``root``."""
    proceeding = descend(top.get(g.proceeding[0]), *g.proceeding[1:])
    if proceeding is None:
        raise structure_error(root, "no procedure data", "/".join(g.proceeding).replace("{" + XJUSTIZ_NS + "}", ""))
    fachdaten = top.get(g.register_data)
    if fachdaten is None:
        raise structure_error(root, "no register data", g.register_data)
    register_data = children(fachdaten)
    basis = children(register_data.get(g.basis))
    extract = read_extract(register_data.get(g.extract), g.extract_names, g.entry_kind)
    additional = register_data.get(g.additional)

    roles = g.roles(proceeding)
    company = _company(fachdaten, register_data, basis, roles, g)
    representation, special_representation = g.read_representation(basis.get(g.representation))

    def money(element: etree._Element) -> dict | None:
        return _money(element, g)

    liabilities = read_liabilities(additional, g.amount_names, money)
    statute = basis.get(g.statute)

    return dict(
        parser_version=PARSER_VERSION,
        source=dict(
            format=g.format,
            xjustiz_version=version,
            producer=g.producer(top, proceeding),
            retrieved_at=retrieved_at or extract.retrieved_at,
        ),
        register=g.register(proceeding, top, roles),
        name=_company_name(company, g),
        legal_form=g.legal_form_of(company, roles),
        seat=child_text(company.get(g.seat), g.city),
        address=_address(company.get(g.address), g),
        capital=read_capital(additional, g.amount_names, money),
        purpose=next(filter(None, (text_of(basis.get(tag)) for tag in g.purpose)), None),
        statute_date=_statute_date(statute, g),
        representation=representation,
        officers=officers(roles, codes.NON_OFFICER_ROLES, special_representation, liabilities),
        entries=extract.entries,
        last_entry_date=extract.last_entry_date,
    )


def _company(fachdaten: etree._Element, register_data: dict, basis: dict, roles: list[Role], g: Generation) -> dict:
    """The fields of the Rechtsträger: its own block, or the participant standing in for it."""
    fields = (g.name, g.legal_form, g.seat, g.address)
    rechtstraeger = basis.get(g.rechtstraeger)
    if rechtstraeger is not None:
        return first_of(rechtstraeger, fields)
    concerned = child_text(register_data.get(g.concerned), g.role_reference)
    candidates = [r for r in roles if r[0] == concerned] + [r for r in roles if r[1] == codes.COMPANY_ROLE]
    for _, _, _, participant in candidates:
        if participant.kind == "organisation":
            return first_of(participant.organisation, fields)
    raise structure_error(fachdaten, g.no_company)


def _company_name(company: dict, g: Generation) -> str:
    name = text_of(company.get(g.name))
    if name is None:
        raise structure_error(company[None], "company name is missing", g.name_path)
    return name


def _address(anschrift: etree._Element | None, g: Generation) -> dict | None:
    if anschrift is None:
        return None
    parts = children(anschrift)
    country = parts.get(g.country)
    address = dict(
        street=text_of(parts.get(g.street)),
        house_number=text_of(parts.get(g.house_number)),
        postal_code=text_of(parts.get(g.postal_code)),
        city=text_of(parts.get(g.city)),
        country=g.country_of(country) if country is not None else None,
    )
    return address if any(address.values()) else None


def _money(element: etree._Element, g: Generation) -> dict | None:
    parts = children(element)
    amount = decimal_amount(text_of(parts.get(g.amount)), element)
    if amount is None:
        return None
    code = g.currency_code(parts)
    if code is None:
        raise structure_error(element, "amount without currency", g.currency)
    return dict(amount=amount, currency=code)


def _statute_date(statute: etree._Element | None, g: Generation) -> str | None:
    if statute is None:
        return None
    text = child_text(statute, g.statute_date) if g.statute_date else text_of(statute)
    return iso_date(text, statute)
