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
from orchestration.xjustiz.model import Address, CompanyRecord, Entry, LegalForm, Money, Officer, Register, Source
from orchestration.xjustiz.values import (
    XJUSTIZ_NS,
    clean,
    decimal_amount,
    iso_date,
    optional_int,
    required_text,
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


@dataclass(frozen=True)
class _Role:
    number: str
    code: str
    label: str
    participant: etree._Element


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
            _officer(role, special_representation.get(role.number), liabilities.get(role.number))
            for role in roles
            if role.code not in codes.NON_OFFICER_ROLES
        ),
        entries=tuple(_entry(e) for e in extract.iterfind(T + "Eintragungstext")) if extract is not None else (),
        last_entry_date=iso_date(extract.findtext(T + "letzte_Eintragung"), extract) if extract is not None else None,
    )


def _roles(proceeding: etree._Element) -> list[_Role]:
    roles = []
    for participation in proceeding.iterfind(T + "Beteiligung"):
        participant = participation.find(T + "Beteiligter")
        if participant is None:
            raise structure_error(participation, "participation without participant", T + "Beteiligter")
        for role in participation.iterfind(T + "Rolle"):
            label = clean(role.findtext(f"{T}Rollenbezeichnung/{T}content"))
            if label is None:
                raise structure_error(role, "role without designation", T + "Rollenbezeichnung/content")
            code = codes.role_code_from_label(label)
            if code is None:
                log.warning("unknown 1.x role %r, kept without a role code", label)
            roles.append(
                _Role(
                    number=clean(role.findtext(T + "Rollennummer")) or "",
                    code=code or "",
                    label=codes.ROLES.get(code or "", label),
                    participant=participant,
                )
            )
    return roles


def _company(fachdaten: etree._Element, basisdaten: etree._Element | None, roles: list[_Role]) -> etree._Element:
    if basisdaten is not None:
        rechtstraeger = basisdaten.find(T + "Rechtstraeger")
        if rechtstraeger is not None:
            return rechtstraeger
    concerned = clean(fachdaten.findtext(f"{T}Betroffener_Rechtstraeger/{T}Ref_Rollennummer"))
    candidates = [r for r in roles if r.number == concerned] + [r for r in roles if r.code == codes.COMPANY_ROLE]
    for role in candidates:
        organisation = role.participant.find(T + "Organisation")
        if organisation is not None:
            return organisation
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
        court_name = next(
            (
                clean(r.participant.findtext(f"{T}Organisation/{NAME}"))
                for r in roles
                if r.code == codes.COURT_ROLE
            ),
            None,
        )
    return Register(court_code=court_code, court_name=court_name, type=kind, number=number, suffix=suffix)


def _legal_form(company: etree._Element, roles: list[_Role]) -> LegalForm:
    label = clean(company.findtext(f"{T}Rechtsform/{T}content"))
    if label is None:
        for role in roles:
            if role.code == codes.COMPANY_ROLE:
                label = clean(role.participant.findtext(f"{T}Organisation/{T}Rechtsform/{T}content"))
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


@dataclass(frozen=True)
class _SpecialRepresentation:
    text: str | None
    exempt_181: bool


def _representation(basisdaten: etree._Element | None) -> tuple[str | None, dict[str, _SpecialRepresentation]]:
    vertretung = basisdaten.find(T + "Vertretung") if basisdaten is not None else None
    if vertretung is None:
        return None, {}
    general = clean(vertretung.findtext(f"{T}Allgemeine_Vertretungsregelung/{T}Vertretungsbefugnis/{T}content"))
    special = {}
    for entitled in vertretung.iterfind(T + "Vertretungsberechtigte"):
        rule = entitled.find(T + "Besondere_Vertretungsregelung")
        text = clean(rule.findtext(f"{T}Vertretungsbefugnis/{T}content")) if rule is not None else None
        exemption = (
            clean(rule.findtext(f"{T}Befreiung_von_181BGB/{T}Besonderheiten_zu_181BGB/{T}content"))
            if rule is not None
            else None
        )
        special[clean(entitled.findtext(T + "Ref_Rollennummer")) or ""] = _SpecialRepresentation(
            text, bool(exemption) and exemption != NO_EXEMPTION
        )
    return general, special


def _officer(role: _Role, representation: _SpecialRepresentation | None, liability: Money | None) -> Officer:
    participant = role.participant
    common = dict(
        role_code=role.code,
        role=role.label,
        representation=representation.text if representation else None,
        exempt_181=representation.exempt_181 if representation else None,
        liability_amount=liability,
    )
    person = participant.find(T + "Natuerliche_Person")
    if person is not None:
        first_name = clean(person.findtext(f"{T}Voller_Name/{T}Vorname"))
        last_name = clean(person.findtext(f"{T}Voller_Name/{T}Nachname"))
        name = " ".join(n for n in (first_name, last_name) if n)
        if not name:
            raise structure_error(person, "person without name", T + "Voller_Name")
        return Officer(
            kind="person",
            name=name,
            first_name=first_name,
            last_name=last_name,
            birth_date=iso_date(person.findtext(f"{T}Geburt/{T}Geburtsdatum"), person),
            city=clean(person.findtext(f"{T}Anschrift/{T}Ort")),
            **common,
        )
    organisation = participant.find(T + "Organisation")
    if organisation is None:
        raise structure_error(participant, "participant is neither a person nor an organisation", T + "Organisation")
    return Officer(
        kind="organisation",
        name=required_text(organisation, NAME, "organisation name"),
        city=clean(organisation.findtext(f"{T}Sitz/{T}Ort")) or clean(organisation.findtext(f"{T}Anschrift/{T}Ort")),
        **common,
    )


def _entry(element: etree._Element) -> Entry:
    return Entry(
        column=optional_int(element.findtext(T + "Spalte"), element),
        position=optional_int(element.findtext(T + "Position"), element),
        number=optional_int(element.findtext(T + "Laufende_Nummer"), element),
        kind=clean(element.findtext(f"{T}Eintragungsart/{T}content")),
        text=clean(element.findtext(T + "Text")) or "",
    )


def _retrieval_time(extract: etree._Element | None) -> str | None:
    if extract is None:
        return None
    day = iso_date(extract.findtext(T + "Abrufdatum"), extract)
    time = clean(extract.findtext(T + "Abrufuhrzeit"))
    if day and time:
        return f"{day}T{time}"
    return day
