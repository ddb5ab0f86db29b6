"""Realistic generated shareholder lists with their truth, for tests and the sample register.

A list is drawn from a seed (shareholders, shares, numbering, wording), typeset as a PDF with a
text layer, and for scans rendered to images at 200 dpi with noise, some of them turned by
90/180/270 degrees, and stored as an image-only PDF or a multi-page TIFF. On request (never drawn
at random) a scan is stored as scanner software stores it: the page images with an invisible text
layer of the software's own OCR, which misreads letters and digits (``scan_pdf_poor_text_layer``).
"""

from __future__ import annotations

import io
import itertools
import random
import re
import time
import tomllib
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from importlib import resources

import numpy as np
import pdfplumber
import pypdfium2
from faker import Faker
from PIL import Image
from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.utils import ImageReader
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

from orchestration.shareholders.shareholder_list import Share, Shareholder, ShareholderList, derived_percentage
from orchestration.shareholders.validation import validate

LAYOUTS = ("per_share", "ranges", "corporate", "english", "multipage", "several_ranges", "foreign")
FORMS = ("text_pdf", "scan_pdf", "tiff")
POOR_TEXT_LAYER = "scan_pdf_poor_text_layer"
# What a scanner's OCR makes of a character, and how often: enough that no amount survives.
MISREAD = {"0": "O", "1": "l", "2": "Z", "3": "8", "4": "A", "5": "S", "6": "G", "7": "1", "8": "B", "9": "g"}
MISREAD |= {"e": "c", "n": "m", "i": "l", "a": "o", "u": "v", "r": "n", "%": "9", ",": ".", ".": ","}
MISREAD_SHARE = 0.35
SCAN_DPI = 200
CENT = Decimal("0.01")

# (register court, seat of companies registered there, register number suffix)
COURTS = (
    ("München", "München", ""),
    ("Charlottenburg", "Berlin", "B"),
    ("Hamburg", "Hamburg", ""),
    ("Frankfurt am Main", "Frankfurt am Main", ""),
    ("Köln", "Köln", ""),
    ("Düsseldorf", "Düsseldorf", ""),
    ("Stuttgart", "Stuttgart", ""),
    ("Hannover", "Hannover", ""),
    ("Leipzig", "Leipzig", ""),
    ("Nürnberg", "Nürnberg", ""),
)
ORGANISATION_WORDS = ("Holding", "Invest", "Beteiligungs", "Verwaltungs", "Capital")
# (legal form, register type)
LEGAL_FORMS = (("GmbH", "HRB"), ("GmbH", "HRB"), ("AG", "HRB"), ("SE", "HRB"), ("GmbH & Co. KG", "HRA"))
# Foreign companies by country: legal forms, seats, and how a list describes their register.
FOREIGN_FORMS = {
    "FR": (("SAS", "SARL", "S.A."), ("Paris", "Lyon", "Lille", "Nantes")),
    "NL": (("B.V.", "N.V."), ("Amsterdam", "Rotterdam", "Utrecht")),
    "GB": (("Limited", "Ltd.", "PLC"), ("London", "Manchester", "Leeds")),
    "LU": (("S.à r.l.", "S.A."), ("Luxemburg",)),
    "AT": (("GmbH",), ("Wien", "Graz", "Linz")),
}

COUNTRY_NAMES = {"FR": "Frankreich", "NL": "Niederlande", "GB": "United Kingdom", "AT": "Österreich"}


@dataclass(frozen=True)
class Wording:
    """Everything printed that depends on the language of the list (``data/wordings.toml``)."""

    decimal_comma: bool
    title: str
    company_prefix: str
    register_label: str
    range_word: str
    birth: str
    residence: str
    seat: str
    court: str
    sum_label: str
    page_label: str
    signature: str
    headers: dict[str, tuple[str, ...]]
    changes: tuple[str, ...]

    def amount(self, value: Decimal) -> str:
        text = f"{value:,.2f}"
        return _swap_separators(text) if self.decimal_comma else text

    def integer(self, value: int) -> str:
        text = f"{value:,}"
        return _swap_separators(text) if self.decimal_comma else text

    def percentage(self, value: Decimal) -> str:
        text = str(value)
        return (text.replace(".", ",") if self.decimal_comma else text) + " %"


def _swap_separators(text: str) -> str:
    return text.replace(",", "\0").replace(".", ",").replace("\0", ".")


def _wordings() -> dict[str, Wording]:
    text = resources.files(__package__).joinpath("data/wordings.toml").read_text(encoding="utf-8")
    wordings = {}
    for language, table in tomllib.loads(text).items():
        # TOML has lists; a Wording holds tuples.
        table["headers"] = {column: tuple(lines) for column, lines in table["headers"].items()}
        table["changes"] = tuple(table["changes"])
        wordings[language] = Wording(**table)
    return wordings


_WORDINGS = _wordings()
GERMAN = _WORDINGS["german"]
ENGLISH = _WORDINGS["english"]

NOTARY_CERTIFICATE = (
    "Hiermit bescheinige ich, dass die geänderten Eintragungen in der vorstehenden Liste den "
    "Veränderungen entsprechen, an denen ich als Notar mitgewirkt habe, und die übrigen Eintragungen "
    "mit dem Inhalt der zuletzt im Handelsregister aufgenommenen Liste übereinstimmen."
)


@dataclass(frozen=True)
class GeneratedList:
    content: bytes
    media_type: str  # application/pdf or image/tiff
    filename: str
    expected: ShareholderList  # the truth: what a correct parse with the capital yields
    layout: str
    form: str
    rotation: int = 0  # degrees a scan's pages are turned counter-clockwise; what OCR must undo
    pages: int = 1


@dataclass
class _Row:
    """One printed row of shares."""

    share: Share
    share_percentage: str
    subtotal: str = ""  # the row's intermediate sum with its percentage, where the layout prints one


@dataclass
class _Block:
    """One shareholder as printed: description lines beside the share rows."""

    holder: Shareholder
    description: list[str]
    rows: list[_Row]
    holder_percentage: str
    change: str = ""
    one_line: bool = False  # the description on one line, where the column is wide enough
    change_lines: list[str] = field(default_factory=list)  # the change as wrapped in its column


@dataclass
class _Document:
    layout: str
    wording: Wording
    company_name: str
    register: str | None
    currency: str
    capital: Decimal
    blocks: list[_Block]
    landscape: bool
    place: str
    issued: date
    notary: str
    columns: dict[str, tuple[float, str]] = field(default_factory=dict)


def _layout_and_form(rng: random.Random, layout: str | None, form: str | None) -> tuple[str, str]:
    """The layout and form of a list, each drawn from ``rng`` unless given: a list's first draws."""
    return layout or rng.choice(LAYOUTS), form or rng.choice(FORMS)


def drawn_form(seed: int) -> str:
    """The form ``generate_list(seed, ...)`` gives a list when it is given no layout and no form,
    known without typesetting or scanning it."""
    return _layout_and_form(random.Random(seed), None, None)[1]


def generate_list(
    seed: int,
    *,
    company_name: str,
    capital: Decimal,
    currency: str = "EUR",
    register: str | None = None,
    layout: str | None = None,
    form: str | None = None,
) -> GeneratedList:
    """A shareholder list of ``company_name`` over ``capital``, the same for the same arguments."""
    rng = random.Random(seed)
    layout, form = _layout_and_form(rng, layout, form)
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; one of {', '.join(LAYOUTS)}")
    if form not in (*FORMS, POOR_TEXT_LAYER):
        raise ValueError(f"unknown form {form!r}; one of {', '.join((*FORMS, POOR_TEXT_LAYER))}")
    capital = Decimal(str(capital)).quantize(CENT)
    if capital < 1:
        raise ValueError("capital must be at least 1")
    fake = Faker("de_DE")
    fake.seed_instance(seed)

    document = _draw_document(rng, fake, layout, company_name, capital, currency, register)
    pdf = _typeset(document)
    expected = _expected(document, form)
    slug = re.sub(r"[^A-Za-z0-9]+", "_", company_name).strip("_") or "Gesellschaft"
    if form == "text_pdf":
        return GeneratedList(
            pdf, "application/pdf", f"Gesellschafterliste_{slug}.pdf", expected, layout, form, pages=_page_count(pdf)
        )
    rotation = rng.choice((0, 0, 0, 90, 180, 270))
    if form == POOR_TEXT_LAYER:
        rotation = 0  # the scanner software turned the pages upright before its OCR
    pages = _scan(pdf, seed, rotation)
    if form == "scan_pdf":
        content, media_type, suffix = _images_to_pdf(pages, document.issued), "application/pdf", "pdf"
    elif form == POOR_TEXT_LAYER:
        content, media_type, suffix = _with_poor_text_layer(pages, pdf, rng), "application/pdf", "pdf"
    else:
        content, media_type, suffix = _images_to_tiff(pages), "image/tiff", "tif"
    return GeneratedList(
        content,
        media_type,
        f"Gesellschafterliste_{slug}.{suffix}",
        expected,
        layout,
        form,
        rotation=rotation,
        pages=len(pages),
    )


# -- drawing the content ---------------------------------------------------------------------------


def _draw_document(
    rng: random.Random,
    fake: Faker,
    layout: str,
    company_name: str,
    capital: Decimal,
    currency: str,
    register: str | None,
) -> _Document:
    wording = ENGLISH if layout == "english" else GERMAN
    holder_count = {
        "per_share": (2, 4),
        "ranges": (2, 3),
        "corporate": (2, 4),
        "english": (2, 4),
        "multipage": (16, 22),
        "several_ranges": (2, 3),
        "foreign": (2, 4),
    }
    organisation_share = {"per_share": 0.1, "ranges": 0.1, "corporate": 0.5, "english": 0.3, "multipage": 0.3}
    organisation_share |= {"several_ranges": 0.4, "foreign": 0.7}
    small_holder = {"per_share": 0.5, "ranges": 0.3, "corporate": 0.3, "english": 0.3, "multipage": 1.0}
    small_holder |= {"several_ranges": 0.0, "foreign": 0.3}
    is_landscape = layout in ("corporate", "several_ranges", "foreign") or (
        layout != "multipage" and rng.random() < 0.3
    )

    # Every share is of whole euros (GmbHG §5(2)), so an UG of 1 € has one holder, of 3 € at most three.
    count = min(rng.randint(*holder_count[layout]), int(capital))
    kinds = ["organisation" if rng.random() < organisation_share[layout] else "person" for _ in range(count)]
    if layout in ("corporate", "foreign") and "organisation" not in kinds:
        kinds[0] = "organisation"
    holdings = _split_capital(rng, capital, count, with_small_holder=rng.random() < small_holder[layout])
    foreign = [layout == "foreign" and kind == "organisation" and rng.random() < 0.8 for kind in kinds]
    if layout == "foreign" and not any(foreign):
        foreign[kinds.index("organisation")] = True
    places = rng.choice((1, 2))
    document = _Document(
        layout=layout,
        wording=wording,
        company_name=company_name,
        register=register,
        currency=currency,
        capital=capital,
        blocks=[],
        landscape=is_landscape,
        place=fake.city(),
        issued=date(2018, 1, 1) + timedelta(days=rng.randrange(7 * 365)),
        notary=f"{fake.first_name()} {fake.last_name()}",
    )
    several = _several_ranges(rng, holdings) if layout == "several_ranges" else None
    next_number = 1
    for index, (kind, abroad, holding) in enumerate(zip(kinds, foreign, holdings, strict=True)):
        if abroad:
            holder = _draw_foreign_organisation(rng, fake)
        else:
            holder = _draw_person(rng, fake) if kind == "person" else _draw_organisation(rng, fake)
        if several is not None:
            shares = several[index]
        elif layout == "ranges":
            shares, next_number = _range_shares(holding, next_number)
        else:
            shares, next_number = _single_shares(rng, holding, next_number)
        shares = [
            share.model_copy(update={"percentage": _row_percentage(share, capital, places, whole_row=bool(several))})
            for share in shares
        ]
        holder = holder.model_copy(update={"shares": shares, "nominal_total": holding})
        stated = _stated_percentage(holding / capital * 100, places)
        if stated is None:
            holder = holder.model_copy(
                update={"percentage": derived_percentage(holding, capital), "percentage_below_one": True}
            )
            holder_percentage = "< 1 %"
        else:
            holder = holder.model_copy(update={"percentage": stated})
            holder_percentage = wording.percentage(stated)
        rows = [_Row(share, _share_percentage_text(wording, share.nominal / capital * 100, places)) for share in shares]
        if several is not None:
            rows = [
                _Row(
                    share,
                    "",
                    f"{wording.amount(share.nominal * (share.count or 1))} ({_percentage_text(wording, share)})",
                )
                for share in shares
            ]
            change = ""  # where the later ranges came from, once every holder is drawn
        else:
            change = rng.choice(("",) * 3 + wording.changes)
        holder = holder.model_copy(update={"changes": change or None})
        document.blocks.append(
            _Block(
                holder,
                _description(holder, wording),
                rows,
                holder_percentage,
                change,
                one_line=is_landscape and rng.random() < 0.5,
            )
        )
    if several is not None:
        for block in document.blocks:
            others = [other.holder for other in document.blocks if other is not block]
            block.change = _acquisitions(wording, block.holder.shares[1:], others)
            block.holder = block.holder.model_copy(update={"changes": block.change or None})
    return document


def _several_ranges(rng: random.Random, holdings: list[Decimal]) -> list[list[Share]]:
    """Each holding in two or three ranges of one-unit shares, numbered round by round over the
    holders, as after transfers: the first holder's second range follows everyone's first."""
    parts = []
    for holding in holdings:
        count = min(rng.choice((2, 2, 3)), int(holding))
        cuts = sorted(rng.sample(range(1, int(holding)), count - 1)) if count > 1 else []
        amounts = [Decimal(b - a) for a, b in itertools.pairwise([0, *cuts, int(holding)])]
        amounts[-1] += holding - int(holding)
        parts.append(amounts)
    shares: list[list[Share]] = [[] for _ in holdings]
    next_number = 1
    for round_ in range(max(len(amounts) for amounts in parts)):
        for index, amounts in enumerate(parts):
            if round_ < len(amounts):
                ranged, next_number = _range_shares(amounts[round_], next_number)
                shares[index] += ranged
    return shares


def _row_percentage(share: Share, capital: Decimal, places: int, *, whole_row: bool) -> Decimal | None:
    """The percentage a row states of itself: a single share's, or a range's intermediate sum
    where the layout prints one; a range's per-share percentage is not the row's."""
    if share.count != 1 and not whole_row:
        return None
    return _stated_percentage(share.nominal * (share.count or 1) / capital * 100, places)


def _percentage_text(wording: Wording, share: Share) -> str:
    return "< 1 %" if share.percentage is None else wording.percentage(share.percentage)


def _acquisitions(wording: Wording, later: list[Share], others: list[Shareholder]) -> str:
    """The changes column of a holder with several ranges: where the later ranges came from."""
    if not later or not others:
        return ""
    parts = []
    for index, share in enumerate(later):
        label = wording.integer(int(share.number))
        if share.last_number is not None:
            label += f" {wording.range_word} {wording.integer(int(share.last_number))}"
        parts.append(f"Nr. {label} erworben von {others[index % len(others)].name}")
    return "; ".join(parts)


def _split_capital(rng: random.Random, capital: Decimal, count: int, *, with_small_holder: bool) -> list[Decimal]:
    """Whole-unit holdings summing to ``capital``; any cents go to the first holder."""
    units = int(capital)
    cents = capital - units
    small = max(1, units // 250) if with_small_holder and count > 1 and units >= 200 else None
    remaining = units - (small or 0)
    regular = count - (1 if small else 0)
    weights = [rng.uniform(1, 6) for _ in range(regular)]
    amounts = [max(1, int(remaining * weight / sum(weights))) for weight in weights]
    amounts[0] += remaining - sum(amounts)
    if small:
        amounts.insert(rng.randrange(1, len(amounts) + 1), small)
    holdings = [Decimal(amount).quantize(CENT) for amount in amounts]
    holdings[0] += cents
    return holdings


def _single_shares(rng: random.Random, holding: Decimal, next_number: int) -> tuple[list[Share], int]:
    """One to three shares; a divided share is numbered in sections (3.1, 3.2) as GesLV §1 allows."""
    parts = min(rng.choice((1, 1, 2, 3)), int(holding))
    cut_points = sorted(rng.sample(range(1, int(holding)), parts - 1)) if parts > 1 else []
    bounds = [0, *cut_points, int(holding)]
    amounts = [Decimal(b - a).quantize(CENT) for a, b in itertools.pairwise(bounds)]
    amounts[-1] += holding - int(holding)
    if parts > 1 and rng.random() < 0.35:
        shares = [Share(number=f"{next_number}.{i}", nominal=amount) for i, amount in enumerate(amounts, 1)]
        return shares, next_number + 1
    shares = [Share(number=str(next_number + i), nominal=amount) for i, amount in enumerate(amounts)]
    return shares, next_number + parts


def _range_shares(holding: Decimal, next_number: int) -> tuple[list[Share], int]:
    """Shares of one unit each, printed as a range; a fractional rest is a share of its own."""
    units = int(holding)
    shares = [
        Share(
            number=str(next_number),
            last_number=str(next_number + units - 1) if units > 1 else None,
            nominal=Decimal(1).quantize(CENT),
        )
    ]
    next_number += units
    if holding != units:
        shares.append(Share(number=str(next_number), nominal=holding - units))
        next_number += 1
    return shares, next_number


def _stated_percentage(exact: Decimal, places: int) -> Decimal | None:
    """What a careful notary prints under GesLV §4, or None for "< 1 %"."""
    if exact < 1:
        return None
    stated = exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    if stated < exact and stated in (Decimal(25), Decimal(50)):
        stated = exact.quantize(Decimal(1).scaleb(-(places + 2)), rounding=ROUND_HALF_UP)
    return stated


def _share_percentage_text(wording: Wording, exact: Decimal, places: int) -> str:
    stated = _stated_percentage(exact, places)
    return "< 1 %" if stated is None else wording.percentage(stated)


def _draw_person(rng: random.Random, fake: Faker) -> Shareholder:
    first_name, last_name = fake.first_name(), fake.last_name()
    return Shareholder(
        kind="person",
        name=f"{first_name} {last_name}",
        first_name=first_name,
        last_name=last_name,
        birth_date=date(1945, 1, 1) + timedelta(days=rng.randrange(55 * 365)),
        residence=fake.city(),
        shares=[],
        nominal_total=Decimal(0),
    )


def _draw_organisation(rng: random.Random, fake: Faker) -> Shareholder:
    court, seat, suffix = rng.choice(COURTS)
    legal_form, register_type = rng.choice(LEGAL_FORMS)
    number = str(rng.randint(1000, 250000)) + (f" {suffix}" if suffix else "")
    return Shareholder(
        kind="organisation",
        name=f"{fake.last_name()} {rng.choice(ORGANISATION_WORDS)} {legal_form}",
        seat=seat,
        register_court=court,
        register_type=register_type,
        register_number=number,
        register_country="DE",
        shares=[],
        nominal_total=Decimal(0),
    )


def _draw_foreign_organisation(rng: random.Random, fake: Faker) -> Shareholder:
    country = rng.choice(sorted(FOREIGN_FORMS))
    forms, towns = FOREIGN_FORMS[country]
    town = rng.choice(towns)
    # The seat as the cell prints it: with its country, but for Luxembourg's own city.
    seat = town if country == "LU" else f"{town}, {COUNTRY_NAMES[country]}"
    digits = "".join(rng.choice("0123456789") for _ in range(8))
    court, number = {
        "FR": (f"Greffe du Tribunal de Commerce de {town}", f"8{digits}"),
        "NL": ("Kamer van Koophandel", digits),
        "GB": ("Companies House", f"0{digits[:7]}"),
        "LU": ("R.C.S. Luxemburg", f"B{digits[:6]}"),
        "AT": ("Firmenbuch", f"FN{digits[:6]}{rng.choice('abdfiklmpstvwxyz')}"),
    }[country]
    return Shareholder(
        kind="organisation",
        name=f"{fake.last_name()} {rng.choice(ORGANISATION_WORDS)} {rng.choice(forms)}",
        seat=seat,
        register_court=court,
        register_number=number,
        register_country=country,
        shares=[],
        nominal_total=Decimal(0),
    )


def _foreign_description(holder: Shareholder) -> list[str]:
    """A foreign company's cell as German notaries write it: its register in the words of its country."""
    number = holder.register_number or ""
    seat = holder.seat or ""
    town = seat.partition(",")[0]
    return {
        "FR": [
            f"Handelsregister: {holder.register_court},",
            f"Registrierungsnummer: {number[:3]} {number[3:6]} {number[6:]} R.C.S. {town},",
            f"Sitz: {seat}",
        ],
        "NL": [f"Sitz: {seat},", "Kamer van Koophandel,", f"KvK-nummer {number}"],
        "GB": [
            "registered with Companies House",
            f"under Company No. {number},",
            f"seat: {seat}",
        ],
        "LU": [f"mit dem Sitz in {seat},", "eingetragen im R.C.S. Luxemburg", f"unter B {number[1:]}"],
        "AT": [
            f"Sitz: {seat},",
            f"Firmenbuch FN {number[2:-1]} {number[-1]},",
            f"Handelsgericht {town}",
        ],
    }[holder.register_country or ""]


def _description(holder: Shareholder, wording: Wording) -> list[str]:
    if holder.kind == "organisation" and holder.register_type is None:
        return [holder.name, *_foreign_description(holder)]
    if holder.kind == "person":
        assert holder.birth_date is not None
        return [
            f"{holder.last_name}, {holder.first_name}",
            f"{wording.birth} {holder.birth_date:%d.%m.%Y}",
            f"{wording.residence} {holder.residence}",
        ]
    return [
        holder.name,
        f"{wording.seat} {holder.seat}",
        f"{wording.court} {holder.register_court}, {holder.register_type} {holder.register_number}",
    ]


def _expected(document: _Document, form: str) -> ShareholderList:
    extracted = ShareholderList(
        shareholders=[block.holder for block in document.blocks],
        total_nominal=document.capital,
        total_stated=True,  # every generated list prints its sum line
        currency=document.currency,
        method="rules",
        source="text_layer" if form == "text_pdf" else "ocr",
        # a poor text layer reads as no verified list, so its pages are read again by OCR
        ocr_fallback="used" if form == POOR_TEXT_LAYER else None,
    )
    return extracted.model_copy(update={"validation": validate(extracted, document.capital)})


# -- typesetting -----------------------------------------------------------------------------------

FONT, BOLD = "Helvetica", "Helvetica-Bold"
FONT_SIZE, LEADING = 9, 11.5
MARGIN, BOTTOM = 40, 60


def _columns(document: _Document, width: float) -> dict[str, tuple[float, str]]:
    """x position and alignment of each column; amounts are right-aligned at their x."""
    if document.layout == "several_ranges":
        fractions = {
            "number": (0.0, "left"),
            "holder": (0.15, "left"),
            "each": (0.50, "right"),
            "subtotal": (0.64, "right"),
            "nominal_total": (0.76, "right"),
            "holder_percentage": (0.84, "right"),
            "changes": (0.86, "left"),
        }
    elif document.layout == "ranges":
        fractions = {
            "number": (0.0, "left"),
            "holder": (0.18, "left"),
            "each": (0.545, "right"),
            "nominal": (0.665, "right"),
            "share_percentage": (0.77, "right"),
            "holder_percentage": (0.875, "right"),
            "changes": (0.89, "left"),
        }
    else:
        fractions = {
            "number": (0.0, "left"),
            "holder": (0.11, "left"),
            "nominal": (0.62, "right"),
            "share_percentage": (0.74, "right"),
            "holder_percentage": (0.87, "right"),
            "changes": (0.89, "left"),
        }
    return {key: (MARGIN + fraction * width, align) for key, (fraction, align) in fractions.items()}


def _typeset(document: _Document) -> bytes:
    page_size = landscape(A4) if document.landscape else A4
    page_width, page_height = page_size
    usable = page_width - 2 * MARGIN
    document.columns = _columns(document, usable)
    holder_x = document.columns["holder"][0]
    # Up to the next column's right-aligned amounts, which take about 60 pt.
    holder_width = min(x for x, _ in document.columns.values() if x > holder_x) - holder_x - 60
    buffer = io.BytesIO()
    # invariant=1 leaves out dates and random ids, so the same seed gives the same bytes.
    canvas = Canvas(buffer, pagesize=page_size, invariant=1)
    canvas.setTitle(f"{document.wording.title} {document.company_name}")
    wording = document.wording
    page = 1

    y = page_height - MARGIN - 14
    canvas.setFont(BOLD, 14)
    canvas.drawString(MARGIN, y, wording.title)
    y -= 18
    canvas.setFont(FONT, 10)
    canvas.drawString(MARGIN, y, f"{wording.company_prefix} {document.company_name}")
    if document.register:
        y -= 13
        canvas.drawString(MARGIN, y, f"{wording.register_label}: {document.register}")
    y = _table_header(canvas, document, y - 24, usable)

    for block in document.blocks:
        joined = ", ".join(block.description)
        if block.one_line and stringWidth(joined, FONT, FONT_SIZE) <= holder_width:
            block.description = [joined]
        block.change_lines = _wrapped(block.change, MARGIN + usable - document.columns["changes"][0])
        lines = max(len(block.description), len(block.rows), len(block.change_lines))
        if y - lines * LEADING < BOTTOM:
            _footer(canvas, document, page, page_width)
            canvas.showPage()
            page += 1
            y = _table_header(canvas, document, page_height - MARGIN - 10, usable)
        _block(canvas, document, block, y, holder_width)
        y -= lines * LEADING + 4
        canvas.setStrokeGray(0.75)
        canvas.line(MARGIN, y + LEADING - 2, MARGIN + usable, y + LEADING - 2)

    canvas.setFont(BOLD, FONT_SIZE)
    y -= 4
    canvas.drawString(document.columns["number"][0], y, wording.sum_label)
    _cell(
        canvas,
        document,
        "nominal_total" if "nominal_total" in document.columns else "nominal",
        y,
        wording.amount(document.capital),
    )
    _cell(canvas, document, "holder_percentage", y, wording.percentage(Decimal("100.0")))
    canvas.setFont(FONT, 10)
    y -= 3 * LEADING
    if y < BOTTOM + 3 * LEADING:
        _footer(canvas, document, page, page_width)
        canvas.showPage()
        page += 1
        y = page_height - MARGIN - 20
        canvas.setFont(FONT, 10)
    canvas.drawString(MARGIN, y, f"{document.place}, {document.issued:%d.%m.%Y}")
    y -= 2.5 * LEADING
    canvas.line(MARGIN, y + LEADING - 2, MARGIN + 160, y + LEADING - 2)
    canvas.drawString(MARGIN, y, f"({wording.signature})")
    _footer(canvas, document, page, page_width)

    if document.layout == "multipage":
        canvas.showPage()
        page += 1
        _notary_page(canvas, document, page_height, page_width)
        _footer(canvas, document, page, page_width)
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


def _table_header(canvas: Canvas, document: _Document, y: float, usable: float) -> float:
    canvas.setFont(BOLD, 8)
    depth = 0
    for key, (x, align) in document.columns.items():
        labels = document.wording.headers[key]
        depth = max(depth, len(labels))
        for i, label in enumerate(labels):
            text = label.format(currency=document.currency)
            if align == "right":
                canvas.drawRightString(x, y - i * 10, text)
            else:
                canvas.drawString(x, y - i * 10, text)
    y -= (depth - 1) * 10 + 5
    canvas.setStrokeGray(0)
    canvas.line(MARGIN, y, MARGIN + usable, y)
    return y - LEADING - 2


def _block(canvas: Canvas, document: _Document, block: _Block, y: float, holder_width: float) -> None:
    wording = document.wording
    canvas.setFont(FONT, FONT_SIZE)
    for i, line in enumerate(block.description):
        size: float = FONT_SIZE
        while stringWidth(line, FONT, size) > holder_width and size > 6:
            size -= 0.5
        canvas.setFont(FONT, size)
        canvas.drawString(document.columns["holder"][0], y - i * LEADING, line)
    canvas.setFont(FONT, FONT_SIZE)
    for i, row in enumerate(block.rows):
        share = row.share
        number = share.number
        if share.last_number is not None:
            first, last = wording.integer(int(share.number)), wording.integer(int(share.last_number))
            number = f"{first} {wording.range_word} {last}"
        line_y = y - i * LEADING
        canvas.drawString(document.columns["number"][0], line_y, number)
        if "subtotal" in document.columns:
            _cell(canvas, document, "each", line_y, wording.amount(share.nominal))
            _cell(canvas, document, "subtotal", line_y, row.subtotal)
        elif "each" in document.columns:
            _cell(canvas, document, "each", line_y, wording.amount(share.nominal))
            _cell(canvas, document, "nominal", line_y, wording.amount(share.nominal * (share.count or 1)))
        else:
            _cell(canvas, document, "nominal", line_y, wording.amount(share.nominal))
        if "share_percentage" in document.columns:
            _cell(canvas, document, "share_percentage", line_y, row.share_percentage)
    if "nominal_total" in document.columns:
        _cell(canvas, document, "nominal_total", y, wording.amount(block.holder.nominal_total))
    _cell(canvas, document, "holder_percentage", y, block.holder_percentage)
    for i, line in enumerate(block.change_lines):
        _cell(canvas, document, "changes", y - i * LEADING, line)


def _wrapped(text: str, width: float) -> list[str]:
    """Text in lines that fit ``width`` at the table's font size, broken between words."""
    lines: list[str] = []
    for word in text.split():
        if lines and stringWidth(f"{lines[-1]} {word}", FONT, FONT_SIZE) <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines


def _cell(canvas: Canvas, document: _Document, column: str, y: float, text: str) -> None:
    x, align = document.columns[column]
    if align == "right":
        canvas.drawRightString(x, y, text)
    else:
        canvas.drawString(x, y, text)


def _footer(canvas: Canvas, document: _Document, page: int, page_width: float) -> None:
    canvas.setFont(FONT, 8)
    canvas.drawCentredString(page_width / 2, 30, f"{document.wording.page_label} {page}")


def _notary_page(canvas: Canvas, document: _Document, page_height: float, page_width: float) -> None:
    y = page_height - MARGIN - 40
    canvas.setFont(BOLD, 12)
    canvas.drawString(MARGIN, y, "Bescheinigung gemäß § 40 Abs. 2 Satz 2 GmbHG")
    canvas.setFont(FONT, 10)
    y -= 28
    line = ""
    for word in NOTARY_CERTIFICATE.split():
        candidate = f"{line} {word}".strip()
        if stringWidth(candidate, FONT, 10) > page_width - 2 * MARGIN:
            canvas.drawString(MARGIN, y, line)
            y -= 14
            candidate = word
        line = candidate
    canvas.drawString(MARGIN, y, line)
    y -= 40
    canvas.drawString(MARGIN, y, f"UR-Nr. {document.issued.toordinal() % 2000 + 1}/{document.issued.year}")
    y -= 14
    canvas.drawString(MARGIN, y, f"{document.place}, den {document.issued:%d.%m.%Y}")
    y -= 50
    canvas.drawString(MARGIN, y, f"{document.notary}, Notar")


def _page_count(pdf: bytes) -> int:
    document = pypdfium2.PdfDocument(pdf)
    try:
        return len(document)
    finally:
        document.close()


# -- scanning --------------------------------------------------------------------------------------


def _scan(pdf: bytes, seed: int, rotation: int) -> list[Image.Image]:
    """Grey pages as a scanner delivers them: paper tone, sensor noise, specks, maybe turned."""
    noise = np.random.default_rng(seed)
    document = pypdfium2.PdfDocument(pdf)
    pages = []
    try:
        for page in document:
            image = page.render(scale=SCAN_DPI / 72, grayscale=True).to_pil().convert("L")
            pixels = np.asarray(image, dtype=np.float32) * 0.92 + 8
            pixels += noise.normal(0, 6, pixels.shape).astype(np.float32)
            specks = noise.random(pixels.shape) < 0.0004
            pixels[specks] = 40
            image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "L")
            if rotation:
                image = image.rotate(rotation, expand=True, fillcolor=235)
            pages.append(image)
    finally:
        document.close()
    return pages


def _images_to_pdf(pages: list[Image.Image], issued: date) -> bytes:
    buffer = io.BytesIO()
    stamp = time.struct_time((issued.year, issued.month, issued.day, 12, 0, 0, 0, 1, 0))
    pages[0].save(
        buffer,
        "PDF",
        save_all=True,
        append_images=pages[1:],
        resolution=SCAN_DPI,
        quality=60,
        creationDate=stamp,
        modDate=stamp,
        title="Scan",
    )
    return buffer.getvalue()


def _with_poor_text_layer(pages: list[Image.Image], pdf: bytes, rng: random.Random) -> bytes:
    """The scan as a PDF of its page images, each with an invisible text layer (render mode 3) of
    the typeset words where they stand, a share of their characters misread."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, invariant=1)
    with pdfplumber.open(io.BytesIO(pdf)) as typeset:
        for image, page in zip(pages, typeset.pages, strict=True):
            canvas.setPageSize((page.width, page.height))
            jpeg = io.BytesIO()
            image.save(jpeg, "JPEG", quality=60)
            canvas.drawImage(ImageReader(jpeg), 0, 0, page.width, page.height)
            text = canvas.beginText()
            text.setTextRenderMode(3)
            for word in page.extract_words():
                size = word["bottom"] - word["top"]
                text.setFont(FONT, size)
                # pdfplumber's box runs from the font's ascent to its descent; the baseline is above the bottom
                text.setTextOrigin(word["x0"], page.height - word["bottom"] + 0.22 * size)
                text.textOut("".join(_misread(char, rng) for char in word["text"]))
            canvas.drawText(text)
            canvas.showPage()
    canvas.save()
    return buffer.getvalue()


def _misread(char: str, rng: random.Random) -> str:
    return MISREAD[char] if char in MISREAD and rng.random() < MISREAD_SHARE else char


def _images_to_tiff(pages: list[Image.Image]) -> bytes:
    # Fax-style bilevel pages with Group 4 compression, as many register scans are.
    bilevel = [page.point(lambda value: 255 if value > 150 else 0).convert("1") for page in pages]
    buffer = io.BytesIO()
    bilevel[0].save(
        buffer, "TIFF", save_all=True, append_images=bilevel[1:], compression="group4", dpi=(SCAN_DPI, SCAN_DPI)
    )
    return buffer.getvalue()
