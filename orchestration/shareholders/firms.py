"""What a shareholder's cell says of an organisation: its legal form (German and foreign), firm,
seat and register (German courts and foreign registers with their country)."""

from __future__ import annotations

import re

LEGAL_FORM = re.compile(
    r"(?<![\w])(?:g?GmbH|mbH|AG|SE|KG|KGaA|OHG|oHG|UG|eG|e\.\s?V\.|e\.\s?K\.|GbR|PartG(?:mbB)?|Stiftung|Verein|"
    r"Genossenschaft|Gesellschaft|Ltd\.?|Limited|LLC|L\.L\.C\.|LLP|LP|L\.P\.|Inc\.?|Incorporated|Corp\.?|Corporation|"
    r"plc|PLC|Plc|B\.?\s?V\.?|N\.\s?V\.|NV|"
    r"S\.\s?(?:à|a|ä)\s?r\.\s?l\.|S\.?A\.?R\.?L\.?|SARL|S\.\s?A\.|SA|S\.\s?A\.\s?S\.(?:\s?U\.)?|SASU?|S\.\s?p\.\s?A\.|"
    r"SpA|S\.\s?r\.\s?l\.|Srl|S\.\s?L\.(?:\s?U\.)?|SLU?|A/S|ApS|AB|publ|AS|ASA|Oyj?|GesmbH|Ges\.m\.b\.H\.|Holding|"
    r"& Co\.|Foundation|Stichting|Fondation|Fondazione|Association|Trust)(?![\w])"
    # Firms named by their kind of company ("Aktiengesellschaft", "société par actions
    # simplifiée"), and public bodies, which hold shares of municipal companies without any
    # legal-form abbreviation.
    r"|\w*(?:gesellschaft|genossenschaft|stiftung|verband|verein)\b|"
    r"(?i:\b(?:soci[ée]t[ée]|besloten\s+vennootschap|naamloze\s+vennootschap|aktiebolag|aktieselskab|aksjeselskap|"
    r"osakeyhti[öo]|sociedad|societ[àa])\b)|"
    r"\b(?:Stadt|Gemeinde|Landkreis|Freistaat|Land|Bundesrepublik|Landeshauptstadt|Hansestadt|"
    r"Zweckverband|Anstalt|Körperschaft|Sparkasse|Kirchengemeinde|Universität|Hochschule|Kammer)\s+[A-ZÄÖÜ]"
)
# How a cell names a register outside Germany's courts, each with the country it implies (None:
# the country must be named).
_FOREIGN_AUTHORITIES = (
    (r"Greffe\s+du\s+Tribunal\s+de\s+Commerce(?:\s+(?:de|d')\s*[A-ZÄÖÜ][\w\-]+)?", "FR"),
    (r"R\.?\s?C\.?\s?S\.?\s+Luxemb(?:o|u)rg", "LU"),
    (r"R\.?\s?C\.?\s?S\.?(?:\s+[A-ZÄÖÜ][\w\-]+)?", "FR"),
    (r"Companies\s+House|Registrar\s+of\s+Companies(?:\s+for\s+England\s+and\s+Wales)?", "GB"),
    (r"Companies\s+Registration\s+Office", "IE"),
    (r"Kamer\s+van\s+Koophandel|KvK|Handelsregister\s+der\s+Kamer\s+van\s+Koophandel", "NL"),
    (
        r"Firmenbuch(?:gericht)?|(?:Handels|Landes)gericht\s+[A-ZÄÖÜ][\w\-]+(?:\s+(?:an\s+der|am|im)\s+[A-ZÄÖÜ]\w+)?",
        "AT",
    ),
    (r"Handelsregister(?:amt)?\s+des\s+Kantons\s+[A-ZÄÖÜ][\w\-]+", "CH"),
    (r"Registro\s+Mercantil(?:\s+de\s+[A-ZÄÖÜ][\w\-]+)?", "ES"),
    (r"Registro\s+delle\s+Imprese(?:\s+di\s+[A-ZÄÖÜ][\w\-]+)?", "IT"),
    (r"Bolagsverket", "SE"),
    (r"Erhvervsstyrelsen", "DK"),
    (r"Br[øo]nn[øo]ysundregistrene|Foretaksregisteret", "NO"),
    (r"Kaupparekisteri|Patentti-\s*ja\s+rekisterihallitus", "FI"),
    (r"Secretary\s+of\s+State(?:\s+of\s+the\s+State)?\s+of\s+[A-ZÄÖÜ]\w+|Division\s+of\s+Corporations", "US"),
)
_AUTHORITY = re.compile("|".join(f"(?P<a{i}>{pattern})" for i, (pattern, _) in enumerate(_FOREIGN_AUTHORITIES)))
# A register the cell labels without naming a known authority ("Handelsregister: …").
_LABELLED_REGISTER = re.compile(
    r"(?:Handelsregister|Register(?:gericht)?|Registerbehörde|Registered\s+with|Register\s+of\s+Companies)\s*:\s*"
    r"(?P<court>[^,;:]+?)\s*(?=[,;]|Registrierungsnummer|Registernummer|Register\s+No|Nr\.|No\.|$)",
    re.I,
)
_REGISTER_NUMBER = re.compile(
    r"(?:Registrierungsnummer|Registernummer|Registernr\.?|Register\s+No\.?|Registration\s+(?:No\.?|number)|"
    r"Company\s+(?:No\.?|number)|KvK(?:-nummer)?|(?:unter\s+der\s+)?(?:HR-?)?Nummer|Nr\.|No\.|number|unter|under)\s*[:.]?\s*"
    r"(?P<number>(?:[A-Z]{1,3}\s?)?\d[\d .\-/]*\d(?:\s?(?-i:[a-z])(?![\w]))?|\d)"
    r"|(?P<fn>FN\s?\d+\s?[a-z])(?![\w])|(?P<che>CHE-?\d{3}\.\d{3}\.\d{3})"
    r"|R\.?\s?C\.?\s?S\.?\s+[A-ZÄÖÜ][\w\-]+\s+(?P<rcs_after>(?:[A-Z]\s?)?\d[\d ]*\d)"
    r"|(?P<rcs_before>\d{3}\s?\d{3}\s?\d{3})\s+R\.?\s?C\.?\s?S\.?",
    re.I,
)
# Country names as lists print them (German, English, their own language) by ISO 3166 code.
_COUNTRIES = {
    "FR": r"Frankreich|France|French\s+Republic",
    "LU": r"Luxemburg|Luxembourg|Großherzogtum\s+Luxemburg",
    "NL": r"Niederlande|Netherlands|Nederland|Holland",
    "BE": r"Belgien|Belgium|Belgique|België",
    "GB": r"Vereinigtes\s+Königreich|United\s+Kingdom|Großbritannien|Great\s+Britain|England(?:\s+and\s+Wales)?|"
    r"Schottland|Scotland|UK",
    "IE": r"Irland|Ireland|Éire",
    "US": r"Vereinigte\s+Staaten(?:\s+von\s+Amerika)?|United\s+States(?:\s+of\s+America)?|USA|U\.S\.A\.|Delaware",
    "AT": r"Österreich|Austria|Republik\s+Österreich",
    "CH": r"Schweiz|Switzerland|Suisse|Svizzera",
    "ES": r"Spanien|Spain|España",
    "IT": r"Italien|Italy|Italia",
    "SE": r"Schweden|Sweden|Sverige",
    "DK": r"Dänemark|Denmark|Danmark",
    "NO": r"Norwegen|Norway|Norge",
    "FI": r"Finnland|Finland|Suomi",
    "PL": r"Polen|Poland|Polska",
    "CZ": r"Tschechien|Tschechische\s+Republik|Czech\s+Republic|Czechia",
    "DE": r"Deutschland|Germany|Bundesrepublik\s+Deutschland",
}
_COUNTRY = re.compile("|".join(f"(?P<{code}>\\b(?:{names})\\b)" for code, names in _COUNTRIES.items()))
# Where an organisation's firm ends: its seat, its register, a following place after a comma.
FIRM_END = re.compile(
    r"\s*,?\s*(?:\(|\b)(?:mit\s+(?:dem\s+)?Sitz|Sitz\b|with\s+(?:its\s+)?(?:registered\s+)?seat|registered\s+(?:with|in|at|under)|"
    r"seat\b|eingetragen|Amtsgericht|AG\s+\w+\s+(?:HR[AB]|VR|GnR)|Registergericht|(?:HRA|HRB|VR|GnR|PR)\s*[.:]?\s*\d|"
    r"R\.?\s?C\.?\s?S\.?|Companies\s+(?:Registration|House)|Handelsregister|Register|Registrierungsnummer|"
    r"Kamer\s+van\s+Koophandel|KvK|Firmenbuch|FN\s?\d|CHE-?\d|Greffe|Registro|Company\s+No)",
    re.I,
)
# A German court's name: "Walsrode", "Frankfurt am Main", "Charlottenburg (Berlin)".
_COURT = r"[A-ZÄÖÜ][\w\-]+(?:\s+(?:am|an\s+der|in|im|a\.\s?M\.|\([\w\s]+\))(?:\s+[A-ZÄÖÜ][\w\-]+)?)?"
_COURT_WORD = r"(?:(?:Handelsregister\s+des\s+)?Amtsgerichts?|AG|Registergericht|Local\s+Court(?:\s+of)?)"
REGISTER = re.compile(
    rf"(?:{_COURT_WORD}\s+(?P<court>{_COURT})"
    r"[\s,\u2013\u2014-]*(?:unter\s+)?)?"
    r"(?P<type>HRA|HRB|VR|GnR|PR)\s*[.:]?\s*(?P<number>\d[\d.]*(?:\s+[A-Z]{1,2}\b)?)"
)
# A court named after the number: "HRB 206723 – Amtsgericht Walsrode", "HRB 1234 (AG Bonn)".
_COURT_AFTER = re.compile(rf"[\s,;\u2013\u2014-]*\(?\s*{_COURT_WORD}\s+(?P<court>{_COURT})")
# A place: "Bremen", "Frankfurt am Main", "Neustadt (Orla)", not a court or register in brackets.
_PLACE = (
    r"[A-ZÄÖÜ][\w\-]+(?:\s+(?:am|an\s+der|in|im|a\.\s?M\.|bei)\s+[A-ZÄÖÜ][\w\-]+|"
    r"\s+\((?!(?:Amtsgericht|AG|Registergericht)\b)[^\W\d_][^\d()]*\))?"
)
SEAT = re.compile(
    r"(?:mit\s+(?:dem\s+)?Sitz\s+(?:in\s+)?|Sitz:?\s+(?:in\s+)?|with\s+(?:its\s+)?(?:registered\s+)?(?:seat|office)\s+(?:in\s+)?|"
    r"(?:registered\s+)?(?:seat|office):?\s+(?:in\s+)?)"
    rf"(?P<place>{_PLACE})"
)
# A place after its postal code, as a seat column or an address prints it: "28237 Bremen",
# "D-80331 München", the Dutch "4817ZH Breda".
_POSTAL_PLACE = re.compile(rf"(?<![\w.])(?:[A-Z]{{1,2}}-\s?)?(?:\d{{4}}\s?[A-Z]{{2}}|\d{{4,5}})\s+(?P<place>{_PLACE})")
# A seat column that prints the place alone, before any country: "Bremen", "Breda, Niederlande".
_BARE_PLACE = re.compile(rf"\s*(?P<place>{_PLACE})\s*(?:[,/]|$)")
# OCR's readings of the Luxembourg "S.à r.l." (German models know no "à"): "S.ä r.l.", "S.a rr.l.",
# "S.a r.." (the thin "l" lost), "S.a r.I.".
_SARL = re.compile(r"\bS\.\s?[àaäá]\s?r{1,2}\s?\.\s?[lI1|]?\s?\.", re.IGNORECASE)


def legal_form_in(text: str) -> bool:
    return bool(LEGAL_FORM.search(text))


# Words that say a cell names a register, however OCR read the rest of it.
REGISTER_MENTION = re.compile(
    r"\b(?:Amtsgericht|Registergericht|Local\s+Court|HR\s?[AB]|Handelsregister|Firmenbuch|Companies\s+House|"
    r"Kamer\s+van\s+Koophandel|KvK|Registrierungsnummer|Registernummer)|\bR\.?\s?C\.?\s?S\b",
    re.I,
)


def names_register(text: str) -> bool:
    return bool(REGISTER_MENTION.search(text))


def register_in(text: str) -> bool:
    """Whether the cell names a register: a German court's or a foreign one."""
    return bool(REGISTER.search(text) or _AUTHORITY.search(text) or _LABELLED_REGISTER.search(text))


def is_organisation(text: str) -> bool:
    return legal_form_in(text) or register_in(text)


def firm_name(text: str) -> str:
    """The firm of an organisation: up to its seat or register, or the comma after its legal form."""
    text = _SARL.sub("S.à r.l.", text)
    end = FIRM_END.search(text)
    head = text[: end.start()] if end and end.start() > 0 else text
    forms = list(LEGAL_FORM.finditer(head))
    if forms:
        after = head[forms[-1].end() :]
        if "," in after:
            head = head[: forms[-1].end() + after.index(",")]
    return head.strip(" ,;/")


def seat_of(text: str, seat_column: str = "") -> str | None:
    """An organisation's seat: named as its seat in the cell ("mit dem Sitz in …"), else the place
    its seat column prints (after any street and postal code), else a place after a comma and
    before a bracket, a comma or lower-case words; with the
    country printed after it ("Cork, Irland")."""
    match = SEAT.search(text) or _POSTAL_PLACE.search(seat_column) or _BARE_PLACE.match(seat_column)
    if match is None:
        # "Beispiel gGmbH, Bremen (…", "…, Bremen, mit einer Stammeinlage von"
        match = re.search(rf",\s*(?P<place>{_PLACE})(?:\s*(?:\(|$|,)|\s+(?=[a-zäöü]))", text)
        if match is None or _COUNTRY.fullmatch(match.group("place")):
            return None
    separator = re.compile(r"\s*[,/]\s*").match(match.string, match.end("place"))
    country = _COUNTRY.match(match.string, separator.end()) if separator else None
    return f"{match.group('place')}, {country.group(0)}" if country else match.group("place")


def country_in(text: str) -> str | None:
    """The ISO code of the last country the cell names ("Sitz: Paris, Frankreich")."""
    found = list(_COUNTRY.finditer(text))
    return found[-1].lastgroup if found else None


def register_of(text: str) -> dict:
    """Register court, type, number and country; a foreign register by its court or authority,
    number and country (named in the cell, else the one its authority implies)."""
    match = REGISTER.search(text)
    if match:
        court_after = _COURT_AFTER.match(text, match.end())
        return {
            "register_court": match.group("court") or (court_after.group("court") if court_after else None),
            "register_type": match.group("type"),
            "register_number": re.sub(r"\.", "", match.group("number")).strip(),
            "register_country": "DE",
        }
    authority = _AUTHORITY.search(text)
    labelled = _LABELLED_REGISTER.search(text)
    if labelled is not None:
        court = labelled.group("court")
    elif authority is not None:
        court = authority.group(0)
    else:
        return {}
    # Each alternative of _AUTHORITY is one group a<i>: a match names the authority it found.
    implied = _FOREIGN_AUTHORITIES[int(authority.lastgroup[1:])][1] if authority and authority.lastgroup else None
    number = _REGISTER_NUMBER.search(text[labelled.end() :] if labelled else text) or _REGISTER_NUMBER.search(text)
    return {
        "register_court": re.sub(r"\s+", " ", court).strip(" .,"),
        "register_type": None,
        "register_number": _number_value(number) if number else None,
        "register_country": country_in(text) or implied,
    }


def _number_value(match: re.Match) -> str:
    value = next(group for group in match.groups() if group)
    return re.sub(r"\s+", "", value).strip(".-/")
