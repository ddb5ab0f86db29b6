"""Legacy XJustiz 1.x (``XJustiz_Daten``) into the data of the canonical record.

1.x spells code values out (``<Rechtsform><content>Gesellschaft mit beschränkter Haftung``,
``<Rollenbezeichnung><content>Prokurist(in)``); ``codes`` maps those labels onto the codes 3.x
uses. AUREG's 1.x files, like its 3.x ones, have no ``Basisdaten_Register/Rechtstraeger``: the
participant the register data points at (role Rechtsträger) stands in. A role label the tables do
not know keeps its label with an empty role code and is logged. What 1.x and 3.x read alike is
``record``'s.
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
    clean,
    descend,
    split_register_reference,
    structure_error,
    text_of,
)

log = logging.getLogger(__name__)

NAMES = element_names("xjustiz-1")
# Beside each reader, the names only it uses, looked up child by child (see parse_v3). 1.x spells
# a value out in a ``content`` child.
CONTENT = T + "content"


def _roles(proceeding: etree._Element) -> list[Role]:
    roles = []
    # Hundreds of participants share a few role labels: each label is looked up once.
    known: dict[str, tuple[str | None, str]] = {}
    for participant in read_participants(proceeding, NAMES.participants):
        if participant.kind is None:
            raise structure_error(
                participant.participation, "participant is neither a person nor an organisation", "Beteiligter"
            )
        for number, _, label, _ in participant.roles:
            if label is None:
                raise structure_error(
                    participant.participation, "role without designation", "Rolle/Rollenbezeichnung/content"
                )
            if label in known:
                code, canonical_label = known[label]
            else:
                code = codes.role_code_from_label(label)
                canonical_label = codes.ROLES.get(code or "", label)
                known[label] = code, canonical_label
            if code is None:
                log.warning("unknown 1.x role %r, kept without a role code", label)
            roles.append((number, code or "", canonical_label, participant))
    return roles


INSTANCE = T + "Instanzdaten"
COURT = (T + "Instanzbehoerde", T + "Gericht", CONTENT)


def _register(proceeding: etree._Element, top: dict, roles: list[Role]) -> dict:
    instance = descend(proceeding, INSTANCE)
    if instance is None:
        raise structure_error(proceeding, "no instance data", INSTANCE)
    court_code = text_of(descend(instance, *COURT))
    if court_code is None:
        raise structure_error(instance, "register court is missing", "Instanzbehoerde/Gericht/content")
    reference = child_text(instance, T + "Aktenzeichen")
    if reference is None:
        raise structure_error(instance, "register number is missing", T + "Aktenzeichen")
    kind, number, suffix = split_register_reference(reference, instance)
    court_name = codes.courts().get(court_code) or next(
        (p.name for _, code, _, p in roles if code == codes.COURT_ROLE and p.name), None
    )
    return dict(court_code=court_code, court_name=court_name, type=kind, number=number, suffix=suffix)


def _legal_form(company: dict, roles: list[Role]) -> dict:
    legal_form = NAMES.record.legal_form
    label = child_text(company.get(legal_form), CONTENT)
    if label is None:
        # AUREG leaves the form off the Rechtsträger block at times; the participant has it.
        organisations = (
            p.organisation for _, code, _, p in roles if code == codes.COMPANY_ROLE and p.organisation is not None
        )
        label = next((child_text(descend(organisation, legal_form), CONTENT) for organisation in organisations), None)
    if label is None:
        raise structure_error(company[None], "legal form is missing", "Rechtsform/content")
    canonical = codes.legal_form_from_label(label)
    if canonical is None:
        log.warning("unknown 1.x legal form %r, kept as it is", label)
        return dict(code=label, label=label)
    return dict(code=canonical, label=codes.LEGAL_FORMS[canonical])


def _currency_code(parts: dict) -> str | None:
    currency = parts.get(T + "Waehrung")
    return text_of(currency) or child_text(currency, CONTENT)


ENTITLED = T + "Vertretungsberechtigte"
GENERAL = T + "Allgemeine_Vertretungsregelung"
AUTHORITY = T + "Vertretungsbefugnis"
EXEMPTION_181 = T + "Besonderheiten_zu_181BGB"
NO_EXEMPTION = "(keine Angabe)"


def _representation(vertretung: etree._Element | None) -> tuple[str | None, dict[str, Representation]]:
    """The general rule, and each entitled participant's own rule by role number (one pass)."""
    if vertretung is None:
        return None, {}
    general = current = Representation()
    entitled: dict[str, Representation] = {}
    role_reference = NAMES.record.role_reference
    # Authority and exemption are spelled out in a ``content`` child.
    for element in vertretung.iterdescendants(ENTITLED, GENERAL, role_reference, CONTENT):
        tag = element.tag
        if tag == ENTITLED:
            current = Representation()
        elif tag == GENERAL:
            current = general
        elif tag == role_reference:
            entitled[clean(element.text) or ""] = current
        else:
            container = element.getparent()
            assert container is not None  # a descendant has one
            parent = container.tag
            if parent == AUTHORITY:
                text = clean(element.text)
                if text:
                    current.texts.append(text)
            elif parent == EXEMPTION_181 and current is not general:
                text = clean(element.text)
                current.exempt_181 = bool(text) and text != NO_EXEMPTION
    return general.text, entitled


PRODUCER = (T + "Herstellerinformation", T + "Name_des_Produkts")


def _producer(top: dict, proceeding: etree._Element) -> str | None:
    return text_of(descend(proceeding, *PRODUCER))


def _country(staat: etree._Element) -> str | None:
    return child_text(staat, CONTENT)


GENERATION = Generation(
    names=NAMES,
    roles=_roles,
    register=_register,
    producer=_producer,
    legal_form_of=_legal_form,
    read_representation=_representation,
    currency_code=_currency_code,
    country_of=_country,
)
