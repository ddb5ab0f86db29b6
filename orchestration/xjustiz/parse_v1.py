"""Legacy XJustiz 1.x (``XJustiz_Daten``) into the canonical record.

1.x spells code values out (``<Rechtsform><content>Gesellschaft mit beschränkter Haftung``,
``<Rollenbezeichnung><content>Prokurist(in)``); ``codes`` maps those labels onto the codes 3.x
uses. AUREG's 1.x files, like its 3.x ones, have no ``Basisdaten_Register/Rechtstraeger``: the
participant the register data points at (role Rechtsträger) stands in. A role label the tables do
not know keeps its label with an empty role code and is logged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from lxml import etree

from orchestration.xjustiz import codes
from orchestration.xjustiz.model import Address, CompanyRecord, Entry, LegalForm, Money, Register, Source
from orchestration.xjustiz.participants import (
    Participant,
    ParticipantNames,
    SpecialRepresentation,
    officer,
    read_participants,
)
from orchestration.xjustiz.values import (
    XJUSTIZ_NS,
    clean,
    decimal_amount,
    iso_date,
    child_text,
    children_by_tag,
    first_by_tag,
    optional_int,
    required_text,
    text_of,
    split_register_reference,
    structure_error,
)
from orchestration.xjustiz.version import PARSER_VERSION

log = logging.getLogger(__name__)

T = "{" + XJUSTIZ_NS + "}"
GRUNDDATEN = T + "Grunddaten"
PROCEEDING = f"{T}Grunddaten/{T}Verfahrensdaten"
PRODUCER = f"{T}Herstellerinformation/{T}Name_des_Produkts"
INSTANCE = T + "Instanzdaten"
COURT = f"{T}Instanzbehoerde/{T}Gericht/{T}content"
FACHDATEN = T + "Fachdaten_Register"
BASISDATEN = T + "Basisdaten_Register"
EXTRACT = T + "Auszug"
NAME = f"{T}Bezeichnung/{T}Bezeichnung_Aktuell"
CAPITAL_PATHS = (
    f"{T}Zusatzangaben/{T}Kapitalgesellschaft/{T}Zusatz_GmbH/{T}Stammkapital",
    f"{T}Zusatzangaben/{T}Kapitalgesellschaft/{T}Zusatz_AG/{T}Grundkapital",
)
LIMITED_PARTNERS = f"{T}Zusatzangaben/{T}Personengesellschaft/{T}Zusatz_KG/{T}Daten_Kommanditist"
NO_EXEMPTION = "(keine Angabe)"
CONTENT = T + "content"
AUTHORITY = T + "Vertretungsbefugnis"


PARTICIPANT_NAMES = ParticipantNames(
    participation=T + "Beteiligung",
    role=T + "Rolle",
    role_number=T + "Rollennummer",
    role_designation=T + "Rollenbezeichnung",
    person=T + "Natuerliche_Person",
    organisation=T + "Organisation",
    first_name=T + "Vorname",
    last_name=T + "Nachname",
    birth_date=T + "Geburtsdatum",
    name=T + "Bezeichnung_Aktuell",
    seat=T + "Sitz",
    address=T + "Anschrift",
    city=T + "Ort",
)


@dataclass(frozen=True)
class _Role:
    number: str
    code: str
    label: str
    participant: Participant


def parse_v1(root: etree._Element, version: str, retrieved_at: str | None) -> CompanyRecord:
    proceeding = root.find(PROCEEDING)
    if proceeding is None:
        raise structure_error(root, "no procedure data", PROCEEDING)
    fachdaten = root.find(FACHDATEN)
    if fachdaten is None:
        raise structure_error(root, "no register data", FACHDATEN)
    basisdaten = fachdaten.find(BASISDATEN)
    extract = fachdaten.find(EXTRACT)

    roles = _roles(proceeding)
    company = _company(fachdaten, basisdaten, roles)
    representation, special_representation = _representation(basisdaten)
    liabilities = {
        clean(p.findtext(T + "Ref_Rollennummer")) or "": _money(p.find(T + "Hafteinlage"))
        for p in fachdaten.iterfind(LIMITED_PARTNERS)
    }

    return CompanyRecord(
        parser_version=PARSER_VERSION,
        source=Source(
            format="xjustiz-1",
            xjustiz_version=version,
            producer=clean(proceeding.findtext(PRODUCER)),
            retrieved_at=retrieved_at or _retrieval_time(extract),
        ),
        register=_register(proceeding, roles),
        name=required_text(company, NAME, "company name"),
        legal_form=_legal_form(company, roles),
        seat=clean(company.findtext(f"{T}Sitz/{T}Ort")),
        address=_address(company.find(T + "Anschrift")),
        capital=next((m for m in (_money(fachdaten.find(p)) for p in CAPITAL_PATHS) if m), None),
        purpose=clean(basisdaten.findtext(T + "Gegenstand_oder_Geschaeftszweck")) if basisdaten is not None else None,
        statute_date=iso_date(basisdaten.findtext(T + "Aktuelles_Satzungsdatum"), basisdaten)
        if basisdaten is not None
        else None,
        representation=representation,
        officers=tuple(
            officer(role.code, role.label, role.participant, special_representation.get(role.number), liabilities.get(role.number))
            for role in roles
            if role.code not in codes.NON_OFFICER_ROLES
        ),
        entries=tuple(_entry(e) for e in extract.iterchildren(T + "Eintragungstext")) if extract is not None else (),
        last_entry_date=iso_date(extract.findtext(T + "letzte_Eintragung"), extract) if extract is not None else None,
    )


def _roles(proceeding: etree._Element) -> list[_Role]:
    roles = []
    for participant in read_participants(proceeding, PARTICIPANT_NAMES):
        if participant.kind is None:
            raise structure_error(participant.participation, "participant is neither a person nor an organisation",
                                  "Beteiligter")  # fmt: skip
        for role in participant.roles:
            label = child_text(role.designation, CONTENT)
            if label is None:
                raise structure_error(participant.participation, "role without designation", "Rolle/Rollenbezeichnung/content")
            code = codes.role_code_from_label(label)
            if code is None:
                log.warning("unknown 1.x role %r, kept without a role code", label)
            roles.append(_Role(role.number, code or "", codes.ROLES.get(code or "", label), participant))
    return roles


def _company(fachdaten: etree._Element, basisdaten: etree._Element | None, roles: list[_Role]) -> etree._Element:
    if basisdaten is not None:
        rechtstraeger = basisdaten.find(T + "Rechtstraeger")
        if rechtstraeger is not None:
            return rechtstraeger
    concerned = clean(fachdaten.findtext(f"{T}Betroffener_Rechtstraeger/{T}Ref_Rollennummer"))
    candidates = [r for r in roles if r.number == concerned] + [r for r in roles if r.code == codes.COMPANY_ROLE]
    for role in candidates:
        if role.participant.kind == "organisation":
            return role.participant.element
    raise structure_error(fachdaten, "no Rechtsträger: neither Basisdaten_Register/Rechtstraeger nor a participant Rechtsträger")


def _register(proceeding: etree._Element, roles: list[_Role]) -> Register:
    instance = proceeding.find(INSTANCE)
    if instance is None:
        raise structure_error(proceeding, "no instance data", INSTANCE)
    court_code = required_text(instance, COURT, "register court")
    reference = required_text(instance, T + "Aktenzeichen", "register number")
    kind, number, suffix = split_register_reference(reference, instance)
    court_name = codes.courts().get(court_code)
    if court_name is None:
        court_name = next((r.participant.name for r in roles if r.code == codes.COURT_ROLE and r.participant.name), None)
    return Register(court_code=court_code, court_name=court_name, type=kind, number=number, suffix=suffix)


def _legal_form(company: etree._Element, roles: list[_Role]) -> LegalForm:
    label = clean(company.findtext(f"{T}Rechtsform/{T}content"))
    if label is None:
        for role in roles:
            if role.code == codes.COMPANY_ROLE:
                label = clean(role.participant.element.findtext(f"{T}Rechtsform/{CONTENT}"))
                break
    if label is None:
        raise structure_error(company, "legal form is missing", T + "Rechtsform/content")
    canonical = codes.legal_form_from_label(label)
    if canonical is None:
        log.warning("unknown 1.x legal form %r, kept as it is", label)
        return LegalForm(code=label, label=label)
    return LegalForm(code=canonical, label=codes.LEGAL_FORMS[canonical])


def _address(anschrift: etree._Element | None) -> Address | None:
    if anschrift is None:
        return None
    address = Address(
        street=clean(anschrift.findtext(T + "Strasse")),
        house_number=clean(anschrift.findtext(T + "Hausnummer")),
        postal_code=clean(anschrift.findtext(T + "Postleitzahl")),
        city=clean(anschrift.findtext(T + "Ort")),
        country=clean(anschrift.findtext(f"{T}Staat/{T}content")),
    )
    return address if any(address.model_dump().values()) else None


def _money(element: etree._Element | None) -> Money | None:
    if element is None:
        return None
    amount = decimal_amount(element.findtext(T + "Zahl"), element)
    if amount is None:
        return None
    currency = clean(element.findtext(T + "Waehrung")) or clean(element.findtext(f"{T}Waehrung/{T}content"))
    if currency is None:
        raise structure_error(element, "amount without currency", T + "Waehrung")
    return Money(amount=amount, currency=currency)


def _representation(basisdaten: etree._Element | None) -> tuple[str | None, dict[str, SpecialRepresentation]]:
    vertretung = basisdaten.find(T + "Vertretung") if basisdaten is not None else None
    if vertretung is None:
        return None, {}
    general: str | None = None
    special = {}
    for child in vertretung:
        if child.tag == T + "Allgemeine_Vertretungsregelung":
            general = child_text(children_by_tag(child).get(AUTHORITY), CONTENT)
        elif child.tag == T + "Vertretungsberechtigte":
            fields = first_by_tag(child)
            exemption = child_text(fields.get(T + "Besonderheiten_zu_181BGB"), CONTENT)
            special[text_of(fields.get(T + "Ref_Rollennummer")) or ""] = SpecialRepresentation(
                child_text(fields.get(AUTHORITY), CONTENT), bool(exemption) and exemption != NO_EXEMPTION
            )
    return general, special


def _entry(element: etree._Element) -> Entry:
    parts = children_by_tag(element)
    return Entry(
        column=optional_int(text_of(parts.get(T + "Spalte")), element),
        position=optional_int(text_of(parts.get(T + "Position")), element),
        number=optional_int(text_of(parts.get(T + "Laufende_Nummer")), element),
        kind=child_text(parts.get(T + "Eintragungsart"), CONTENT),
        text=text_of(parts.get(T + "Text")) or "",
    )


def _retrieval_time(extract: etree._Element | None) -> str | None:
    if extract is None:
        return None
    day = iso_date(extract.findtext(T + "Abrufdatum"), extract)
    time = clean(extract.findtext(T + "Abrufuhrzeit"))
    if day and time:
        return f"{day}T{time}"
    return day
