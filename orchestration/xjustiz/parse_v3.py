"""XJustiz 3.x (``nachricht.reg.0400003``, 3.2.1 to 3.7) into the canonical record.

One reader for the whole 3.x family: element names are stable across these versions and where
they moved (the capital: ``zusatzGmbH/stammkapital`` up to 3.5, ``kapital/hoehe`` from 3.6;
currencies under ``auswahl_waehrung`` from 3.5) both places are read. Both producers are covered:
RegisSTAR files name the company in ``basisdatenRegister/rechtstraeger``; AUREG files do not, so
the participant the register data points at (role 287, Rechtsträger) stands in.

Participants are read in one pass over the procedure data (``participants``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from lxml import etree

from orchestration.xjustiz import codes
from orchestration.xjustiz.model import Address, CompanyRecord, Entry, LegalForm, Money, Officer, Register, Source
from orchestration.xjustiz.participants import (
    Participant,
    ParticipantNames,
    SpecialRepresentation,
    officer,
    read_participants,
)
from orchestration.xjustiz.values import (
    XJUSTIZ_NS,
    child_text,
    children_by_tag,
    clean,
    comment_label,
    decimal_amount,
    first_by_tag,
    iso_date,
    optional_int,
    register_type,
    split_register_reference,
    structure_error,
    text_of,
)
from orchestration.xjustiz.version import PARSER_VERSION

log = logging.getLogger(__name__)

T = "{" + XJUSTIZ_NS + "}"
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
NAME = T + "bezeichnung.aktuell"
LEGAL_FORM = T + "rechtsform"
SEAT = T + "sitz"
ADDRESS = T + "anschrift"
CITY = T + "ort"
CAPITAL_PATHS = (
    f"{T}auswahl_zusatzangaben/{T}kapitalgesellschaft/{T}zusatzGmbH/{T}stammkapital",
    f"{T}auswahl_zusatzangaben/{T}kapitalgesellschaft/{T}zusatzAktiengesellschaft/{T}grundkapital/{T}hoehe",
    f"{T}auswahl_zusatzangaben/{T}kapitalgesellschaft/{T}kapital/{T}hoehe",
)
LIMITED_PARTNERS = f"{T}auswahl_zusatzangaben/{T}personengesellschaft/{T}zusatzKG/{T}datenKommanditist"
CURRENCY_PATHS = (f"{T}waehrung/code", f"{T}auswahl_waehrung/{T}waehrung/code", f"{T}auswahl_waehrung/*")
AUTHORITY = T + "auswahl_vertretungsbefugnis"
AUTHORITY_TEXT = T + "vertretungsbefugnisFreitext"
AUTHORITY_CODE = T + "vertretungsbefugnis"
EXEMPTION_181 = T + "auswahl_befreiungVon181BGB"
ROLE_REFERENCE = T + "ref.rollennummer"


PARTICIPANT_NAMES = ParticipantNames(
    participation=PARTICIPATION,
    role=T + "rolle",
    role_number=T + "rollennummer",
    role_designation=T + "rollenbezeichnung",
    person=T + "natuerlichePerson",
    organisation=T + "organisation",
    first_name=T + "vorname",
    last_name=T + "nachname",
    birth_date=T + "geburtsdatum",
    name=NAME,
    seat=SEAT,
    address=ADDRESS,
    city=CITY,
)


@dataclass(frozen=True)
class _Role:
    number: str
    code: str
    label: str
    participant: Participant


def parse_v3(root: etree._Element, version: str, retrieved_at: str | None) -> CompanyRecord:
    kopf = root.find(KOPF)
    proceeding = root.find(PROCEEDING)
    if proceeding is None:
        raise structure_error(root, "no procedure data", PROCEEDING)
    fachdaten = root.find(FACHDATEN)
    if fachdaten is None:
        raise structure_error(root, "no register data", FACHDATEN)
    basisdaten = fachdaten.find(BASISDATEN)
    basis = children_by_tag(basisdaten)
    extract = fachdaten.find(EXTRACT)

    roles = _roles(proceeding)
    company = _company(fachdaten, basis, roles)
    representation, special_representation = _representation(basis.get(T + "vertretung"))
    liabilities = _liabilities(fachdaten)
    statute = basis.get(T + "satzungsdatum")

    return CompanyRecord(
        parser_version=PARSER_VERSION,
        source=Source(
            format="xjustiz-3",
            xjustiz_version=version,
            producer=clean(kopf.findtext(PRODUCER)) if kopf is not None else None,
            retrieved_at=retrieved_at or _retrieval_time(extract),
        ),
        register=_register(proceeding, kopf, roles),
        name=_company_name(company),
        legal_form=_legal_form(company, roles),
        seat=child_text(company.get(SEAT), CITY),
        address=_address(company.get(ADDRESS)),
        capital=_first_money(fachdaten, CAPITAL_PATHS),
        purpose=text_of(basis.get(T + "gegenstand")) or text_of(basis.get(T + "geschaeftszweck")),
        statute_date=iso_date(child_text(statute, T + "aktuellesSatzungsdatum"), statute) if statute is not None else None,
        representation=representation,
        officers=tuple(
            officer(role.code, role.label, role.participant, special_representation.get(role.number), liabilities.get(role.number))
            for role in roles
            if role.code not in codes.NON_OFFICER_ROLES
        ),
        entries=tuple(_entry(e) for e in extract.iterchildren(T + "eintragungstext")) if extract is not None else (),
        last_entry_date=iso_date(child_text(extract, T + "letzteEintragung"), extract) if extract is not None else None,
    )


def _roles(proceeding: etree._Element) -> list[_Role]:
    roles = []
    for participant in read_participants(proceeding, PARTICIPANT_NAMES):
        if participant.kind is None:
            raise structure_error(participant.participation, "participant is neither a person nor an organisation",
                                  "beteiligter/auswahl_beteiligter")  # fmt: skip
        for role in participant.roles:
            code = child_text(role.designation, "code")
            if code is None:
                raise structure_error(participant.participation, "role without code", "rolle/rollenbezeichnung/code")
            label = comment_label(role.designation) or codes.ROLES.get(code) or code
            roles.append(_Role(role.number, code, label, participant))
    return roles


def _company(fachdaten: etree._Element, basis: dict, roles: list[_Role]) -> dict:
    """The fields of the Rechtsträger: its own block, or the participant standing in for it."""
    rechtstraeger = basis.get(T + "rechtstraeger")
    if rechtstraeger is not None:
        return first_by_tag(rechtstraeger)
    concerned = clean(fachdaten.findtext(f"{T}betroffenerRechtstraeger/{ROLE_REFERENCE}"))
    candidates = [r for r in roles if r.number == concerned] + [r for r in roles if r.code == codes.COMPANY_ROLE]
    for role in candidates:
        if role.participant.kind == "organisation":
            return first_by_tag(role.participant.element)
    raise structure_error(fachdaten, "no Rechtsträger: neither basisdatenRegister/rechtstraeger nor a participant with role 287")


def _company_name(company: dict) -> str:
    name = text_of(company.get(NAME))
    if name is None:
        element = next(iter(company.values()))
        raise structure_error(element, "company name is missing", "bezeichnung/bezeichnung.aktuell")
    return name


def _register(proceeding: etree._Element, kopf: etree._Element | None, roles: list[_Role]) -> Register:
    instance = proceeding.find(INSTANCE)
    if instance is None:
        raise structure_error(proceeding, "no instance data", INSTANCE)
    court = instance.find(INSTANCE_COURT)
    court_code = child_text(court, "code")
    if court_code is None and kopf is not None:
        court_code = clean(kopf.findtext(SENDER_COURT))
    if court_code is None:
        raise structure_error(instance, "register court is missing", INSTANCE_COURT + "/code")

    reference = instance.find(FILE_NUMBER)
    if reference is None:
        raise structure_error(instance, "register number is missing", FILE_NUMBER)
    structured = reference.find(T + "aktenzeichen.strukturiert")
    if structured is not None:
        parts = children_by_tag(structured)
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

    return Register(
        court_code=court_code,
        court_name=_court_name(court_code, court, roles),
        type=kind,
        number=number,
        suffix=suffix,
    )


def _court_name(code: str, court: etree._Element | None, roles: list[_Role]) -> str | None:
    commented = comment_label(court)
    if commented:
        # RegisSTAR labels Bavarian register courts "Registergericht Amtsgericht München".
        return commented.removeprefix("Registergericht ").split(",")[0]
    if code in codes.courts():
        return codes.courts()[code]
    return next((r.participant.name for r in roles if r.code == codes.COURT_ROLE and r.participant.name), None)


def _legal_form(company: dict, roles: list[_Role]) -> LegalForm:
    element = company.get(LEGAL_FORM)
    if child_text(element, "code") is None:
        # AUREG leaves the form off the Rechtsträger block at times; the participant has it.
        element = next(
            (r.participant.element.find(f"{T}angabenZurRechtsform/{LEGAL_FORM}") for r in roles if r.code == codes.COMPANY_ROLE),
            None,
        )
    raw = child_text(element, "code")
    if raw is None:
        where = next(iter(company.values()))
        raise structure_error(where, "legal form is missing", "angabenZurRechtsform/rechtsform/code")
    canonical = codes.legal_form_from_code(raw)
    if canonical is None:
        log.warning("unknown legal form code %r, kept as it is", raw)
        return LegalForm(code=raw, label=comment_label(element) or raw)
    return LegalForm(code=canonical, label=codes.LEGAL_FORMS[canonical])


def _address(anschrift: etree._Element | None) -> Address | None:
    if anschrift is None:
        return None
    parts = children_by_tag(anschrift)
    address = Address(
        street=text_of(parts.get(T + "strasse")),
        house_number=text_of(parts.get(T + "hausnummer")),
        postal_code=text_of(parts.get(T + "postleitzahl")),
        city=text_of(parts.get(CITY)),
        country=_country(parts.get(T + "staat")),
    )
    return address if any(address.model_dump().values()) else None


def _country(staat: etree._Element | None) -> str | None:
    """3.3: staat/auswahl_staat/staat/code (ISO); 3.5+: staat/code (BfJ list)."""
    if staat is None:
        return None
    code = first_by_tag(staat).get("code")
    value = text_of(code)
    return codes.BFJ_COUNTRIES.get(value, value) if value else None


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
            liabilities[child_text(partner, ROLE_REFERENCE) or ""] = money
    return liabilities


def _authority(rule: etree._Element | None) -> str | None:
    """The text of an auswahl_vertretungsbefugnis: free text, or the label of its code."""
    parts = children_by_tag(rule)
    free_text = text_of(parts.get(AUTHORITY_TEXT))
    if free_text:
        return free_text
    coded = parts.get(AUTHORITY_CODE)
    return comment_label(coded) or child_text(coded, "code")


def _representation(vertretung: etree._Element | None) -> tuple[str | None, dict[str, SpecialRepresentation]]:
    if vertretung is None:
        return None, {}
    general: str | None = None
    special: dict[str, SpecialRepresentation] = {}
    for child in vertretung:
        if child.tag == T + "allgemeineVertretungsregelung":
            general = _authority(children_by_tag(child).get(AUTHORITY))
        elif child.tag == T + "vertretungsberechtigte":
            number, texts, exempt = "", [], False
            for part in child:
                if part.tag == ROLE_REFERENCE:
                    number = clean(part.text) or ""
                elif part.tag == T + "besondereVertretungsregelung":
                    rule = children_by_tag(part)
                    text = _authority(rule.get(AUTHORITY))
                    if text:
                        texts.append(text)
                    exempt = exempt or EXEMPTION_181 in rule
            special[number] = SpecialRepresentation("; ".join(texts) or None, exempt)
    return general, special


def _entry(element: etree._Element) -> Entry:
    parts = children_by_tag(element)
    kind = parts.get(T + "eintragungsart")
    return Entry(
        column=optional_int(text_of(parts.get(T + "spalte")), element),
        position=optional_int(text_of(parts.get(T + "position")), element),
        number=optional_int(text_of(parts.get(T + "laufendeNummer")), element),
        kind=_entry_kind(kind) if kind is not None else None,
        text=text_of(parts.get(T + "text")) or "",
    )


def _entry_kind(element: etree._Element) -> str | None:
    code = child_text(element, "code")
    return comment_label(element) or codes.ENTRY_KINDS.get(code or "") or code


def _retrieval_time(extract: etree._Element | None) -> str | None:
    if extract is None:
        return None
    parts = children_by_tag(extract)
    day = iso_date(text_of(parts.get(T + "abrufdatum")), extract)
    time = text_of(parts.get(T + "abrufuhrzeit"))
    if day and time:
        return f"{day}T{time}"
    return day
