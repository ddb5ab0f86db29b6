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
from orchestration.xjustiz.amounts import read_capital, read_liabilities
from orchestration.xjustiz.element_names import ElementNames, RecordNames
from orchestration.xjustiz.extract import read_extract
from orchestration.xjustiz.parser_version import PARSER_VERSION
from orchestration.xjustiz.participants import Representation, Role, officers
from orchestration.xjustiz.xml_values import (
    T,
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
    """The element names and own readers of one XJustiz generation."""

    names: ElementNames
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
    names = g.names.record
    proceeding = descend(top.get(names.proceeding[0]), *names.proceeding[1:])
    if proceeding is None:
        raise structure_error(root, "no procedure data", "/".join(names.proceeding).replace(T, ""))
    fachdaten = top.get(names.register_data)
    if fachdaten is None:
        raise structure_error(root, "no register data", names.register_data)
    register_data = children(fachdaten)
    basis = children(register_data.get(names.basis))
    extract = read_extract(register_data.get(names.extract), g.names.extract, g.entry_kind)
    additional = register_data.get(names.additional)

    roles = g.roles(proceeding)
    company = _company(fachdaten, register_data, basis, roles, g.names)
    representation, special_representation = g.read_representation(basis.get(names.representation))

    def money(element: etree._Element) -> dict | None:
        return _money(element, g)

    liabilities = read_liabilities(additional, g.names.amounts, money)
    statute = basis.get(names.statute)

    return dict(
        parser_version=PARSER_VERSION,
        source=dict(
            format=g.names.format,
            xjustiz_version=version,
            producer=g.producer(top, proceeding),
            retrieved_at=retrieved_at or extract.retrieved_at,
        ),
        register=g.register(proceeding, top, roles),
        name=_company_name(company, g.names),
        legal_form=g.legal_form_of(company, roles),
        seat=child_text(company.get(names.seat), names.city),
        address=_address(company.get(names.address), g),
        capital=read_capital(additional, g.names.amounts, money),
        purpose=next(filter(None, (text_of(basis.get(tag)) for tag in names.purpose)), None),
        statute_date=_statute_date(statute, names),
        representation=representation,
        officers=officers(roles, codes.NON_OFFICER_ROLES, special_representation, liabilities),
        entries=extract.entries,
        last_entry_date=extract.last_entry_date,
    )


def _company(
    fachdaten: etree._Element, register_data: dict, basis: dict, roles: list[Role], names: ElementNames
) -> dict:
    """The fields of the Rechtsträger: its own block, or the participant standing in for it."""
    record = names.record
    fields = (record.name, record.legal_form, record.seat, record.address)
    rechtstraeger = basis.get(record.rechtstraeger)
    if rechtstraeger is not None:
        return first_of(rechtstraeger, fields)
    concerned = child_text(register_data.get(record.concerned), record.role_reference)
    candidates = [r for r in roles if r[0] == concerned] + [r for r in roles if r[1] == codes.COMPANY_ROLE]
    for _, _, _, participant in candidates:
        if participant.organisation is not None:  # read with kind "organisation"
            return first_of(participant.organisation, fields)
    raise structure_error(fachdaten, names.no_company)


def _company_name(company: dict, names: ElementNames) -> str:
    name = text_of(company.get(names.record.name))
    if name is None:
        raise structure_error(company[None], "company name is missing", names.name_path)
    return name


def _address(anschrift: etree._Element | None, g: Generation) -> dict | None:
    if anschrift is None:
        return None
    names = g.names.record
    parts = children(anschrift)
    country = parts.get(names.country)
    address = dict(
        street=text_of(parts.get(names.street)),
        house_number=text_of(parts.get(names.house_number)),
        postal_code=text_of(parts.get(names.postal_code)),
        city=text_of(parts.get(names.city)),
        country=g.country_of(country) if country is not None else None,
    )
    return address if any(address.values()) else None


def _money(element: etree._Element, g: Generation) -> dict | None:
    parts = children(element)
    amount = decimal_amount(text_of(parts.get(g.names.record.amount)), element)
    if amount is None:
        return None
    code = g.currency_code(parts)
    if code is None:
        raise structure_error(element, "amount without currency", g.names.record.currency)
    return dict(amount=amount, currency=code)


def _statute_date(statute: etree._Element | None, names: RecordNames) -> str | None:
    if statute is None:
        return None
    text = child_text(statute, names.statute_date) if names.statute_date else text_of(statute)
    return iso_date(text, statute)
