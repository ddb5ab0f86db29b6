"""CompanyRecord -> SI document (``nachricht.reg.0400003``), for tests and the sample register.

Three generations, each shaped like the real documents of that generation:

- ``"1.x"``: legacy ``XJustiz_Daten`` with spelled-out values, like the RegisSTAR 1.20 files;
- ``"3.3.1"``: RegisSTAR style, GDS.Rechtsform codes, labels as XML comments;
- ``"3.5.1"``: XUnternehmen legal form codes, BfJ country codes, ``auswahl_waehrung``.

3.3.1 and 3.5.1 output is valid against the official XSDs, and ``parse_si`` reads every
generation back into an equal record, provided the record fits the format:

- a register extract (entries, ``last_entry_date``) needs ``source.retrieved_at`` as
  ``YYYY-MM-DDTHH:MM:SS`` and ``last_entry_date`` together; 3.x entries need column, position,
  number and kind;
- a record carries capital or limited partners' Hafteinlagen, not both (XJustiz has one choice);
- 1.x names roles in words: only roles of ``codes.ROLES`` survive the trip.

Records that do not fit raise ValueError rather than producing a document that reads back
differently. The record read back names the version written in ``source``.
"""

from __future__ import annotations

import uuid

from lxml import etree

from orchestration.xjustiz import codes
from orchestration.xjustiz.company_record import Address, CompanyRecord, Entry, Money, Officer
from orchestration.xjustiz.xml_values import XJUSTIZ_NS, T

SUPPORTED_WRITE_VERSIONS = ("1.x", "3.3.1", "3.5.1")
LEGACY_VERSION = "1.20.0"
XSI_NS = "http://www.w3.org/2001/XMLSchema-instance"
XSI_TYPE = f"{{{XSI_NS}}}type"
_MESSAGE_IDS = uuid.UUID("6f1f3c1e-2b1a-4c3e-9a57-3c8d1f0e7a42")
EXEMPT_181_TEXT = (
    "mit der Befugnis, im Namen der Gesellschaft mit sich im eigenen Namen oder als Vertreter eines "
    "Dritten Rechtsgeschäfte abzuschließen"
)
NO_EXEMPTION_TEXT = "(keine Angabe)"
CAPITAL_STOCK_FORMS = frozenset({"AG", "SE", "KGaA", "GmbH & Co. KGaA"})

_BFJ_CODE_BY_COUNTRY = {iso: bfj for bfj, iso in codes.BFJ_COUNTRIES.items()}


def write_si(record: CompanyRecord, version: str) -> bytes:
    """The SI document of ``record`` in XJustiz ``version`` ("1.x", "3.3.1" or "3.5.1")."""
    if version not in SUPPORTED_WRITE_VERSIONS:
        raise ValueError(f"cannot write XJustiz {version!r}; writes {', '.join(SUPPORTED_WRITE_VERSIONS)}")
    _check_writable(record)
    root = _legacy_document(record) if version == "1.x" else _document_v3(record, version)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def _check_writable(record: CompanyRecord) -> None:
    has_extract = bool(record.entries) or record.last_entry_date is not None
    if has_extract and not (record.last_entry_date and _split_retrieval(record.source.retrieved_at)):
        raise ValueError("a register extract needs last_entry_date and retrieved_at (YYYY-MM-DDTHH:MM:SS)")
    if record.capital and any(o.liability_amount for o in record.officers):
        raise ValueError("XJustiz carries either capital or Hafteinlagen, not both")
    for officer in record.officers:
        if officer.kind == "person" and (
            not officer.last_name or officer.name != " ".join(n for n in (officer.first_name, officer.last_name) if n)
        ):
            raise ValueError(f"person {officer.name!r} needs a last name, and first and last name must make the name")


def _split_retrieval(retrieved_at: str | None) -> tuple[str, str] | None:
    if not retrieved_at or "T" not in retrieved_at:
        return None
    day, time = retrieved_at.split("T", 1)
    return (day, time) if len(day) == 10 and len(time) >= 8 else None


def _sub(parent: etree._Element, tag: str, text: str | None = None, **attributes: str) -> etree._Element:
    element = etree.SubElement(parent, tag, attributes)
    if text is not None:
        element.text = text
    return element


def _officer_roles(record: CompanyRecord) -> list[tuple[int, Officer]]:
    # Role numbers 1 and 2 are the company and the court, as in the real documents.
    return [(number, officer) for number, officer in enumerate(record.officers, start=3)]


# --- XJustiz 3.x -----------------------------------------------------------------------------


def _code(parent: etree._Element, tag: str, code: str, label: str | None, list_version: str, list_uri: str) -> None:
    element = _sub(parent, T + tag, listVersionID=list_version, listURI=list_uri)
    if label:
        element.append(etree.Comment(_comment_text(label)))
    _sub(element, "code", code)


def _comment_text(label: str) -> str:
    # "--" may not appear inside an XML comment.
    return label.replace("--", "- -")


def _document_v3(record: CompanyRecord, version: str) -> etree._Element:
    v35 = version == "3.5.1"
    root = etree.Element(T + "nachricht.reg.0400003", nsmap={"tns": XJUSTIZ_NS, "xsi": XSI_NS})
    register = record.register
    court = register.court_code
    court_uri = "urn:xoev-de:xjustiz:codeliste:gds.gerichte"

    kopf = _sub(root, T + "nachrichtenkopf", xjustizVersion=version)
    _sub(kopf, T + "aktenzeichen.absender")
    _sub(kopf, T + "erstellungszeitpunkt", _created(record))
    _code(_sub(kopf, T + "auswahl_absender"), "absender.gericht", court, register.court_name, "3.5", court_uri)
    _sub(_sub(kopf, T + "auswahl_empfaenger"), T + "empfaenger.sonstige")
    message_id = uuid.uuid5(_MESSAGE_IDS, f"{court}/{register.type}/{register.number}/{register.suffix or ''}")
    _sub(kopf, T + "eigeneNachrichtenID", str(message_id))
    _code(kopf, "ereignis", "002", "HR-Auszug", "1.5", "urn:xoev-de:xjustiz:codeliste:gds.ereignis")
    if record.source.producer:
        producer = _sub(kopf, T + "herstellerinformation")
        _sub(producer, T + "nameDesProdukts", record.source.producer)
        _sub(producer, T + "herstellerDesProdukts", "handelsregister-orchestration")

    proceeding = _sub(_sub(root, T + "grunddaten"), T + "verfahrensdaten")
    instance = _sub(proceeding, T + "instanzdaten")
    _sub(instance, T + "instanznummer", "0")
    _code(_sub(instance, T + "auswahl_instanzbehoerde"), "gericht", court, register.court_name, "3.5", court_uri)
    structured = _sub(
        _sub(_sub(instance, T + "aktenzeichen"), T + "auswahl_aktenzeichen"), T + "aktenzeichen.strukturiert"
    )
    _code(structured, "register", register.type, None, "3.1", "urn:xoev-de:xjustiz:codeliste:gds.registerzeichen")
    _sub(structured, T + "laufendeNummer", register.number)
    _sub(structured, T + "jahr")
    if register.suffix:
        _sub(structured, T + "zusatz", register.suffix)
    _sub(_sub(instance, T + "verfahrensgegenstand"), T + "gegenstand", "Strukturierter Registerinhalt")

    company = _participation_v3(proceeding, 1, codes.COMPANY_ROLE, "Rechtsträger(in)")
    _organisation_v3(company, record, v35)
    if register.court_name:
        court_participant = _participation_v3(proceeding, 2, codes.COURT_ROLE, "Registergericht")
        _sub(_sub(court_participant, T + "bezeichnung"), T + "bezeichnung.aktuell", register.court_name)
    for number, officer in _officer_roles(record):
        _officer_v3(
            _participation_v3(proceeding, number, officer.role_code, officer.role, organisation=False), officer, v35
        )

    _sub(root, T + "schriftgutobjekte")
    fachdaten = _sub(root, T + "fachdatenRegister", fachdatenRegisterVersion="3.4" if v35 else "3.2")
    _code(fachdaten, "mitteilungsart", "002", "HR-Auszug", "1.5", "urn:xoev-de:xjustiz:codeliste:gds.ereignis")
    _sub(_sub(fachdaten, T + "betroffenerRechtstraeger"), T + "ref.rollennummer", "1")
    if record.last_entry_date:
        _extract_v3(fachdaten, record)
    basis = _sub(fachdaten, T + "basisdatenRegister")
    if record.statute_date:
        _sub(_sub(basis, T + "satzungsdatum"), T + "aktuellesSatzungsdatum", record.statute_date)
    _organisation_v3(_sub(basis, T + "rechtstraeger"), record, v35)
    _representation_v3(basis, record)
    if record.purpose:
        _sub(basis, T + "gegenstand", record.purpose)
    _additional_v3(fachdaten, record, v35)
    return root


def _created(record: CompanyRecord) -> str:
    return record.source.retrieved_at or f"{record.last_entry_date or '1970-01-01'}T00:00:00"


def _participation_v3(
    proceeding: etree._Element, number: int, role_code: str, role_label: str, organisation: bool = True
) -> etree._Element:
    participation = _sub(proceeding, T + "beteiligung")
    role = _sub(participation, T + "rolle")
    _sub(role, T + "rollennummer", str(number))
    _code(
        role, "rollenbezeichnung", role_code, role_label, "3.3", "urn:xoev-de:xjustiz:codeliste:gds.rollenbezeichnung"
    )
    participant = _sub(participation, T + "beteiligter")
    _sub(participant, T + "beteiligtennummer", str(number))
    choice = _sub(participant, T + "auswahl_beteiligter")
    return _sub(choice, T + "organisation") if organisation else choice


def _organisation_v3(organisation: etree._Element, record: CompanyRecord, v35: bool) -> None:
    _sub(_sub(organisation, T + "bezeichnung"), T + "bezeichnung.aktuell", record.name)
    form = record.legal_form
    if v35:
        # Forms without an XUnternehmen code keep their canonical code, which the parser reads too.
        code = codes.XUNTERNEHMEN_CODE_BY_LEGAL_FORM.get(form.code, form.code)
        version, uri = "2.2", "urn:xoev-de:xunternehmen:codeliste:rechtsformen"
    else:
        code = codes.GDS_CODE_BY_LEGAL_FORM.get(form.code, form.code)
        version, uri = "3.4", "urn:xoev-de:xjustiz:codeliste:gds.rechtsform"
    _code(_sub(organisation, T + "angabenZurRechtsform"), "rechtsform", code, form.label, version, uri)
    if record.seat:
        _sub(_sub(organisation, T + "sitz"), T + "ort", record.seat)
    if record.address:
        _address_v3(organisation, record.address, "003", "Dienst-/Geschäftsanschrift", v35)


def _address_v3(parent: etree._Element, address: Address, kind: str, kind_label: str, v35: bool) -> None:
    anschrift = _sub(parent, T + "anschrift")
    _code(anschrift, "anschriftstyp", kind, kind_label, "3.0", "urn:xoev-de:xjustiz:codeliste:gds.anschriftstyp")
    for tag, value in (
        ("strasse", address.street),
        ("hausnummer", address.house_number),
        ("postleitzahl", address.postal_code),
        ("ort", address.city),
    ):
        if value:
            _sub(anschrift, T + tag, value)
    if address.country:
        if v35:
            country = _BFJ_CODE_BY_COUNTRY.get(address.country, address.country)
            _code(anschrift, "staat", country, None, "6.1", "urn:xoev-de:bund:bfj:codeliste:bfj.staat")
        else:
            choice = _sub(_sub(anschrift, T + "staat"), T + "auswahl_staat")
            _code(choice, "staat", address.country, None, "6", "urn:xoev-de:kosit:codeliste:country-codes")


def _officer_v3(choice: etree._Element, officer: Officer, v35: bool) -> None:
    if officer.kind == "person":
        person = _sub(choice, T + "natuerlichePerson")
        name = _sub(person, T + "vollerName")
        if officer.first_name:
            _sub(name, T + "vorname", officer.first_name)
        _sub(name, T + "nachname", officer.last_name)
        if officer.birth_date:
            _sub(_sub(person, T + "geburt"), T + "geburtsdatum", officer.birth_date)
        if officer.city:
            _address_v3(person, Address(city=officer.city), "017", "Privatanschrift", v35)
        return
    organisation = _sub(choice, T + "organisation")
    _sub(_sub(organisation, T + "bezeichnung"), T + "bezeichnung.aktuell", officer.name)
    if officer.city:
        _sub(_sub(organisation, T + "sitz"), T + "ort", officer.city)


def _extract_v3(fachdaten: etree._Element, record: CompanyRecord) -> None:
    extract = _sub(fachdaten, T + "auszug")
    for entry in record.entries:
        _entry_v3(extract, entry)
    day, time = _split_retrieval(record.source.retrieved_at)  # type: ignore[misc]
    _sub(extract, T + "abrufuhrzeit", time)
    _sub(extract, T + "abrufdatum", day)
    _sub(extract, T + "letzteEintragung", record.last_entry_date)
    _sub(extract, T + "anzahlEintragungen", str(max((e.number or 0 for e in record.entries), default=0)))


def _entry_v3(extract: etree._Element, entry: Entry) -> None:
    if entry.column is None or entry.position is None or entry.number is None or not entry.kind:
        raise ValueError(f"a 3.x register entry needs column, position, number and kind: {entry!r}")
    element = _sub(extract, T + "eintragungstext")
    _sub(element, T + "spalte", str(entry.column))
    _sub(element, T + "position", str(entry.position))
    _sub(element, T + "laufendeNummer", str(entry.number))
    kind_codes = {label: code for code, label in codes.ENTRY_KINDS.items()}
    _code(
        element,
        "eintragungsart",
        kind_codes.get(entry.kind, "004"),
        entry.kind,
        "1.1",
        "urn:xoev-de:xjustiz:codeliste:reg.eintragungstyp",
    )
    _sub(element, T + "text", entry.text)


def _representation_v3(basis: etree._Element, record: CompanyRecord) -> None:
    entitled = [(n, o) for n, o in _officer_roles(record) if o.representation or o.exempt_181 is not None]
    if not record.representation and not entitled:
        return
    vertretung = _sub(basis, T + "vertretung")
    if record.representation:
        general = _sub(_sub(vertretung, T + "allgemeineVertretungsregelung"), T + "auswahl_vertretungsbefugnis")
        _sub(general, T + "vertretungsbefugnisFreitext", record.representation)
    for number, officer in entitled:
        element = _sub(vertretung, T + "vertretungsberechtigte")
        _sub(element, T + "ref.rollennummer", str(number))
        if not (officer.representation or officer.exempt_181):
            continue
        rule = _sub(element, T + "besondereVertretungsregelung")
        # An empty free text is how RegisSTAR writes an exemption without a special rule.
        _sub(
            _sub(rule, T + "auswahl_vertretungsbefugnis"),
            T + "vertretungsbefugnisFreitext",
            officer.representation or "",
        )
        if officer.exempt_181:
            _code(
                _sub(rule, T + "auswahl_befreiungVon181BGB"),
                "befreiungVon181BGB",
                "011",
                EXEMPT_181_TEXT,
                "2.0",
                "urn:xoev-de:xjustiz:codeliste:reg.besondere-befreiung",
            )


def _money_v3(parent: etree._Element, tag: str, money: Money, v35: bool) -> None:
    element = _sub(parent, T + tag)
    _sub(element, T + "zahl", money.amount)
    currency_parent = _sub(element, T + "auswahl_waehrung") if v35 else element
    _code(currency_parent, "waehrung", money.currency, None, "1.0", "urn:xoev-de:bund:kba:codeliste:waehrung")


def _additional_v3(fachdaten: etree._Element, record: CompanyRecord, v35: bool) -> None:
    partners = [(n, o) for n, o in _officer_roles(record) if o.liability_amount]
    if record.capital:
        companies = _sub(_sub(fachdaten, T + "auswahl_zusatzangaben"), T + "kapitalgesellschaft")
        if record.legal_form.code in CAPITAL_STOCK_FORMS:
            stock = _sub(_sub(companies, T + "zusatzAktiengesellschaft"), T + "grundkapital")
            _money_v3(stock, "hoehe", record.capital, v35)
        else:
            _money_v3(_sub(companies, T + "zusatzGmbH"), "stammkapital", record.capital, v35)
    elif partners:
        kg = _sub(_sub(_sub(fachdaten, T + "auswahl_zusatzangaben"), T + "personengesellschaft"), T + "zusatzKG")
        for number, officer in partners:
            partner = _sub(kg, T + "datenKommanditist")
            _sub(partner, T + "ref.rollennummer", str(number))
            _money_v3(partner, "hafteinlage", officer.liability_amount, v35)  # type: ignore[arg-type]


# --- XJustiz 1.x -----------------------------------------------------------------------------


def _content(parent: etree._Element, tag: str, text: str | None, list_type: str | None = None) -> etree._Element:
    attributes = {XSI_TYPE: list_type} if list_type else {}
    element = etree.SubElement(parent, T + tag, attributes)
    _sub(element, T + "content", text)
    return element


def _legacy_document(record: CompanyRecord) -> etree._Element:
    root = etree.Element(T + "XJustiz_Daten", nsmap={None: XJUSTIZ_NS, "xsi": XSI_NS})
    version = record.source.xjustiz_version if record.source.xjustiz_version.startswith("1.") else LEGACY_VERSION
    grunddaten = _sub(root, T + "Grunddaten", XJustizVersion=version)
    proceeding = _sub(grunddaten, T + "Verfahrensdaten")
    register = record.register

    instance = _sub(proceeding, T + "Instanzdaten")
    _sub(instance, T + "Instanznummer", "0")
    _content(instance, "Sachgebiet", "Handelsregister", "WL_Sachgebiet")
    _content(_sub(instance, T + "Instanzbehoerde"), "Gericht", register.court_code, "WL_Gerichte")
    reference = " ".join(p for p in (register.type, register.number, register.suffix) if p)
    _sub(instance, T + "Aktenzeichen", reference)
    _content(_sub(instance, T + "Verfahrensgegenstand"), "Gegenstand", "Strukturierter Registerinhalt")

    _legacy_company(_sub(_legacy_participation(proceeding, 1, "Rechtsträger"), T + "Organisation"), record)
    if register.court_name:
        court = _sub(_legacy_participation(proceeding, 2, "Registergericht"), T + "Organisation")
        _sub(_sub(court, T + "Bezeichnung"), T + "Bezeichnung_Aktuell", register.court_name)
    for number, officer in _officer_roles(record):
        _legacy_officer(
            _legacy_participation(proceeding, number, codes.ROLES.get(officer.role_code, officer.role)), officer
        )
    if record.source.producer:
        _sub(_sub(proceeding, T + "Herstellerinformation"), T + "Name_des_Produkts", record.source.producer)

    fachdaten = _sub(root, T + "Fachdaten_Register", Fachdaten_Register_Version="1.2")
    _content(fachdaten, "Mitteilungsart", "Sonstige Anmeldung/Mitteilung", "WL_Mitteilungsart")
    _sub(_sub(fachdaten, T + "Betroffener_Rechtstraeger"), T + "Ref_Rollennummer", "1")
    if record.last_entry_date:
        _legacy_extract(fachdaten, record)
    basis = _sub(fachdaten, T + "Basisdaten_Register")
    if record.statute_date:
        _sub(basis, T + "Aktuelles_Satzungsdatum", record.statute_date)
    _legacy_company(_sub(basis, T + "Rechtstraeger"), record)
    _legacy_representation(basis, record)
    if record.purpose:
        _sub(basis, T + "Gegenstand_oder_Geschaeftszweck", record.purpose)
    _legacy_additional(fachdaten, record)
    return root


def _legacy_participation(proceeding: etree._Element, number: int, role_label: str) -> etree._Element:
    participation = _sub(proceeding, T + "Beteiligung")
    role = _sub(participation, T + "Rolle")
    _sub(role, T + "Rollennummer", str(number))
    _content(role, "Rollenbezeichnung", role_label, "WL_Rollenbezeichnung_Register")
    _sub(role, T + "Nr", str(number))
    participant = _sub(participation, T + "Beteiligter")
    _sub(participant, T + "Beteiligtennummer", str(number))
    return participant


def _legacy_company(organisation: etree._Element, record: CompanyRecord) -> None:
    _sub(_sub(organisation, T + "Bezeichnung"), T + "Bezeichnung_Aktuell", record.name)
    _content(
        organisation,
        "Rechtsform",
        codes.LEGAL_FORMS.get(record.legal_form.code, record.legal_form.label),
        "WL_Rechtsform_Register",
    )
    if record.seat:
        _sub(_sub(organisation, T + "Sitz"), T + "Ort", record.seat)
    if record.address:
        _legacy_address(organisation, record.address)


def _legacy_address(parent: etree._Element, address: Address) -> None:
    anschrift = _sub(parent, T + "Anschrift")
    _content(anschrift, "Anschriftstyp", "Aktuelle Anschrift", "WL_Anschriftstyp")
    for tag, value in (
        ("Strasse", address.street),
        ("Hausnummer", address.house_number),
        ("Postleitzahl", address.postal_code),
        ("Ort", address.city),
    ):
        if value:
            _sub(anschrift, T + tag, value)
    if address.country:
        _content(anschrift, "Staat", address.country, "WL_Staaten")


def _legacy_officer(participant: etree._Element, officer: Officer) -> None:
    if officer.kind == "person":
        person = _sub(participant, T + "Natuerliche_Person")
        name = _sub(person, T + "Voller_Name")
        if officer.first_name:
            _sub(name, T + "Vorname", officer.first_name)
        _sub(name, T + "Nachname", officer.last_name)
        if officer.birth_date:
            _sub(_sub(person, T + "Geburt"), T + "Geburtsdatum", officer.birth_date)
        if officer.city:
            _legacy_address(person, Address(city=officer.city))
        return
    organisation = _sub(participant, T + "Organisation")
    _sub(_sub(organisation, T + "Bezeichnung"), T + "Bezeichnung_Aktuell", officer.name)
    if officer.city:
        _sub(_sub(organisation, T + "Sitz"), T + "Ort", officer.city)


def _legacy_extract(fachdaten: etree._Element, record: CompanyRecord) -> None:
    extract = _sub(fachdaten, T + "Auszug")
    for entry in record.entries:
        element = _sub(extract, T + "Eintragungstext")
        for tag, value in (("Spalte", entry.column), ("Position", entry.position), ("Laufende_Nummer", entry.number)):
            if value is not None:
                _sub(element, T + tag, str(value))
        if entry.kind:
            _content(element, "Eintragungsart", entry.kind, "WL_Eintragungsart")
        _sub(element, T + "Text", entry.text)
    day, time = _split_retrieval(record.source.retrieved_at)  # type: ignore[misc]
    _sub(extract, T + "Abrufuhrzeit", time)
    _sub(extract, T + "Abrufdatum", day)
    _sub(extract, T + "letzte_Eintragung", record.last_entry_date)
    _sub(extract, T + "Anzahl_Eintragungen", str(max((e.number or 0 for e in record.entries), default=0)))


def _legacy_representation(basis: etree._Element, record: CompanyRecord) -> None:
    entitled = [(n, o) for n, o in _officer_roles(record) if o.representation or o.exempt_181 is not None]
    if not record.representation and not entitled:
        return
    vertretung = _sub(basis, T + "Vertretung")
    for number, officer in entitled:
        element = _sub(vertretung, T + "Vertretungsberechtigte")
        _sub(element, T + "Ref_Rollennummer", str(number))
        rule = _sub(element, T + "Besondere_Vertretungsregelung")
        _content(rule, "Vertretungsbefugnis", officer.representation, "WL_Besondere_Vertretungsregelung")
        exemption = EXEMPT_181_TEXT if officer.exempt_181 else NO_EXEMPTION_TEXT
        _content(_sub(rule, T + "Befreiung_von_181BGB"), "Besonderheiten_zu_181BGB", exemption)
    if record.representation:
        general = _sub(vertretung, T + "Allgemeine_Vertretungsregelung")
        _content(general, "Vertretungsbefugnis", record.representation, "WL_Allgemeine_Vertretungsregelung")


def _legacy_money(parent: etree._Element, tag: str, money: Money) -> None:
    element = _sub(parent, T + tag)
    _sub(element, T + "Zahl", money.amount)
    _sub(element, T + "Waehrung", money.currency)


def _legacy_additional(fachdaten: etree._Element, record: CompanyRecord) -> None:
    partners = [(n, o) for n, o in _officer_roles(record) if o.liability_amount]
    if record.capital:
        companies = _sub(_sub(fachdaten, T + "Zusatzangaben"), T + "Kapitalgesellschaft")
        if record.legal_form.code in CAPITAL_STOCK_FORMS:
            _legacy_money(_sub(companies, T + "Zusatz_AG"), "Grundkapital", record.capital)
        else:
            _legacy_money(_sub(companies, T + "Zusatz_GmbH"), "Stammkapital", record.capital)
    elif partners:
        kg = _sub(_sub(_sub(fachdaten, T + "Zusatzangaben"), T + "Personengesellschaft"), T + "Zusatz_KG")
        for number, officer in partners:
            partner = _sub(kg, T + "Daten_Kommanditist")
            _sub(partner, T + "Ref_Rollennummer", str(number))
            _legacy_money(partner, "Hafteinlage", officer.liability_amount)  # type: ignore[arg-type]
