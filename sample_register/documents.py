"""What the sample register serves for a company: its SI document, its DK tree (document view),
the documents in that tree and the printouts. Everything derives from the company's seed, so
repeated requests get the same bytes; recent results are cached.

The DK tree has the portal's shape: ``0`` "Dokumente zum Rechtsträger" → ``0_0`` "Dokumente zur
Registernummer" → category folders → documents, and the current shareholder list also directly
under ``0`` (as in samples/portal/dk_partial_expand.xml). One document sits in several folders,
as on the portal; a category without documents is shown as a leaf. Some documents are offered
only as a ZIP.
"""

from __future__ import annotations

import io
import random
import re
import unicodedata
import zipfile
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from functools import lru_cache

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen.canvas import Canvas

from sample_register.company import Company
from sample_register.generated import company_record
from sample_register.shareholder_lists import drawn_form, generate_list
from sample_register.si_writer import write_si

ROOT_LABEL = "Dokumente zum Rechtsträger"
FOLDER_LABEL = "Dokumente zur Registernummer"
SHAREHOLDER_LIST_LABEL = "Liste der Gesellschafter - Aufnahme in den Registerordner am {date}"
# Category folders of "Dokumente zur Registernummer", in the portal's order.
CATEGORY_SHAREHOLDERS = "Liste der Gesellschafter"
CATEGORY_STATUTE = "Gesellschaftsvertrag / Satzung / Statut"
CATEGORY_APPLICATIONS = "Anmeldungen"
CATEGORY_DEEDS = "Weitere Urkunden"
CATEGORY_ACCOUNTS = "Jahresabschluss / Bilanz"
# A shareholder list needs a capital; the legal minimum of a GmbH stands in where the SI has none.
DEFAULT_CAPITAL = Decimal(25_000)
# The portal cuts the label in its file names to this many characters.
FILENAME_LABEL_CHARS = 44


@dataclass(frozen=True)
class Filing:
    """A document filed with the register; the same filing may appear under several nodes."""

    label: str
    filed: date
    seed: int
    shareholder_list: bool = False
    zip_only: bool = False  # the portal offers it only as a ZIP


@dataclass(frozen=True)
class TreeNode:
    row_key: str
    label: str
    children: tuple[TreeNode, ...] = ()
    filing: Filing | None = None  # documents only

    @property
    def is_document(self) -> bool:
        return self.filing is not None

    @property
    def is_folder(self) -> bool:
        """Folders, empty categories included (the portal shows those as leaves)."""
        return self.filing is None

    def find(self, row_key: str) -> TreeNode | None:
        if self.row_key == row_key:
            return self
        return next((found for child in self.children if (found := child.find(row_key))), None)

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()


@lru_cache(maxsize=512)
def si_document(company: Company) -> bytes:
    if company.sample_file is not None:
        return company.sample_file.read_bytes()
    return write_si(company_record(company), company.si_version)


def german_date(day: date) -> str:
    return day.strftime("%d.%m.%Y")


def _documents(prefix: str, documents: list[Filing]) -> tuple[TreeNode, ...]:
    return tuple(TreeNode(f"{prefix}_{i}", f.label, filing=f) for i, f in enumerate(documents))


def filings(company: Company, added: tuple[Filing, ...] = ()) -> list[Filing]:
    """The company's filings, oldest first; ``added`` are filings made while the server runs."""
    rng = random.Random(company.seed)
    founded = date(1995, 1, 1) + timedelta(days=rng.randint(0, 25 * 365))
    statute = {"AG": "Satzung", "eG": "Satzung", "e.V.": "Satzung", "PartG mbB": "Partnerschaftsvertrag"}
    out = [
        Filing(
            f"{statute.get(company.legal_form, 'Gesellschaftsvertrag')} vom {german_date(founded)}",
            founded,
            rng.getrandbits(32),
        )
    ]
    for _ in range(rng.randint(1, 2)):
        day = founded + timedelta(days=rng.randint(30, 3000))
        out.append(Filing(f"Anmeldung vom {german_date(day)}", day, rng.getrandbits(32)))
    if company.files_shareholder_lists:
        day = founded + timedelta(days=rng.randint(10, 60))
        for _ in range(rng.randint(1, 3)):
            # About one list in four is offered only as a ZIP, as some are on the portal.
            out.append(
                Filing(
                    SHAREHOLDER_LIST_LABEL.format(date=german_date(day)),
                    day,
                    rng.getrandbits(32),
                    shareholder_list=True,
                    zip_only=rng.random() < 0.25,
                )
            )
            day += timedelta(days=rng.randint(200, 2500))
    return sorted([*out, *added], key=lambda f: f.filed)


def current_list_form(company: Company) -> str | None:
    """The form (text_pdf, scan_pdf, tiff) of the shareholder list ``company`` files as its current
    one (the newest, as ``document_tree`` shows it under the root); None when it files none."""
    lists = [f for f in filings(company) if f.shareholder_list]
    return drawn_form(lists[-1].seed) if lists else None


@lru_cache(maxsize=512)
def document_tree(company: Company, added: tuple[Filing, ...] = ()) -> TreeNode:
    """The DK tree: categories under "Dokumente zur Registernummer", the current list also under the root."""
    everything = filings(company, added)
    lists = [f for f in everything if f.shareholder_list]
    statutes = [f for f in everything if not f.shareholder_list and not f.label.startswith("Anmeldung")]
    applications = [f for f in everything if f.label.startswith("Anmeldung")]
    categories: list[tuple[str, list[Filing]]] = []
    if lists:
        categories.append((CATEGORY_SHAREHOLDERS, lists))
    categories.append((CATEGORY_STATUTE, statutes))
    categories.append((CATEGORY_APPLICATIONS, applications))
    # The founding statute, filed once, is listed again among the further deeds.
    categories.append((CATEGORY_DEEDS, statutes[:1]))
    categories.append((CATEGORY_ACCOUNTS, []))  # an empty category: a leaf on the portal
    folders = tuple(
        TreeNode(f"0_0_{i}", label, _documents(f"0_0_{i}", documents))
        for i, (label, documents) in enumerate(categories)
    )
    register_folder = TreeNode("0_0", FOLDER_LABEL, folders)
    children = [register_folder]
    if lists:
        children.append(TreeNode("0_1", lists[-1].label, filing=lists[-1]))
    return TreeNode("0", ROOT_LABEL, tuple(children))


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def portal_filename(company: Company, label: str, when: datetime, extension: str) -> str:
    """Like the portal's ``NW-Bad_Oeynhausen_HRB_17968+Liste_der_Gesellschafter_-_Aufnahme_in_den_R-<time>.pdf``."""
    court = company.court.name.replace(" (", "_").replace(")", "").replace(" ", "_")
    designation = f"{company.register_type}_{company.register_number}"
    label_part = re.sub(r"[^A-Za-z0-9_.\-]", "", _ascii(label[:FILENAME_LABEL_CHARS]).replace(" ", "_"))
    return (
        f"{company.court.state_abbreviation}-{_ascii(court)}_{designation}+{label_part}-{when:%Y%m%d%H%M%S}.{extension}"
    )


def simple_pdf(title: str, lines: list[str]) -> bytes:
    """A one-page PDF with a text layer: the stand-in for printouts and filed documents."""
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, invariant=True)
    canvas.setFont("Helvetica-Bold", 14)
    canvas.drawString(72, 770, title)
    canvas.setFont("Helvetica", 11)
    for i, line in enumerate(lines):
        canvas.drawString(72, 740 - 16 * i, line)
    canvas.save()
    return buffer.getvalue()


@lru_cache(maxsize=64)
def original_document(company: Company, filing: Filing) -> tuple[bytes, str, str]:
    """The filed document as filed: bytes, media type and file extension."""
    if filing.shareholder_list:
        generated = generate_list(
            filing.seed,
            company_name=company.name,
            capital=company.capital or DEFAULT_CAPITAL,
            register=f"Amtsgericht {company.court.name} {company.designation}",
        )
        return generated.content, generated.media_type, generated.filename.rsplit(".", 1)[-1]
    pdf = simple_pdf(filing.label, [company.name, f"Amtsgericht {company.court.name} {company.designation}"])
    return pdf, "application/pdf", "pdf"


def zipped_document(company: Company, filing: Filing) -> bytes:
    """The ZIP the portal offers: the original file, named as the portal names it."""
    content, _media_type, extension = original_document(company, filing)
    stamp = datetime.combine(filing.filed, datetime.min.time())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        info = zipfile.ZipInfo(
            portal_filename(company, filing.label, stamp, extension), date_time=stamp.timetuple()[:6]
        )
        archive.writestr(info, content, compress_type=zipfile.ZIP_DEFLATED)
    return buffer.getvalue()


def printout(company: Company, kind: str) -> bytes:
    """AD (current), CD (chronological) or HD (historical) printout."""
    titles = {"AD": "Aktueller Abdruck", "CD": "Chronologischer Abdruck", "HD": "Historischer Abdruck"}
    lines = [f"Amtsgericht {company.court.name} {company.designation}", company.name, f"Sitz: {company.seat}"]
    lines += [f"Frühere Firma: {name} ({seat})" for name, seat in company.earlier_names]
    return simple_pdf(f"{titles[kind]} - {company.name}", lines)
