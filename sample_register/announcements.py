"""Register announcements (Registerbekanntmachungen) of the sample register.

Each company may have announcements in the weeks before the server started, drawn from its
seed; a document filed while the server runs adds one of category 3. Categories and their
labels are the portal's (values of ``bekanntMachungenForm:kategorie_input``).
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from datetime import date, timedelta

from orchestration.register.results import ANNOUNCEMENT_CATEGORIES
from sample_register.company import Company

CATEGORIES = ANNOUNCEMENT_CATEGORIES  # the portal's values and labels
# Values of bekanntMachungenForm:land_input, as the portal has them (Brandenburg is "BR").
STATES = {
    "BW": "Baden-Württemberg",
    "BY": "Bayern",
    "BE": "Berlin",
    "BR": "Brandenburg",
    "HB": "Bremen",
    "HH": "Hamburg",
    "HE": "Hessen",
    "MV": "Mecklenburg-Vorpommern",
    "NI": "Niedersachsen",
    "NW": "Nordrhein-Westfalen",
    "RP": "Rheinland-Pfalz",
    "SL": "Saarland",
    "SN": "Sachsen",
    "ST": "Sachsen-Anhalt",
    "SH": "Schleswig-Holstein",
    "TH": "Thüringen",
}
# The courts' state abbreviations (sample_register.courts) that differ from the form's.
_FORM_STATE = {"BB": "BR"}
# How far back the announcements of the corpus reach, and how many companies have one.
HISTORY_DAYS = 60
SHARE_WITH_ANNOUNCEMENT = 0.3
FIRST_ID = 160_000

_TEXTS = {
    "1": "Bei der nachstehenden Gesellschaft wird das Amtslöschungsverfahren gemäß § 394 FamFG eingeleitet. "
    "Widerspruchsfrist 6 Wochen",
    "2": "Den Gläubigern der an der Verschmelzung beteiligten Rechtsträger ist, wenn sie binnen sechs Monaten "
    "ihren Anspruch nach Grund und Höhe in Textform anmelden, Sicherheit zu leisten, soweit sie nicht "
    "Befriedigung verlangen können.",
    "3": "Neue Dokumente wurden in den Registerordner aufgenommen: {document}",
    "4": "Sonstige Bekanntmachung des Registergerichts.",
}
_LEGAL_FORMS = {
    "GmbH": "Gesellschaft mit beschränkter Haftung",
    "UG": "Gesellschaft mit beschränkter Haftung",
    "AG": "Aktiengesellschaft",
    "GmbH & Co. KG": "Kommanditgesellschaft",
    "KG": "Kommanditgesellschaft",
    "OHG": "Offene Handelsgesellschaft",
    "e.K.": "Eingetragener Kaufmann",
    "eG": "Eingetragene Genossenschaft",
    "e.V.": "Eingetragener Verein",
    "PartG mbB": "Partnerschaftsgesellschaft",
}


def form_state(company: Company) -> str:
    return _FORM_STATE.get(company.court.state_abbreviation, company.court.state_abbreviation)


@dataclass(frozen=True)
class Announcement:
    id: str
    published: date
    category: str  # "1" … "5"
    company: Company
    text: str
    entered: date | None = None  # Eintragungsdatum; Löschungsankündigungen have none

    @property
    def category_label(self) -> str:
        return CATEGORIES[self.category]

    @property
    def court_line(self) -> str:
        """ "Bayern Amtsgericht München HRB 242458" """
        return f"{STATES[form_state(self.company)]} Amtsgericht {self.company.court.name} {self.company.designation}"


class Announcements:
    """Every announcement the sample register serves, newest first."""

    def __init__(self, companies: list[Company], today: date) -> None:
        self._ids = itertools.count(FIRST_ID)
        self.items: list[Announcement] = []
        for company in companies:
            rng = random.Random((company.seed or 0) ^ 0xB3C)
            if rng.random() >= SHARE_WITH_ANNOUNCEMENT:
                continue
            category = rng.choices(("1", "2", "3", "4"), weights=(2, 2, 6, 1))[0]
            published = today - timedelta(days=rng.randint(1, HISTORY_DAYS))
            text = _TEXTS[category].format(document="Liste der Gesellschafter")
            entered = None if category == "1" else published - timedelta(days=1)
            self.items.append(Announcement(str(next(self._ids)), published, category, company, text, entered))
        self.items.sort(key=lambda a: (a.published, a.id), reverse=True)

    def add_new_document(self, company: Company, document_label: str, day: date) -> Announcement:
        announcement = Announcement(
            str(next(self._ids)), day, "3", company, _TEXTS["3"].format(document=document_label), day
        )
        self.items.insert(0, announcement)
        self.items.sort(key=lambda a: (a.published, a.id), reverse=True)
        return announcement

    def get(self, announcement_id: str) -> Announcement | None:
        return next((a for a in self.items if a.id == announcement_id), None)

    def search(
        self,
        *,
        date_from: date,
        date_to: date,
        state: str = "",
        court_code: str = "",
        seat: str = "",
        category: str = "",
    ) -> list[Announcement]:
        return [
            a
            for a in self.items
            if date_from <= a.published <= date_to
            and (not state or form_state(a.company) == state)
            and (not court_code or a.company.court.code == court_code)
            and (not seat or seat.casefold() in a.company.seat.casefold())
            and (not category or a.category == category)
        ]


def legal_form_text(company: Company) -> str:
    return _LEGAL_FORMS.get(company.legal_form, company.legal_form)
