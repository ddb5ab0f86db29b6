"""Label tables for the XJustiz code lists the record uses: legal forms, roles, courts.

XJustiz documents carry codes; their labels appear at most as XML comments. The tables here
turn every generation's way of naming a thing into one canonical value:

- legal forms: GDS.Rechtsform codes (3.x up to 3.4), XUnternehmen numeric codes (3.5+) and
  the spelled-out labels of 1.x all map to one code set (``LEGAL_FORMS``);
- roles: GDS.Rollenbezeichnung codes, and the 1.x labels that name the same roles;
- courts: GDS.Gerichte codes of the Amtsgerichte (``data/courts.tsv``).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

# Canonical legal form code -> label. The one code set of the record for all generations.
LEGAL_FORMS: dict[str, str] = {
    "e.K.": "Eingetragene(r) Kaufmann/Kauffrau",
    "OHG": "Offene Handelsgesellschaft",
    "KG": "Kommanditgesellschaft",
    "GmbH & Co. KG": "GmbH & Co. Kommanditgesellschaft",
    "UG & Co. KG": "UG (haftungsbeschränkt) & Co. Kommanditgesellschaft",
    "AG & Co. KG": "AG & Co. Kommanditgesellschaft",
    "SE & Co. KG": "SE & Co. Kommanditgesellschaft",
    "Stiftung & Co. KG": "Stiftung & Co. Kommanditgesellschaft",
    "GmbH & Co. OHG": "GmbH & Co. Offene Handelsgesellschaft",
    "AG & Co. OHG": "AG & Co. Offene Handelsgesellschaft",
    "GmbH": "Gesellschaft mit beschränkter Haftung",
    "UG": "Unternehmergesellschaft (haftungsbeschränkt)",
    "AG": "Aktiengesellschaft",
    "SE": "Europäische Gesellschaft (Societas Europaea)",
    "KGaA": "Kommanditgesellschaft auf Aktien",
    "GmbH & Co. KGaA": "GmbH & Co. Kommanditgesellschaft auf Aktien",
    "eG": "Eingetragene Genossenschaft",
    "SCE": "Europäische Genossenschaft",
    "e.V.": "Eingetragener Verein",
    "PartG": "Partnerschaftsgesellschaft",
    "PartG mbB": "Partnerschaftsgesellschaft mit beschränkter Berufshaftung",
    "EWIV": "Europäische wirtschaftliche Interessenvereinigung",
    "VVaG": "Versicherungsverein auf Gegenseitigkeit",
    "eGbR": "Eingetragene Gesellschaft bürgerlichen Rechts",
    "Stiftung": "Stiftung",
    "jP": "Juristische Person",
    "AöR": "Anstalt des öffentlichen Rechts",
    "KöR": "Körperschaft des öffentlichen Rechts",
    "ausl. Rechtsform": "Rechtsform ausländischen Rechts",
}

# GDS.Rechtsform codes (XJustiz up to 3.4) that differ from the canonical code.
_GDS_LEGAL_FORMS: dict[str, str] = {
    "eK": "e.K.",
    "GmbH+Co KG": "GmbH & Co. KG",
    "AG+Co KG": "AG & Co. KG",
    "St+Co KG": "Stiftung & Co. KG",
    "GmbH+Co OHG": "GmbH & Co. OHG",
    "AG+Co OHG": "AG & Co. OHG",
    "UG (haftungsbeschränkt)": "UG",
    "S.E.": "SE",
    "PartGmbB": "PartG mbB",
    "St": "Stiftung",
    "JPpR": "jP",
}
# The GDS code each canonical form is written with (canonical codes not listed are GDS codes).
GDS_CODE_BY_LEGAL_FORM: dict[str, str] = {canonical: code for code, canonical in _GDS_LEGAL_FORMS.items()}
# Read, never written: a gemeinnützige GmbH is a GmbH.
_GDS_LEGAL_FORMS["gGmbH"] = "GmbH"

# XUnternehmen code list "rechtsformen" (XJustiz 3.5+), by numeric code.
_XUNTERNEHMEN_LEGAL_FORMS: dict[str, str] = {
    "111100": "OHG",
    "111211": "GmbH & Co. OHG",
    "111221": "AG & Co. OHG",
    "112100": "KG",
    "112211": "GmbH & Co. KG",
    "112212": "UG & Co. KG",
    "112221": "AG & Co. KG",
    "112222": "SE & Co. KG",
    "112500": "Stiftung & Co. KG",
    "113000": "EWIV",
    "123000": "eGbR",
    "131000": "PartG",
    "211000": "e.V.",
    "213100": "VVaG",
    "221110": "GmbH",
    "221120": "GmbH",
    "221200": "UG",
    "222110": "AG",
    "222200": "SE",
    "223100": "KGaA",
    "223211": "GmbH & Co. KGaA",
}
# The code each canonical form is written with in 3.5+ (first code wins, so gGmbH stays GmbH).
XUNTERNEHMEN_CODE_BY_LEGAL_FORM: dict[str, str] = {}
for _numeric, _canonical in _XUNTERNEHMEN_LEGAL_FORMS.items():
    XUNTERNEHMEN_CODE_BY_LEGAL_FORM.setdefault(_canonical, _numeric)

# 1.x names the legal form in words (WL_Rechtsform_Register); keys are lower case.
_LEGACY_LEGAL_FORM_LABELS: dict[str, str] = {
    "einzelkaufmann": "e.K.",
    "einzelkauffrau": "e.K.",
    "eingetragener kaufmann": "e.K.",
    "eingetragene kauffrau": "e.K.",
    "offene handelsgesellschaft": "OHG",
    "kommanditgesellschaft": "KG",
    "gesellschaft mit beschränkter haftung": "GmbH",
    "unternehmergesellschaft (haftungsbeschränkt)": "UG",
    "aktiengesellschaft": "AG",
    "europäische aktiengesellschaft (se)": "SE",
    "europäische gesellschaft": "SE",
    "kommanditgesellschaft auf aktien": "KGaA",
    "eingetragene genossenschaft": "eG",
    "europäische genossenschaft": "SCE",
    "eingetragener verein": "e.V.",
    "partnerschaft": "PartG",
    "partnerschaftsgesellschaft": "PartG",
    "europäische wirtschaftliche interessenvereinigung": "EWIV",
    "versicherungsverein auf gegenseitigkeit": "VVaG",
    "stiftung": "Stiftung",
    "stiftung privaten rechts": "Stiftung",
    "hra juristische person": "jP",
    "anstalt öffentlichen rechts": "AöR",
    "körperschaft öffentlichen rechts": "KöR",
    # Seen in real 1.x files: a foreign company's branch, named with the register it is kept in.
    "rechtsform ausländischen rechts hrb": "ausl. Rechtsform",
    "rechtsform ausländischen rechts hra": "ausl. Rechtsform",
}
# Canonical labels read back to their code, so a 1.x document written from a record parses back.
_LEGACY_LEGAL_FORM_LABELS.update({label.lower(): code for code, label in LEGAL_FORMS.items()})


def legal_form_from_code(code: str) -> str | None:
    """The canonical legal form of a 3.x code (GDS.Rechtsform or XUnternehmen), None if unknown."""
    if code in LEGAL_FORMS:
        return code
    return _GDS_LEGAL_FORMS.get(code) or _XUNTERNEHMEN_LEGAL_FORMS.get(code)


def legal_form_from_label(label: str) -> str | None:
    """The canonical legal form of a 1.x label, None if unknown."""
    return _LEGACY_LEGAL_FORM_LABELS.get(" ".join(label.split()).lower())


# GDS.Rollenbezeichnung: the roles a register extract uses.
ROLES: dict[str, str] = {
    "041": "Bevollmächtigte(r)",
    "085": "Geschäftsführende(r) Gesellschafter(in)",
    "086": "Geschäftsführer(in)",
    "088": "Gesetzliche(r) Vertreter(in)",
    "096": "Insolvenzverwalter(in)",
    "107": "Liquidator(in)",
    "113": "Nachlasspfleger(in)",
    "152": "Sonstige(r) Vertreter(in)",
    "162": "Testamentsvollstrecker(in)",
    "194": "Vorstand",
    "208": "Notar(in)",
    "215": "Einreicher(in)",
    "225": "Vertretungsberechtigte(r)",
    "246": "Gesellschafter(in)",
    "247": "Handlungsbevollmächtigte(r)",
    "251": "Partner(in)",
    "252": "Persönlich haftende(r) Gesellschafter(in)",
    "257": "Vorläufige(r) Insolvenzverwalter(in)",
    "262": "Abwickler(in)",
    "263": "Übernehmender Rechtsträger",
    "264": "Aufsichtsrat (-rätin)",
    "265": "Besondere(r) Vertreter(in) nach § 30 BGB",
    "268": "Geschäftsführende(r) Direktor(in)",
    "269": "Geschäftsleiter(in)",
    "271": "Gründer(in)",
    "273": "Hauptniederlassung",
    "274": "Inhaber(in)",
    "275": "Kommanditist(in)",
    "277": "Mitglied des Leitungsorgans",
    "278": "Mitglied EWIV",
    "280": "Nachtragsabwickler(in)",
    "281": "Nachtragsliquidator(in)",
    "282": "Notgeschäftsführer(in)",
    "283": "Notliquidator(in)",
    "284": "Notvorstand",
    "285": "Prokurist(in)",
    "287": "Rechtsträger(in)",
    "288": "Registergericht",
    "290": "Ständige(r) Vertreter(in) für die Zweigniederlassung",
    "291": "Übertragender Rechtsträger",
    "293": "Verwaltungsrat (-rätin)",
    "294": "Vorstandsvorsitzende(r)",
    "295": "Zweigniederlassung",
    "315": "Aufsichtsratsvorsitzende(r)",
    "328": "Sonstige(r) organschaftliche(r) Vertreter(in) HRB",
    "332": "Vertreter(in) des persönlich haftenden Gesellschafters",
    "335": "Mitglied VR",
}
COMPANY_ROLE = "287"
COURT_ROLE = "288"
# Participants of the filing rather than of the company: the company itself, the court, the
# filer (in RegisSTAR files the court again) and the notary who filed.
NON_OFFICER_ROLES = frozenset({COMPANY_ROLE, COURT_ROLE, "215", "208"})

# 1.x labels that differ from the 3.x label of the same role; keys are lower case.
_LEGACY_ROLE_LABELS: dict[str, str] = {
    "rechtsträger": COMPANY_ROLE,
    "geschäftsführer": "086",
    "prokurist": "285",
    "liquidator": "107",
    "kommanditist": "275",
    "persönlich haftender gesellschafter": "252",
    "inhaber": "274",
    "partner": "251",
    "vorstandsmitglied": "194",
    "vorstandsvorsitzender": "294",
    # Seen in real 1.x files; the codes whose GDS.Rollenbezeichnung label names the same role.
    "abwickler": "262",
    "ständiger vertreter": "290",
    "geschäftsführender direktor": "268",
    "sonstiger vertreter": "152",
}
_LEGACY_ROLE_LABELS.update({label.lower(): code for code, label in ROLES.items()})


def role_code_from_label(label: str) -> str | None:
    """The role code of a 1.x role label, None if unknown."""
    return _LEGACY_ROLE_LABELS.get(" ".join(label.split()).lower())


@lru_cache(maxsize=1)
def courts() -> dict[str, str]:
    """Register court code -> court name ("Amtsgericht München")."""
    text = resources.files(__package__).joinpath("data/courts.tsv").read_text(encoding="utf-8")
    rows = (line.split("\t") for line in text.splitlines() if line and not line.startswith("#"))
    return {code: name for code, name in rows}


# REG.Eintragungstyp: what kind of register entry a text is (1.x gives the label itself).
ENTRY_KINDS: dict[str, str] = {
    "004": "Freitext",
    "009": "Satzung",
    "011": "Sonstige Rechtsverhältnisse",
}

# Country codes of the BfJ list (XJustiz 3.5+) that the register uses, as ISO 3166 alpha-2.
BFJ_COUNTRIES: dict[str, str] = {"000": "DE"}
