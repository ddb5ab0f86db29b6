"""Generated companies of the sample register: realistic names, courts, register numbers, legal
forms, officers and capital, all drawn from one seed.

`generate_companies` builds the index (cheap); `company_record` draws a company's full record
from its own seed when its SI document is requested.
"""

from __future__ import annotations

import random
from collections.abc import Set
from datetime import date, timedelta
from decimal import Decimal

from faker.providers.address.de_DE import Provider as _AddressProvider
from faker.providers.person.de_DE import Provider as _PersonProvider

from orchestration.xjustiz import PARSER_VERSION, Address, CompanyRecord, LegalForm, Money, Officer, Register, Source
from orchestration.xjustiz.codes import LEGAL_FORMS, ROLES
from orchestration.xjustiz.codes import courts as xjustiz_courts
from sample_register.company import Company
from sample_register.courts import Court, court

LAST_NAMES = tuple(_PersonProvider.last_names)
FIRST_NAMES_MALE = tuple(_PersonProvider.first_names_male)
FIRST_NAMES_FEMALE = tuple(_PersonProvider.first_names_female)
CITIES = tuple(_AddressProvider.cities)
STREET_SUFFIXES = ("straße", "weg", "allee", "ring", "platz", "gasse")

# Register courts with many companies weigh more. (code, weight)
COURT_WEIGHTS = (
    ("F1103", 14),
    ("D2601", 12),
    ("K1101", 10),
    ("M1201", 7),
    ("R3306", 7),
    ("R1101", 6),
    ("B8534", 6),
    ("P2305", 5),
    ("U1308", 4),
    ("H1101", 3),
    ("R3101", 2),
    ("R2103", 1),
    ("R2307", 1),
    ("D3101", 1),
    ("P2716", 1),
)
# Courts that write a letter after the number: "HRB 248040 B" (Berlin), "HRB 25052 HB" (Bremen).
REGISTER_SUFFIXES = {"F1103": "B", "H1101": "HB"}

# (legal form, register type, weight)
LEGAL_FORM_WEIGHTS = (
    ("GmbH", "HRB", 52),
    ("UG", "HRB", 8),
    ("AG", "HRB", 4),
    ("GmbH & Co. KG", "HRA", 12),
    ("KG", "HRA", 4),
    ("OHG", "HRA", 2),
    ("e.K.", "HRA", 6),
    ("eG", "GnR", 3),
    ("e.V.", "VR", 6),
    ("PartG mbB", "PR", 3),
)
NAME_ENDINGS = {
    "GmbH": "GmbH",
    "UG": "UG (haftungsbeschränkt)",
    "AG": "AG",
    "GmbH & Co. KG": "GmbH & Co. KG",
    "KG": "KG",
    "OHG": "OHG",
    "e.K.": "e.K.",
    "eG": "eG",
    "e.V.": "e.V.",
    "PartG mbB": "PartG mbB",
}
NUMBER_RANGES = {
    "HRB": (1000, 299_999),
    "HRA": (100, 125_000),
    "GnR": (1, 1_800),
    "VR": (100, 40_000),
    "PR": (100, 3_500),
}
SI_VERSIONS = (("3.3.1", 55), ("3.5.1", 30), ("1.x", 15))

# Line of business -> object of the company, as the register states it.
INDUSTRIES = {
    "Immobilien": "der Erwerb, die Verwaltung und die Vermietung von Immobilien",
    "Logistik": "die Erbringung von Logistik-, Lager- und Transportdienstleistungen",
    "Haustechnik": "die Planung und Ausführung von Heizungs-, Sanitär- und Lüftungsanlagen",
    "Software": "die Entwicklung und der Vertrieb von Software sowie damit verbundene Dienstleistungen",
    "Consulting": "die Beratung von Unternehmen in wirtschaftlichen und organisatorischen Fragen",
    "Bau": "die Ausführung von Hoch- und Tiefbauarbeiten aller Art",
    "Elektrotechnik": "die Ausführung von Elektroinstallationen und der Handel mit Elektrobedarf",
    "Handel": "der Groß- und Einzelhandel mit Waren aller Art, soweit nicht erlaubnispflichtig",
    "Medizintechnik": "die Entwicklung, Herstellung und der Vertrieb medizintechnischer Produkte",
    "Energie": "die Planung, Errichtung und der Betrieb von Anlagen zur Erzeugung erneuerbarer Energien",
    "Gastronomie": "der Betrieb von Gaststätten sowie Catering",
    "Metallbau": "die Herstellung und Montage von Stahl- und Metallkonstruktionen",
    "Maschinenbau": "die Konstruktion, die Herstellung und der Vertrieb von Maschinen und Anlagen",
    "Personalservice": "die Arbeitnehmerüberlassung und die Vermittlung von Personal",
    "Beteiligungs": "der Erwerb, das Halten und die Verwaltung von Beteiligungen an anderen Unternehmen",
    "Digital": "die Erbringung von Dienstleistungen im Bereich digitaler Medien und des Online-Marketings",
    "Reisen": "die Vermittlung und Veranstaltung von Reisen",
    "Pflegedienst": "die ambulante Alten- und Krankenpflege",
    "Dentaltechnik": "die Herstellung von Zahnersatz",
    "Solar": "die Planung und Installation von Photovoltaikanlagen",
    "Werbetechnik": "die Herstellung von Werbeanlagen und Beschriftungen",
    "Autohaus": "der Handel mit Kraftfahrzeugen und deren Reparatur",
}
FANTASY_PREFIXES = (
    "Nord",
    "Süd",
    "West",
    "Ost",
    "Alpen",
    "Rhein",
    "Elb",
    "Main",
    "Isar",
    "Hanse",
    "Spree",
    "Donau",
    "Taunus",
    "Harz",
    "Weser",
    "Mosel",
    "Ruhr",
    "Neckar",
    "Stern",
    "Sonnen",
)
FANTASY_ROOTS = (
    "licht",
    "blick",
    "werk",
    "tec",
    "kraft",
    "feld",
    "haus",
    "data",
    "net",
    "quelle",
    "brücke",
    "hafen",
    "wind",
    "stein",
    "bogen",
)
COOPERATIVES = (
    "Wohnungsbaugenossenschaft",
    "Raiffeisenbank",
    "Volksbank",
    "Energiegenossenschaft",
    "Einkaufsgenossenschaft",
)
ASSOCIATIONS = (
    "Sportverein",
    "Förderverein",
    "Turnverein",
    "Kulturverein",
    "Heimatverein",
    "Schützenverein",
    "Musikverein",
)
PROFESSIONS = ("Rechtsanwälte", "Steuerberater", "Architekten", "Wirtschaftsprüfer", "Ingenieure")

GMBH_CAPITAL = (
    (25_000, 60),
    (50_000, 10),
    (100_000, 8),
    (30_000, 5),
    (26_000, 3),
    (250_000, 4),
    (500_000, 3),
    (1_000_000, 2),
    (Decimal("25564.59"), 3),
    (Decimal("51129.19"), 2),
)
UG_CAPITAL = ((1, 5), (100, 10), (500, 20), (1_000, 30), (1_500, 10), (2_500, 15), (5_000, 10))
AG_CAPITAL = ((50_000, 30), (100_000, 30), (500_000, 20), (1_000_000, 15), (5_000_000, 5))

GENERAL_REPRESENTATION = {
    "GmbH": "Ist nur ein Geschäftsführer bestellt, so vertritt er die Gesellschaft allein. Sind mehrere "
    "Geschäftsführer bestellt, so wird die Gesellschaft durch zwei Geschäftsführer oder durch einen "
    "Geschäftsführer gemeinsam mit einem Prokuristen vertreten.",
    "AG": "Ist nur ein Vorstandsmitglied bestellt, so vertritt es die Gesellschaft allein. Sind mehrere "
    "Vorstandsmitglieder bestellt, so wird die Gesellschaft durch zwei Vorstandsmitglieder oder durch ein "
    "Vorstandsmitglied gemeinsam mit einem Prokuristen vertreten.",
    "KG": "Jeder persönlich haftende Gesellschafter vertritt die Gesellschaft allein.",
    "e.K.": "Der Inhaber vertritt allein.",
    "eG": "Die Genossenschaft wird durch zwei Vorstandsmitglieder gemeinsam vertreten.",
    "e.V.": "Der Verein wird durch zwei Mitglieder des Vorstands gemeinsam vertreten.",
    "PartG mbB": "Jeder Partner vertritt die Partnerschaft allein.",
}
GENERAL_REPRESENTATION.update(
    {
        "UG": GENERAL_REPRESENTATION["GmbH"],
        "GmbH & Co. KG": GENERAL_REPRESENTATION["KG"],
        "OHG": GENERAL_REPRESENTATION["KG"],
    }
)


def _weighted(rng: random.Random, choices):
    values, weights = zip(*choices, strict=True)
    return rng.choices(values, weights=weights)[0]


def _person_name(rng: random.Random) -> tuple[str, str]:
    first = rng.choice(FIRST_NAMES_MALE if rng.random() < 0.6 else FIRST_NAMES_FEMALE)
    return first, rng.choice(LAST_NAMES)


def _company_name(rng: random.Random, legal_form: str, seat: str) -> str:
    ending = NAME_ENDINGS[legal_form]
    if legal_form == "e.K.":
        first, last = _person_name(rng)
        return rng.choice((f"{first} {last} {ending}", f"{last} {rng.choice(list(INDUSTRIES))} {ending}"))
    if legal_form == "eG":
        return f"{rng.choice(COOPERATIVES)} {seat} {ending}"
    if legal_form == "e.V.":
        return f"{rng.choice(ASSOCIATIONS)} {seat} {rng.randint(1860, 2015)} {ending}"
    if legal_form == "PartG mbB":
        return f"{rng.choice(LAST_NAMES)} & {rng.choice(LAST_NAMES)} {rng.choice(PROFESSIONS)} {ending}"
    industry = rng.choice(list(INDUSTRIES))
    fantasy = rng.choice(FANTASY_PREFIXES) + rng.choice(FANTASY_ROOTS)
    base = rng.choice(
        (
            f"{rng.choice(LAST_NAMES)} {industry}",
            f"{fantasy} {industry}",
            f"{rng.choice(LAST_NAMES)} & {rng.choice(LAST_NAMES)}",
            fantasy,
            f"{industry} {seat}",
        )
    )
    return f"{base} {ending}"


def generate_companies(seed: int, count: int, *, taken: Set[tuple[str, str, str]] = frozenset()) -> list[Company]:
    """``count`` companies, the same for the same seed; register keys in ``taken`` are avoided."""
    rng = random.Random(seed)
    courts = [(court(code), weight) for code, weight in COURT_WEIGHTS]
    keys = set(taken)
    names: set[str] = set()
    companies: list[Company] = []
    while len(companies) < count:
        register_court: Court = _weighted(rng, courts)
        legal_form, register_type = _weighted(rng, [((f, t), w) for f, t, w in LEGAL_FORM_WEIGHTS])
        number = str(rng.randint(*NUMBER_RANGES[register_type]))
        name = _company_name(rng, legal_form, register_court.seat)
        key = (register_court.code, register_type, number)
        if key in keys or name in names:
            continue
        keys.add(key)
        names.add(name)
        earlier: tuple[tuple[str, str], ...] = ()
        if rng.random() < 0.1:
            earlier = tuple(
                (
                    _company_name(rng, legal_form, register_court.seat),
                    rng.choice((register_court.seat, rng.choice(CITIES))),
                )
                for _ in range(rng.choice((1, 1, 2)))
            )
        capital = None
        if legal_form == "GmbH":
            capital = Decimal(_weighted(rng, GMBH_CAPITAL))
        elif legal_form == "UG":
            capital = Decimal(_weighted(rng, UG_CAPITAL))
        elif legal_form == "AG":
            capital = Decimal(_weighted(rng, AG_CAPITAL))
        companies.append(
            Company(
                court=register_court,
                register_type=register_type,
                register_number=number,
                register_suffix=REGISTER_SUFFIXES.get(register_court.code),
                name=name,
                seat=register_court.seat,
                legal_form=legal_form,
                capital=capital,
                deleted=rng.random() < 0.05,
                earlier_names=earlier,
                seed=rng.getrandbits(48),
                si_version=_weighted(rng, SI_VERSIONS),
            )
        )
    return companies


# ----------------------------------------------------------------------------- full records


def _birth_date(rng: random.Random) -> str:
    return (date(1950, 1, 1) + timedelta(days=rng.randint(0, 50 * 365))).isoformat()


def _person(rng: random.Random, role_code: str, seat: str, **extra) -> Officer:
    first, last = _person_name(rng)
    return Officer(
        role_code=role_code,
        role=ROLES[role_code],
        kind="person",
        name=f"{first} {last}",
        first_name=first,
        last_name=last,
        birth_date=_birth_date(rng),
        city=seat if rng.random() < 0.6 else rng.choice(CITIES),
        **extra,
    )


def _officers(rng: random.Random, company: Company) -> list[Officer]:
    form, seat = company.legal_form, company.seat
    if form in ("GmbH", "UG"):
        managers = [_person(rng, "086", seat) for _ in range(rng.choice((1, 1, 1, 2, 2, 3)))]
        if len(managers) == 1 and rng.random() < 0.5:
            managers[0] = managers[0].model_copy(
                update={"representation": "einzelvertretungsberechtigt", "exempt_181": True}
            )
        return managers + [_person(rng, "285", seat) for _ in range(rng.choice((0, 0, 0, 1, 2)))]
    if form in ("AG", "eG", "e.V."):
        return [_person(rng, "194", seat) for _ in range(rng.randint(2, 4))]
    if form in ("GmbH & Co. KG", "KG"):
        if form == "GmbH & Co. KG":
            base = company.name.removesuffix(" GmbH & Co. KG")
            general = Officer(
                role_code="252", role=ROLES["252"], kind="organisation", name=f"{base} Verwaltungs GmbH", city=seat
            )
        else:
            general = _person(rng, "252", seat)
        limited = [
            _person(
                rng,
                "275",
                seat,
                liability_amount=Money(amount=f"{rng.choice((1000, 5000, 10000, 25000, 100000))}.00", currency="EUR"),
            )
            for _ in range(rng.randint(1, 3))
        ]
        return [general, *limited]
    if form == "OHG":
        return [_person(rng, "252", seat) for _ in range(rng.randint(2, 3))]
    if form == "e.K.":
        return [_person(rng, "274", seat)]
    return [_person(rng, "251", seat) for _ in range(rng.randint(2, 4))]  # partnerships


def company_record(company: Company) -> CompanyRecord:
    """The full record of a generated company, drawn from its seed."""
    rng = random.Random(company.seed)
    legacy = company.si_version == "1.x"
    industry = next((w for w in INDUSTRIES if w in company.name), rng.choice(list(INDUSTRIES)))
    return CompanyRecord(
        parser_version=PARSER_VERSION,
        source=Source(
            format="xjustiz-1" if legacy else "xjustiz-3",
            xjustiz_version="1.20.0" if legacy else company.si_version,
            producer="RegisSTAR",
        ),
        register=Register(
            court_code=company.court.code,
            court_name=xjustiz_courts()[company.court.code],
            type=company.register_type,
            number=company.register_number,
            suffix=company.register_suffix,
        ),
        name=company.name,
        legal_form=LegalForm(code=company.legal_form, label=LEGAL_FORMS[company.legal_form]),
        seat=company.seat,
        address=Address(
            street=f"{rng.choice(LAST_NAMES)}{rng.choice(STREET_SUFFIXES)}",
            house_number=str(rng.randint(1, 180)),
            postal_code=f"{rng.randint(1067, 99998):05d}",
            city=company.seat,
            country="DE",
        ),
        capital=Money(amount=f"{company.capital:.2f}", currency="EUR") if company.capital is not None else None,
        purpose=f"Gegenstand des Unternehmens ist {INDUSTRIES[industry]}.",
        statute_date=(date(1995, 1, 1) + timedelta(days=rng.randint(0, 29 * 365))).isoformat(),
        representation=GENERAL_REPRESENTATION[company.legal_form],
        officers=tuple(_officers(rng, company)),
    )
