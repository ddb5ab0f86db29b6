"""XJustiz 3.x (``nachricht.reg.0400003``, 3.2.1 to 3.7) into the data of the canonical record.

One reader for the whole 3.x family: element names are stable across these versions and where
they moved (the capital: ``zusatzGmbH/stammkapital`` up to 3.5, ``kapital/hoehe`` from 3.6;
currencies under ``auswahl_waehrung`` from 3.5) both places are read. Both producers are covered:
RegisSTAR files name the company in ``basisdatenRegister/rechtstraeger``; AUREG files do not, so
the participant the register data points at (role 287, Rechtsträger) stands in.

What 1.x and 3.x read alike is ``record``'s, under the names of ``data/element_names.toml``;
this module gives the readers that differ (register number and court, legal form code, coded
roles, representation, currency) and the names only they use.
"""

from __future__ import annotations

import logging

from lxml import etree

from orchestration.xjustiz import codes
from orchestration.xjustiz.element_names import element_names
from orchestration.xjustiz.participants import Representation, Role, read_participants
from orchestration.xjustiz.record import Generation
from orchestration.xjustiz.xml_values import (
    T,
    child_text,
    children,
    clean,
    code_and_label,
    descend,
    register_type,
    split_register_reference,
    structure_error,
    text_of,
)

log = logging.getLogger(__name__)

NAMES = element_names("xjustiz-3")
# Beside each reader, the names only it uses. Lookups go child by child (``descend``, ``children``):
# ElementPath's ``find`` with a path costs more than the parse of a small document.
KOPF = T + "nachrichtenkopf"  # the message header, a child of the root


def _roles(proceeding: etree._Element) -> list[Role]:
    roles = []
    for participant in read_participants(proceeding, NAMES.participants):
        if participant.kind is None:
            raise structure_error(
                participant.participation,
                "participant is neither a person nor an organisation",
                "beteiligter/auswahl_beteiligter",
            )
        for number, code, label, _ in participant.roles:
            if code is None:
                raise structure_error(participant.participation, "role without code", "rolle/rollenbezeichnung/code")
            roles.append((number, code, label or codes.ROLES.get(code) or code, participant))
    return roles


INSTANCE = T + "instanzdaten"
INSTANCE_COURT = (T + "auswahl_instanzbehoerde", T + "gericht")
SENDER_COURT = (T + "auswahl_absender", T + "absender.gericht", "code")
FILE_NUMBER = (T + "aktenzeichen", T + "auswahl_aktenzeichen")


def _register(proceeding: etree._Element, top: dict, roles: list[Role]) -> dict:
    instance = descend(proceeding, INSTANCE)
    if instance is None:
        raise structure_error(proceeding, "no instance data", INSTANCE)
    instance_parts = children(instance)
    court = descend(instance_parts.get(INSTANCE_COURT[0]), *INSTANCE_COURT[1:])
    court_code, court_label = code_and_label(court)
    court_code = court_code or text_of(descend(top.get(KOPF), *SENDER_COURT))
    if court_code is None:
        raise structure_error(instance, "register court is missing", "auswahl_instanzbehoerde/gericht/code")

    reference = descend(instance_parts.get(FILE_NUMBER[0]), *FILE_NUMBER[1:])
    if reference is None:
        raise structure_error(instance, "register number is missing", "aktenzeichen/auswahl_aktenzeichen")
    structured = descend(reference, T + "aktenzeichen.strukturiert")
    if structured is not None:
        parts = children(structured)
        kind = child_text(parts.get(T + "register"), "code")
        number = text_of(parts.get(T + "laufendeNummer"))
        if kind is None or number is None:
            raise structure_error(structured, "register type or number is missing")
        kind = register_type(kind, structured)
        suffix = text_of(parts.get(T + "zusatz"))
    else:
        text = child_text(reference, T + "aktenzeichen.freitext")
        if text is None:
            raise structure_error(reference, "register number is missing", T + "aktenzeichen.freitext")
        kind, number, suffix = split_register_reference(text, reference)
    if not number.isdigit():
        raise structure_error(reference, f"register number {number!r} is not a number")

    return dict(
        court_code=court_code,
        court_name=_court_name(court_code, court_label, roles),
        type=kind,
        number=number,
        suffix=suffix,
    )


def _court_name(code: str, commented: str | None, roles: list[Role]) -> str | None:
    """The court's name: from the comment next to its code, the court list, or its participant."""
    if commented:
        # RegisSTAR labels Bavarian register courts "Registergericht Amtsgericht München".
        return commented.removeprefix("Registergericht ").split(",")[0]
    name = codes.courts().get(code)
    if name is not None:
        return name
    return next((p.name for _, code, _, p in roles if code == codes.COURT_ROLE and p.name), None)


def _legal_form(company: dict, roles: list[Role]) -> dict:
    element = company.get(NAMES.record.legal_form)
    raw = child_text(element, "code")
    if raw is None:
        # AUREG leaves the form off the Rechtsträger block at times; the participant has it.
        element = next(
            (
                descend(participant.organisation, T + "angabenZurRechtsform", NAMES.record.legal_form)
                for _, code, _, participant in roles
                if code == codes.COMPANY_ROLE
            ),
            None,
        )
        raw = child_text(element, "code")
    if raw is None:
        raise structure_error(company[None], "legal form is missing", "angabenZurRechtsform/rechtsform/code")
    canonical = codes.legal_form_from_code(raw)
    if canonical is None:
        log.warning("unknown legal form code %r, kept as it is", raw)
        return dict(code=raw, label=code_and_label(element)[1] or raw)
    return dict(code=canonical, label=codes.LEGAL_FORMS[canonical])


def _country(staat: etree._Element | None) -> str | None:
    """3.3: staat/auswahl_staat/staat/code (ISO); 3.5+: staat/code (BfJ list)."""
    if staat is None:
        return None
    value = text_of(next(staat.iter("code"), None))
    return codes.BFJ_COUNTRIES.get(value, value) if value else None


def _currency_code(parts: dict) -> str | None:
    currency = parts.get(T + "waehrung")
    choice = parts.get(T + "auswahl_waehrung")  # 3.5+: waehrung, historischeWaehrung, elektronischeWaehrung
    if currency is None and choice is not None:
        currency = next((c for c in choice if isinstance(c.tag, str)), None)
    return child_text(currency, "code") or text_of(currency)


ENTITLED = T + "vertretungsberechtigte"
AUTHORITY_TEXT = T + "vertretungsbefugnisFreitext"
AUTHORITY_CODE = T + "vertretungsbefugnis"
EXEMPTION_181 = T + "auswahl_befreiungVon181BGB"


def _representation(vertretung: etree._Element | None) -> tuple[str | None, dict[str, Representation]]:
    """The general rule, and each entitled participant's own rule by role number.

    One pass, like the participants: large extracts list hundreds of Prokuristen here."""
    if vertretung is None:
        return None, {}
    general = current = Representation()
    entitled: dict[str, Representation] = {}
    role_reference = NAMES.record.role_reference
    for element in vertretung.iterdescendants(ENTITLED, role_reference, AUTHORITY_TEXT, AUTHORITY_CODE, EXEMPTION_181):
        tag = element.tag
        if tag == ENTITLED:
            current = Representation()
        elif tag == role_reference:
            entitled[clean(element.text) or ""] = current
        elif tag == AUTHORITY_TEXT:
            text = clean(element.text)
            if text:
                current.texts.append(text)
        elif tag == AUTHORITY_CODE:
            code, label = code_and_label(element)
            text = label or code
            if text:
                current.texts.append(text)
        elif current is not general:  # an exemption from § 181 BGB
            current.exempt_181 = True
    return general.text, entitled


def _entry_kind(coded: tuple[str | None, str | None]) -> str | None:
    code, label = coded
    return label or codes.ENTRY_KINDS.get(code or "") or code


PRODUCER = (T + "herstellerinformation", T + "nameDesProdukts")


def _producer(top: dict, proceeding: etree._Element) -> str | None:
    return text_of(descend(top.get(KOPF), *PRODUCER))


GENERATION = Generation(
    names=NAMES,
    roles=_roles,
    register=_register,
    producer=_producer,
    legal_form_of=_legal_form,
    read_representation=_representation,
    currency_code=_currency_code,
    country_of=_country,
    entry_kind=_entry_kind,
)
