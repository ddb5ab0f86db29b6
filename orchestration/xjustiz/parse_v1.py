"""Legacy XJustiz 1.x (``XJustiz_Daten``) into the data of the canonical record.

1.x spells code values out (``<Rechtsform><content>Gesellschaft mit beschränkter Haftung``,
``<Rollenbezeichnung><content>Prokurist(in)``); ``codes`` maps those labels onto the codes 3.x
uses. AUREG's 1.x files, like its 3.x ones, have no ``Basisdaten_Register/Rechtstraeger``: the
participant the register data points at (role Rechtsträger) stands in. A role label the tables do
not know keeps its label with an empty role code and is logged.
"""

from __future__ import annotations

import logging

from lxml import etree

from orchestration.xjustiz import codes
from orchestration.xjustiz.amounts import AmountNames, read_capital, read_liabilities
from orchestration.xjustiz.extract import ExtractNames, read_extract
from orchestration.xjustiz.participants import (
    ParticipantNames,
    Representation,
    Role,
    officers,
    read_participants,
)
from orchestration.xjustiz.values import (
    XJUSTIZ_NS,
    child_text,
    children,
    clean,
    decimal_amount,
    descend,
    first_of,
    iso_date,
    split_register_reference,
    structure_error,
    text_of,
)
from orchestration.xjustiz.version import PARSER_VERSION

log = logging.getLogger(__name__)

# Element names in Clark notation, looked up child by child (see parse_v3).
T = "{" + XJUSTIZ_NS + "}"
CONTENT = T + "content"
PROCEEDING = (T + "Grunddaten", T + "Verfahrensdaten")
PRODUCER = (T + "Herstellerinformation", T + "Name_des_Produkts")
INSTANCE = T + "Instanzdaten"
COURT = (T + "Instanzbehoerde", T + "Gericht", CONTENT)
FACHDATEN = T + "Fachdaten_Register"
BASISDATEN = T + "Basisdaten_Register"
EXTRACT = T + "Auszug"
ADDITIONAL = T + "Zusatzangaben"
NAME = T + "Bezeichnung_Aktuell"
LEGAL_FORM = T + "Rechtsform"
SEAT = T + "Sitz"
ADDRESS = T + "Anschrift"
CITY = T + "Ort"
AUTHORITY = T + "Vertretungsbefugnis"
ROLE_REFERENCE = T + "Ref_Rollennummer"
AMOUNTS = AmountNames(
    capital_company=T + "Kapitalgesellschaft",
    capital_paths=((T + "Zusatz_GmbH", T + "Stammkapital"), (T + "Zusatz_AG", T + "Grundkapital")),
    limited_partners=(T + "Personengesellschaft", T + "Zusatz_KG"),
    limited_partner=T + "Daten_Kommanditist",
    liability=T + "Hafteinlage",
    role_reference=ROLE_REFERENCE,
)
NO_EXEMPTION = "(keine Angabe)"
ENTITLED = T + "Vertretungsberechtigte"
GENERAL = T + "Allgemeine_Vertretungsregelung"
EXEMPTION_181 = T + "Besonderheiten_zu_181BGB"
COMPANY_FIELDS = (NAME, LEGAL_FORM, SEAT, ADDRESS)

PARTICIPANT_NAMES = ParticipantNames(
    participation=T + "Beteiligung",
    role_number=T + "Rollennummer",
    role_designation=T + "Rollenbezeichnung",
    designation_text=CONTENT,  # 1.x names the role in words
    person=T + "Natuerliche_Person",
    organisation=T + "Organisation",
    first_name=T + "Vorname",
    last_name=T + "Nachname",
    birth_date=T + "Geburtsdatum",
    name=NAME,
    seat=SEAT,
    address=ADDRESS,
    city=CITY,
)


EXTRACT_NAMES = ExtractNames(
    entry=T + "Eintragungstext",
    column=T + "Spalte",
    position=T + "Position",
    number=T + "Laufende_Nummer",
    kind=T + "Eintragungsart",
    kind_text=CONTENT,
    text=T + "Text",
    retrieval_date=T + "Abrufdatum",
    retrieval_time=T + "Abrufuhrzeit",
    last_entry=T + "letzte_Eintragung",
)


def parse_v1(root: etree._Element, top: dict, version: str, retrieved_at: str | None) -> dict:
    """``top``: the first child of each tag of ``root``."""
    proceeding = descend(top.get(PROCEEDING[0]), *PROCEEDING[1:])
    if proceeding is None:
        raise structure_error(root, "no procedure data", "Grunddaten/Verfahrensdaten")
    fachdaten = top.get(FACHDATEN)
    if fachdaten is None:
        raise structure_error(root, "no register data", FACHDATEN)
    register_data = children(fachdaten)
    basis = children(register_data.get(BASISDATEN))
    extract = read_extract(register_data.get(EXTRACT), EXTRACT_NAMES)
    additional = register_data.get(ADDITIONAL)

    roles = _roles(proceeding)
    company = _company(fachdaten, register_data, basis, roles)
    representation, special_representation = _representation(basis.get(T + "Vertretung"))
    liabilities = read_liabilities(additional, AMOUNTS, _money)
    statute = basis.get(T + "Aktuelles_Satzungsdatum")

    return dict(
        parser_version=PARSER_VERSION,
        source=dict(
            format="xjustiz-1",
            xjustiz_version=version,
            producer=text_of(descend(proceeding, *PRODUCER)),
            retrieved_at=retrieved_at or extract.retrieved_at,
        ),
        register=_register(proceeding, roles),
        name=_company_name(company),
        legal_form=_legal_form(company, roles),
        seat=child_text(company.get(SEAT), CITY),
        address=_address(company.get(ADDRESS)),
        capital=read_capital(additional, AMOUNTS, _money),
        purpose=text_of(basis.get(T + "Gegenstand_oder_Geschaeftszweck")),
        statute_date=iso_date(statute.text, statute) if statute is not None else None,
        representation=representation,
        officers=officers(roles, codes.NON_OFFICER_ROLES, special_representation, liabilities),
        entries=extract.entries,
        last_entry_date=extract.last_entry_date,
    )


def _roles(proceeding: etree._Element) -> list[Role]:
    roles = []
    # Hundreds of participants share a few role labels: each label is looked up once.
    known: dict[str, tuple[str | None, str]] = {}
    for participant in read_participants(proceeding, PARTICIPANT_NAMES):
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


def _company(fachdaten: etree._Element, register_data: dict, basis: dict, roles: list[Role]) -> dict:
    """The fields of the Rechtsträger: its own block, or the participant standing in for it."""
    rechtstraeger = basis.get(T + "Rechtstraeger")
    if rechtstraeger is not None:
        return first_of(rechtstraeger, COMPANY_FIELDS)
    concerned = child_text(register_data.get(T + "Betroffener_Rechtstraeger"), ROLE_REFERENCE)
    candidates = [r for r in roles if r[0] == concerned] + [r for r in roles if r[1] == codes.COMPANY_ROLE]
    for _, _, _, participant in candidates:
        if participant.kind == "organisation":
            return first_of(participant.organisation, COMPANY_FIELDS)
    raise structure_error(
        fachdaten, "no Rechtsträger: neither Basisdaten_Register/Rechtstraeger nor a participant Rechtsträger"
    )


def _company_name(company: dict) -> str:
    name = text_of(company.get(NAME))
    if name is None:
        raise structure_error(company[None], "company name is missing", "Bezeichnung/Bezeichnung_Aktuell")
    return name


def _register(proceeding: etree._Element, roles: list[Role]) -> dict:
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
    label = child_text(company.get(LEGAL_FORM), CONTENT)
    if label is None:
        # AUREG leaves the form off the Rechtsträger block at times; the participant has it.
        organisations = (
            p.organisation for _, code, _, p in roles if code == codes.COMPANY_ROLE and p.organisation is not None
        )
        label = next((child_text(descend(organisation, LEGAL_FORM), CONTENT) for organisation in organisations), None)
    if label is None:
        raise structure_error(company[None], "legal form is missing", "Rechtsform/content")
    canonical = codes.legal_form_from_label(label)
    if canonical is None:
        log.warning("unknown 1.x legal form %r, kept as it is", label)
        return dict(code=label, label=label)
    return dict(code=canonical, label=codes.LEGAL_FORMS[canonical])


def _address(anschrift: etree._Element | None) -> dict | None:
    if anschrift is None:
        return None
    parts = children(anschrift)
    address = dict(
        street=text_of(parts.get(T + "Strasse")),
        house_number=text_of(parts.get(T + "Hausnummer")),
        postal_code=text_of(parts.get(T + "Postleitzahl")),
        city=text_of(parts.get(CITY)),
        country=child_text(parts.get(T + "Staat"), CONTENT),
    )
    return address if any(address.values()) else None


def _money(element: etree._Element) -> dict | None:
    parts = children(element)
    amount = decimal_amount(text_of(parts.get(T + "Zahl")), element)
    if amount is None:
        return None
    currency = parts.get(T + "Waehrung")
    code = text_of(currency) or child_text(currency, CONTENT)
    if code is None:
        raise structure_error(element, "amount without currency", T + "Waehrung")
    return dict(amount=amount, currency=code)


def _representation(vertretung: etree._Element | None) -> tuple[str | None, dict[str, Representation]]:
    """The general rule, and each entitled participant's own rule by role number (one pass)."""
    if vertretung is None:
        return None, {}
    general = current = Representation()
    entitled: dict[str, Representation] = {}
    # Authority and exemption are spelled out in a ``content`` child.
    for element in vertretung.iterdescendants(ENTITLED, GENERAL, ROLE_REFERENCE, CONTENT):
        tag = element.tag
        if tag == ENTITLED:
            current = Representation()
        elif tag == GENERAL:
            current = general
        elif tag == ROLE_REFERENCE:
            entitled[clean(element.text) or ""] = current
        else:
            parent = element.getparent().tag
            if parent == AUTHORITY:
                text = clean(element.text)
                if text:
                    current.texts.append(text)
            elif parent == EXEMPTION_181 and current is not general:
                text = clean(element.text)
                current.exempt_181 = bool(text) and text != NO_EXEMPTION
    return general.text, entitled
