"""What the sample register serves for a company: its SI document, its DK tree (document view)
and the documents in that tree. Everything derives from the company's seed, so repeated
requests get the same bytes; recent results are cached."""

from __future__ import annotations

import io
import random
import re
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from functools import lru_cache

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen.canvas import Canvas

from orchestration.register.sample.company import Company
from orchestration.register.sample.generated import company_record
from orchestration.shareholders.samples import generate_list
from orchestration.xjustiz import write_si

SHAREHOLDER_LIST_LABEL = "Liste der Gesellschafter - Aufnahme in den Registerordner am {date}"
FOLDER_LABEL = "Dokumente zur Registernummer"
# A shareholder list needs a capital; the legal minimum of a GmbH stands in where the SI has none.
DEFAULT_CAPITAL = Decimal(25_000)


@dataclass(frozen=True)
class TreeNode:
    row_key: str
    label: str
    children: tuple[TreeNode, ...] = ()
    shareholder_list_seed: int | None = None  # documents only: a shareholder list drawn from this seed

    @property
    def is_folder(self) -> bool:
        return bool(self.children)

    def find(self, row_key: str) -> TreeNode | None:
        if self.row_key == row_key:
            return self
        return next((found for child in self.children if (found := child.find(row_key))), None)


@lru_cache(maxsize=512)
def si_document(company: Company) -> bytes:
    if company.sample_file is not None:
        return company.sample_file.read_bytes()
    return write_si(company_record(company), company.si_version)


def _german(day: date) -> str:
    return day.strftime("%d.%m.%Y")


@lru_cache(maxsize=512)
def document_tree(company: Company) -> TreeNode:
    """Root "0": a folder of filed documents and, for a GmbH, the current shareholder list."""
    rng = random.Random(company.seed)
    founded = date(1995, 1, 1) + timedelta(days=rng.randint(0, 25 * 365))
    statute = {"AG": "Satzung", "eG": "Satzung", "e.V.": "Satzung", "PartG mbB": "Partnerschaftsvertrag"}
    filed = [f"{statute.get(company.legal_form, 'Gesellschaftsvertrag')} vom {_german(founded)}"]
    filed += [f"Anmeldung vom {_german(founded + timedelta(days=rng.randint(30, 3000)))}" for _ in range(rng.randint(1, 2))]

    lists: list[tuple[date, int]] = []
    if company.files_shareholder_lists:
        day = founded + timedelta(days=rng.randint(10, 60))
        for _ in range(rng.randint(1, 3)):
            lists.append((day, rng.getrandbits(32)))
            day += timedelta(days=rng.randint(200, 2500))
    folder_children = [TreeNode(f"0_0_{i}", label) for i, label in enumerate(filed)]
    # Earlier lists stay in the folder; the current one is listed beside it, as on the portal.
    folder_children += [
        TreeNode(f"0_0_{len(filed) + i}", SHAREHOLDER_LIST_LABEL.format(date=_german(day)), shareholder_list_seed=seed)
        for i, (day, seed) in enumerate(lists[:-1])
    ]
    children = [TreeNode("0_0", FOLDER_LABEL, tuple(folder_children))]
    if lists:
        day, seed = lists[-1]
        children.append(TreeNode("0_1", SHAREHOLDER_LIST_LABEL.format(date=_german(day)), shareholder_list_seed=seed))
    return TreeNode("0", f"{company.designation} {company.name}", tuple(children))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")


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
def tree_document(company: Company, row_key: str) -> tuple[bytes, str, str] | None:
    """Bytes, media type and filename of a document of the DK tree; None for folders and unknown keys."""
    node = document_tree(company).find(row_key)
    if node is None or node.is_folder or node.row_key == "0":
        return None
    if node.shareholder_list_seed is not None:
        generated = generate_list(
            node.shareholder_list_seed,
            company_name=company.name,
            capital=company.capital or DEFAULT_CAPITAL,
            register=f"Amtsgericht {company.court.name} {company.designation}",
        )
        return generated.content, generated.media_type, generated.filename
    pdf = simple_pdf(node.label, [company.name, f"Amtsgericht {company.court.name} {company.designation}"])
    return pdf, "application/pdf", f"{_slug(node.label)}.pdf"
