"""XJustiz 3.x (``nachricht.reg.0400003``, 3.2.1 to 3.7) into the canonical record.

One reader for the whole 3.x family: element names are stable across these versions and where
they moved (the capital: ``zusatzGmbH/stammkapital`` up to 3.5, ``kapital/hoehe`` from 3.6;
currencies under ``auswahl_waehrung`` from 3.5) both places are read. Both producers are covered:
RegisSTAR files name the company in ``basisdatenRegister/rechtstraeger``; AUREG files do not, so
the participant the register data points at (role 287, Rechtsträger) stands in.
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
    comment_label,
    decimal_amount,
    iso_date,
    optional_int,
    register_type,
    required_text,
    split_register_reference,
    structure_error,
)
from orchestration.xjustiz.version import PARSER_VERSION

log = logging.getLogger(__name__)

T = "{" + XJUSTIZ_NS + "}"
# Clark-notation paths: ElementPath compiles each once and caches it, which keeps extraction
# close to the cost of the parse itself.
KOPF = T + "nachrichtenkopf"
PRODUCER = f"{T}herstellerinformation/{T}nameDesProdukts"
SENDER_COURT = f"{T}auswahl_absender/{T}absender.gericht/code"
PROCEEDING = f"{T}grunddaten/{T}verfahrensdaten"
INSTANCE = T + "instanzdaten"
INSTANCE_COURT = f"{T}auswahl_instanzbehoerde/{T}gericht"
FILE_NUMBER = f"{T}aktenzeichen/{T}auswahl_aktenzeichen"
PARTICIPATION = T + "beteiligung"
FACHDATEN = T + "fachdatenRegister"
BASISDATEN = T + "basisdatenRegister"
EXTRACT = T + "auszug"
ORGANISATION = f"{T}auswahl_beteiligter/{T}organisation"
PERSON = f"{T}auswahl_beteiligter/{T}natuerlichePerson"
NAME = f"{T}bezeichnung/{T}bezeichnung.aktuell"
LEGAL_FORM = f"{T}angabenZurRechtsform/{T}rechtsform"
CAPITAL_PATHS = (
    f"{T}auswahl_zusatzangaben/{T}kapitalgesellschaft/{T}zusatzGmbH/{T}stammkapital",
    f"{T}auswahl_zusatzangaben/{T}kapitalgesellschaft/{T}zusatzAktiengesellschaft/{T}grundkapital/{T}hoehe",
    f"{T}auswahl_zusatzangaben/{T}kapitalgesellschaft/{T}kapital/{T}hoehe",
)
LIMITED_PARTNERS = f"{T}auswahl_zusatzangaben/{T}personengesellschaft/{T}zusatzKG/{T}datenKommanditist"
CURRENCY_PATHS = (f"{T}waehrung/code", f"{T}auswahl_waehrung/{T}waehrung/code", f"{T}auswahl_waehrung/*")
COUNTRY_PATHS = (f"{T}staat/{T}auswahl_staat/{T}staat", f"{T}staat")


@dataclass(frozen=True)
class _Role:
    number: str
    code: str
    label: str
    participant: etree._Element


def parse_v3(root: etree._Element, version: str, retrieved_at: str | None) -> CompanyRecord:
    kopf = root.find(KOPF)
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
    liabilities = _liabilities(fachdaten)

    return CompanyRecord(
        parser_version=PARSER_VERSION,
        source=Source(
            format="xjustiz-3",
            xjustiz_version=version,
            producer=clean(kopf.findtext(PRODUCER)) if kopf is not None else None,
            retrieved_at=retrieved_at or _retrieval_time(extract),
        ),
        register=_register(proceeding, kopf, roles),
        name=required_text(company, NAME, "company name"),
        legal_form=_legal_form(company, roles),
        seat=clean(company.findtext(f"{T}sitz/{T}ort")),
        address=_address(company.find(T + "anschrift")),
        capital=_first_money(fachdaten, CAPITAL_PATHS),
        purpose=clean(basisdaten.findtext(T + "gegenstand")) or clean(basisdaten.findtext(T + "geschaeftszweck"))
        if basisdaten is not None
        else None,
        statute_date=iso_date(basisdaten.findtext(f"{T}satzungsdatum/{T}aktuellesSatzungsdatum"), basisdaten)
        if basisdaten is not None
        else None,
        representation=representation,
        officers=tuple(
            _officer(role, special_representation.get(role.number), liabilities.get(role.number))
            for role in roles
            if role.code not in codes.NON_OFFICER_ROLES
        ),
        entries=tuple(_entry(e) for e in extract.iterfind(T + "eintragungstext")) if extract is not None else (),
        last_entry_date=iso_date(extract.findtext(T + "letzteEintragung"), extract) if extract is not None else None,
    )


def _roles(proceeding: etree._Element) -> list[_Role]:
    roles = []
    for participation in proceeding.iterfind(PARTICIPATION):
        participant = participation.find(T + "beteiligter")
        if participant is None:
            raise structure_error(participation, "participation without participant", T + "beteiligter")
        for role in participation.iterfind(T + "rolle"):
            designation = role.find(T + "rollenbezeichnung")
            code = clean(designation.findtext("code")) if designation is not None else None
            if code is None:
                raise structure_error(role, "role without code", T + "rollenbezeichnung/code")
            label = comment_label(designation) or codes.ROLES.get(code) or code
            roles.append(_Role(clean(role.findtext(T + "rollennummer")) or "", code, label, participant))
    return roles


def _company(fachdaten: etree._Element, basisdaten: etree._Element | None, roles: list[_Role]) -> etree._Element:
    if basisdaten is not None:
        rechtstraeger = basisdaten.find(T + "rechtstraeger")
        if rechtstraeger is not None:
            return rechtstraeger
    concerned = clean(fachdaten.findtext(f"{T}betroffenerRechtstraeger/{T}ref.rollennummer"))
    candidates = [r for r in roles if r.number == concerned] + [r for r in roles if r.code == codes.COMPANY_ROLE]
    for role in candidates:
        organisation = role.participant.find(ORGANISATION)
        if organisation is not None:
            return organisation
    raise structure_error(fachdaten, "no Rechtsträger: neither basisdatenRegister/rechtstraeger nor a participant with role 287")


def _register(proceeding: etree._Element, kopf: etree._Element | None, roles: list[_Role]) -> Register:
    instance = proceeding.find(INSTANCE)
    if instance is None:
        raise structure_error(proceeding, "no instance data", INSTANCE)
    court = instance.find(INSTANCE_COURT)
    court_code = clean(court.findtext("code")) if court is not None else None
    if court_code is None and kopf is not None:
        court_code = clean(kopf.findtext(SENDER_COURT))
    if court_code is None:
        raise structure_error(instance, "register court is missing", INSTANCE_COURT + "/code")

    reference = instance.find(FILE_NUMBER)
    if reference is None:
        raise structure_error(instance, "register number is missing", FILE_NUMBER)
    structured = reference.find(T + "aktenzeichen.strukturiert")
    if structured is not None:
        kind = register_type(required_text(structured, f"{T}register/code", "register type"), structured)
        number = required_text(structured, T + "laufendeNummer", "register number")
        suffix = clean(structured.findtext(T + "zusatz"))
    else:
        text = required_text(reference, T + "aktenzeichen.freitext", "register number")
        kind, number, suffix = split_register_reference(text, reference)
    if not number.isdigit():
        raise structure_error(reference, f"register number {number!r} is not a number")

    court_participants = [r.participant for r in roles if r.code == codes.COURT_ROLE]
    return Register(
        court_code=court_code,
        court_name=_court_name(court_code, court, court_participants),
        type=kind,
        number=number,
        suffix=suffix,
    )


def _court_name(code: str, court: etree._Element | None, participants: list[etree._Element]) -> str | None:
    commented = comment_label(court)
    if commented:
        # RegisSTAR labels Bavarian register courts "Registergericht Amtsgericht München".
        return commented.removeprefix("Registergericht ").split(",")[0]
    if code in codes.courts():
        return codes.courts()[code]
    for participant in participants:
        name = clean(participant.findtext(f"{ORGANISATION}/{NAME}"))
        if name:
            return name
    return None


def _legal_form(company: etree._Element, roles: list[_Role]) -> LegalForm:
    element = company.find(LEGAL_FORM)
    if element is None or not clean(element.findtext("code")):
        # AUREG leaves the form off the Rechtsträger block at times; the participant has it.
        for role in roles:
            if role.code == codes.COMPANY_ROLE:
                element = role.participant.find(f"{ORGANISATION}/{LEGAL_FORM}")
                break
    raw = clean(element.findtext("code")) if element is not None else None
    if raw is None:
        raise structure_error(company, "legal form is missing", LEGAL_FORM + "/code")
    canonical = codes.legal_form_from_code(raw)
    if canonical is None:
        log.warning("unknown legal form code %r, kept as it is", raw)
        return LegalForm(code=raw, label=comment_label(element) or raw)
    return LegalForm(code=canonical, label=codes.LEGAL_FORMS[canonical])


def _address(anschrift: etree._Element | None) -> Address | None:
    if anschrift is None:
        return None
    address = Address(
        street=clean(anschrift.findtext(T + "strasse")),
        house_number=clean(anschrift.findtext(T + "hausnummer")),
        postal_code=clean(anschrift.findtext(T + "postleitzahl")),
        city=clean(anschrift.findtext(T + "ort")),
        country=_country(anschrift),
    )
    return address if any(address.model_dump().values()) else None


def _country(parent: etree._Element) -> str | None:
    for path in COUNTRY_PATHS:
        element = parent.find(path)
        if element is not None:
            code = clean(element.findtext("code"))
            if code:
                return codes.BFJ_COUNTRIES.get(code, code)
    return None


def _money(element: etree._Element) -> Money | None:
    amount = decimal_amount(element.findtext(T + "zahl"), element)
    if amount is None:
        return None
    for path in CURRENCY_PATHS:
        found = element.find(path)
        currency = clean(found.text) if found is not None else None
        if currency:
            return Money(amount=amount, currency=currency)
    raise structure_error(element, "amount without currency", T + "waehrung")


def _first_money(parent: etree._Element, paths: tuple[str, ...]) -> Money | None:
    for path in paths:
        element = parent.find(path)
        if element is not None:
            money = _money(element)
            if money is not None:
                return money
    return None


def _liabilities(fachdaten: etree._Element) -> dict[str, Money]:
    liabilities = {}
    for partner in fachdaten.iterfind(LIMITED_PARTNERS):
        amount = partner.find(T + "hafteinlage")
        money = _money(amount) if amount is not None else None
        if money is not None:
            liabilities[clean(partner.findtext(T + "ref.rollennummer")) or ""] = money
    return liabilities


def _authority(rule: etree._Element | None) -> str | None:
    """The text of an auswahl_vertretungsbefugnis: free text, or the label of its code."""
    if rule is None:
        return None
    free_text = clean(rule.findtext(T + "vertretungsbefugnisFreitext"))
    if free_text:
        return free_text
    coded = rule.find(T + "vertretungsbefugnis")
    return comment_label(coded) or (clean(coded.findtext("code")) if coded is not None else None)


@dataclass(frozen=True)
class _SpecialRepresentation:
    text: str | None
    exempt_181: bool


def _representation(basisdaten: etree._Element | None) -> tuple[str | None, dict[str, _SpecialRepresentation]]:
    if basisdaten is None:
        return None, {}
    vertretung = basisdaten.find(T + "vertretung")
    if vertretung is None:
        return None, {}
    general = _authority(vertretung.find(f"{T}allgemeineVertretungsregelung/{T}auswahl_vertretungsbefugnis"))
    special: dict[str, _SpecialRepresentation] = {}
    for entitled in vertretung.iterfind(T + "vertretungsberechtigte"):
        rules = entitled.findall(T + "besondereVertretungsregelung")
        texts = [t for t in (_authority(r.find(T + "auswahl_vertretungsbefugnis")) for r in rules) if t]
        exempt = any(r.find(T + "auswahl_befreiungVon181BGB") is not None for r in rules)
        special[clean(entitled.findtext(T + "ref.rollennummer")) or ""] = _SpecialRepresentation(
            "; ".join(texts) or None, exempt
        )
    return general, special


def _officer(role: _Role, representation: _SpecialRepresentation | None, liability: Money | None) -> Officer:
    participant = role.participant
    person = participant.find(PERSON)
    common = dict(
        role_code=role.code,
        role=role.label,
        representation=representation.text if representation else None,
        exempt_181=representation.exempt_181 if representation else None,
        liability_amount=liability,
    )
    if person is not None:
        first_name = clean(person.findtext(f"{T}vollerName/{T}vorname"))
        last_name = clean(person.findtext(f"{T}vollerName/{T}nachname"))
        name = " ".join(n for n in (first_name, last_name) if n)
        if not name:
            raise structure_error(person, "person without name", T + "vollerName")
        return Officer(
            kind="person",
            name=name,
            first_name=first_name,
            last_name=last_name,
            birth_date=iso_date(person.findtext(f"{T}geburt/{T}geburtsdatum"), person),
            city=clean(person.findtext(f"{T}anschrift/{T}ort")),
            **common,
        )
    organisation = participant.find(ORGANISATION)
    if organisation is None:
        raise structure_error(participant, "participant is neither a person nor an organisation", T + "auswahl_beteiligter")
    return Officer(
        kind="organisation",
        name=required_text(organisation, NAME, "organisation name"),
        city=clean(organisation.findtext(f"{T}sitz/{T}ort")) or clean(organisation.findtext(f"{T}anschrift/{T}ort")),
        **common,
    )


def _entry(element: etree._Element) -> Entry:
    kind = element.find(T + "eintragungsart")
    return Entry(
        column=optional_int(element.findtext(T + "spalte"), element),
        position=optional_int(element.findtext(T + "position"), element),
        number=optional_int(element.findtext(T + "laufendeNummer"), element),
        kind=_entry_kind(kind) if kind is not None else None,
        text=clean(element.findtext(T + "text")) or "",
    )


def _entry_kind(element: etree._Element) -> str | None:
    code = clean(element.findtext("code"))
    return comment_label(element) or codes.ENTRY_KINDS.get(code or "") or code


def _retrieval_time(extract: etree._Element | None) -> str | None:
    if extract is None:
        return None
    day = iso_date(extract.findtext(T + "abrufdatum"), extract)
    time = clean(extract.findtext(T + "abrufuhrzeit"))
    if day and time:
        return f"{day}T{time}"
    return day
