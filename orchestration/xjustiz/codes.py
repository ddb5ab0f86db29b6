"""Label tables for the XJustiz code lists the record uses: legal forms, roles, courts.

XJustiz documents carry codes; their labels appear at most as XML comments. The tables here
turn every generation's way of naming a thing into one canonical value:

- legal forms: GDS.Rechtsform codes (3.x up to 3.4), XUnternehmen numeric codes (3.5+) and
  the spelled-out labels of 1.x all map to one code set (``LEGAL_FORMS``);
- roles: GDS.Rollenbezeichnung codes, and the 1.x labels that name the same roles;
- courts: GDS.Gerichte codes of the Amtsgerichte.

The code lists themselves are data: one ``data/*.tsv`` file each, read once.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources


def _code_list(name: str) -> dict[str, str]:
    """A two-column code list of ``data/``, in file order; ``#`` lines are comments."""
    text = resources.files(__package__).joinpath(f"data/{name}.tsv").read_text(encoding="utf-8")
    rows = (line.split("\t") for line in text.splitlines() if line and not line.startswith("#"))
    return {key: value for key, value in rows}


# Canonical legal form code -> label. The one code set of the record for all generations.
LEGAL_FORMS = _code_list("legal_forms")

# GDS.Rechtsform codes (XJustiz up to 3.4) that differ from the canonical code.
_GDS_LEGAL_FORMS = _code_list("gds_legal_forms")
# The GDS code each canonical form is written with (canonical codes not listed are GDS codes).
GDS_CODE_BY_LEGAL_FORM: dict[str, str] = {canonical: code for code, canonical in _GDS_LEGAL_FORMS.items()}
# Read, never written: a gemeinnützige GmbH is a GmbH.
_GDS_LEGAL_FORMS["gGmbH"] = "GmbH"

# XUnternehmen code list "rechtsformen" (XJustiz 3.5+), by numeric code.
_XUNTERNEHMEN_LEGAL_FORMS = _code_list("xunternehmen_legal_forms")
# The code each canonical form is written with in 3.5+ (first code wins, so gGmbH stays GmbH).
XUNTERNEHMEN_CODE_BY_LEGAL_FORM: dict[str, str] = {}
for _numeric, _canonical in _XUNTERNEHMEN_LEGAL_FORMS.items():
    XUNTERNEHMEN_CODE_BY_LEGAL_FORM.setdefault(_canonical, _numeric)

# 1.x names the legal form in words (WL_Rechtsform_Register); keys are lower case.
_LEGACY_LEGAL_FORM_LABELS = _code_list("legacy_legal_forms")
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
ROLES = _code_list("roles")
COMPANY_ROLE = "287"
COURT_ROLE = "288"
# Participants of the filing rather than of the company: the company itself, the court, the
# filer (in RegisSTAR files the court again) and the notary who filed.
NON_OFFICER_ROLES = frozenset({COMPANY_ROLE, COURT_ROLE, "215", "208"})

# 1.x labels that differ from the 3.x label of the same role; keys are lower case.
_LEGACY_ROLE_LABELS = _code_list("legacy_roles")
_LEGACY_ROLE_LABELS.update({label.lower(): code for code, label in ROLES.items()})


def role_code_from_label(label: str) -> str | None:
    """The role code of a 1.x role label, None if unknown."""
    return _LEGACY_ROLE_LABELS.get(" ".join(label.split()).lower())


@lru_cache(maxsize=1)
def courts() -> dict[str, str]:
    """Register court code -> court name ("Amtsgericht München")."""
    return _code_list("courts")


# REG.Eintragungstyp: what kind of register entry a text is (1.x gives the label itself).
ENTRY_KINDS = _code_list("entry_kinds")

# Country codes of the BfJ list (XJustiz 3.5+) that the register uses, as ISO 3166 alpha-2.
BFJ_COUNTRIES: dict[str, str] = {"000": "DE"}
