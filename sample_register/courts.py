"""Register courts as the portal shows them: XJustiz code, display name and federal state."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from orchestration.xjustiz.codes import courts as xjustiz_courts

# The first letter of an XJustiz court code names the federal state.
STATES = {
    "B": ("BW", "Baden-Württemberg"),
    "D": ("BY", "Bavaria"),
    "F": ("BE", "Berlin"),
    "G": ("BB", "Brandenburg"),
    "H": ("HB", "Bremen"),
    "K": ("HH", "Hamburg"),
    "M": ("HE", "Hesse"),
    "N": ("MV", "Mecklenburg-Western Pomerania"),
    "P": ("NI", "Lower Saxony"),
    "R": ("NW", "North Rhine-Westphalia"),
    "T": ("RP", "Rhineland-Palatinate"),
    "U": ("SN", "Saxony"),
    "V": ("SL", "Saarland"),
    "W": ("ST", "Saxony-Anhalt"),
    "X": ("SH", "Schleswig-Holstein"),
    "Y": ("TH", "Thuringia"),
}

# Where the portal's name differs from the code list's: Berlin keeps its register at Charlottenburg.
_DISPLAY_NAMES = {"F1103": "Berlin (Charlottenburg)", "M1201": "Frankfurt am Main"}


@dataclass(frozen=True)
class Court:
    code: str  # five characters, e.g. "D2601"; SI documents may append a department letter
    name: str  # as the portal shows it, e.g. "München"
    state: str
    state_abbreviation: str

    @property
    def seat(self) -> str:
        """The city of the court, used as the seat of generated companies."""
        return self.name.split(" (")[0] if self.code in _DISPLAY_NAMES else self.name.split(" Zweigstelle")[0]


def base_code(code: str) -> str:
    """``D2601V`` → ``D2601``: the court without the department letter."""
    return code.strip()[:5]


@cache
def court(code: str) -> Court:
    code = base_code(code)
    names = xjustiz_courts()
    if code not in names or code[0] not in STATES:
        raise KeyError(f"unknown register court {code!r}")
    abbreviation, state = STATES[code[0]]
    name = _DISPLAY_NAMES.get(code, names[code].removeprefix("Amtsgericht ").strip())
    return Court(code=code, name=name, state=state, state_abbreviation=abbreviation)
