"""Every document kind from the command line, ZIPs unpacked safely, and the sample register's
announcements through our client."""

from __future__ import annotations

import io
import json
import re
import zipfile
from datetime import date, timedelta

import httpx
import pytest
from click.testing import CliRunner

from orchestration.cli import main
from orchestration.records.documents import ZIP_MAX_MEMBERS, DocumentStore, unpack_zip
from orchestration.register import Announcement, PortalClient, SearchMode
from orchestration.runtime.failures import FailureClass, JobError
from sample_register import start_sample_register_in_thread
from sample_register.documents import filings

PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


def zip_of(*members: tuple[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, content in members:
            archive.writestr(name, content)
    return buffer.getvalue()


# ----------------------------------------------------------------------------- ZIPs


def test_a_zip_and_a_zip_inside_it_are_unpacked():
    inner = zip_of(("Seite_2.tif", b"II*\x00rest"))
    files = unpack_zip(zip_of(("Liste/Gesellschafterliste.pdf", PDF), ("inner.zip", inner)))
    assert [(f.filename, f.media_type, f.content) for f in files] == [
        ("Gesellschafterliste.pdf", "application/pdf", PDF),
        ("Seite_2.tif", "image/tiff", b"II*\x00rest"),
    ]


@pytest.mark.parametrize(
    ("archive", "reason"),
    [
        (zip_of(("../../etc/evil.pdf", PDF)), "outside the archive"),
        (zip_of(("/abs/evil.pdf", PDF)), "outside the archive"),
        (zip_of(("C:/evil.pdf", PDF)), "outside the archive"),
        (zip_of(*[(f"{i}.pdf", PDF) for i in range(ZIP_MAX_MEMBERS + 1)]), "more than the"),
        (zip_of(("bomb.pdf", b"\0" * (40 * 1024 * 1024))), "zip bomb"),
        (zip_of(("a.zip", zip_of(("b.zip", zip_of(("c.pdf", PDF)))))), "deeper than"),
        (b"PK\x03\x04 not really a zip", "not a readable ZIP"),
        (zip_of(), "holds no file"),
    ],
)
def test_dangerous_or_broken_zips_are_refused_as_invalid_files(archive, reason):
    with pytest.raises(JobError) as caught:
        unpack_zip(archive, "the list")
    # invalid_file is permanent (processing.failure_classes): fetching again brings the same bytes.
    assert caught.value.failure_class is FailureClass.INVALID_FILE
    assert reason in caught.value.message and caught.value.message.startswith("the list")


def test_the_same_bytes_from_a_zip_and_directly_are_one_raw_document(engine, tmp_path):
    store = DocumentStore(tmp_path / "documents")
    (unpacked,) = unpack_zip(zip_of(("liste.pdf", PDF)))
    with engine.begin() as conn:
        direct = store.store(conn, PDF, kind="shareholder_list", media_type="application/pdf", filename="a.pdf")
        from_zip = store.store(conn, unpacked.content, kind="shareholder_list", media_type=unpacked.media_type)
    assert direct == from_zip


# ----------------------------------------------------------------------------- command line


@pytest.fixture(scope="module")
def sample_register(samples_dir):
    with start_sample_register_in_thread(samples_dir=samples_dir, generated=400) as server:
        yield server


@pytest.fixture
def configured(sample_register, db_url, monkeypatch):
    monkeypatch.setenv("HREG_REGISTER_URL", sample_register.url)
    yield sample_register


def unique(corpus, predicate):
    return next(
        c
        for c in corpus.companies
        if predicate(c) and len(corpus.search(c.name, SearchMode.EXACT, include_deleted=True)) == 1
    )


def run(*args: str):
    result = CliRunner().invoke(main, ["register", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_cli_documents_prints_the_tree_with_folders_and_dates(configured):
    company = unique(configured.corpus, lambda c: c.legal_form == "GmbH" and c.sample_file is None and not c.deleted)

    tree = json.loads(run("documents", company.court.code, company.register_type, company.register_number))

    documents = {d["row_key"]: d for d in tree["documents"]}
    current = documents["0_1"]
    assert current["label"].startswith("Liste der Gesellschafter - Aufnahme in den Registerordner am ")
    assert current["folders"] == ["Dokumente zum Rechtsträger"]
    day, month, year = current["label"].rsplit(" ", 1)[1].split(".")
    assert current["date"] == f"{year}-{month}-{day}"
    statute = next(d for d in tree["documents"] if d["label"].startswith("Gesellschaftsvertrag vom"))
    assert statute["folders"] == [
        "Dokumente zum Rechtsträger",
        "Dokumente zur Registernummer",
        "Gesellschaftsvertrag / Satzung / Statut",
    ]
    assert tree["tree"][0]["label"] == "Dokumente zum Rechtsträger"


@pytest.mark.parametrize("kind", ["AD", "CD", "HD", "SI"])
def test_cli_download_of_printouts_and_si(configured, tmp_path, kind):
    # HD is linked for deleted companies only, as on the portal's result rows.
    company = unique(configured.corpus, lambda c: c.deleted == (kind == "HD"))

    output = run(
        "download",
        company.court.code,
        company.register_type,
        company.register_number,
        "--kind",
        kind,
        "-o",
        str(tmp_path),
    )

    (saved,) = tmp_path.iterdir()
    assert str(saved) in output
    extension = "xml" if kind == "SI" else "pdf"
    assert re.fullmatch(
        rf"{company.court.state_abbreviation}-.+_{company.register_type}_{company.register_number}\+{kind}-\d{{14}}\.{extension}",
        saved.name,
    )
    assert saved.read_bytes()[:5] == (b"<?xml" if kind == "SI" else b"%PDF-")


def test_cli_download_of_one_dk_document_and_of_a_zip_only_list(configured, tmp_path):
    def current_zip_only(c):
        lists = [f for f in filings(c) if f.shareholder_list]
        return c.legal_form == "GmbH" and c.sample_file is None and not c.deleted and lists and lists[-1].zip_only

    company = unique(configured.corpus, current_zip_only)
    key = (company.court.code, company.register_type, company.register_number)

    run("download", *key, "--kind", "DK", "--document", "0_1", "-o", str(tmp_path / "one"))

    saved = sorted(p.name for p in (tmp_path / "one").iterdir())
    archive = next(n for n in saved if n.endswith(".zip"))
    assert "+Liste_der_Gesellschafter_-_Aufnahme_in_den_R-" in archive
    (inner,) = [n for n in saved if n != archive]
    assert inner.endswith((".pdf", ".tif")) and (tmp_path / "one" / inner).read_bytes()[:4] in (
        b"%PDF",
        b"II*\x00",
        b"MM\x00*",
    )


def test_cli_download_of_the_whole_tree_fetches_each_document_once(configured, tmp_path):
    company = unique(configured.corpus, lambda c: c.legal_form == "e.V." and not c.deleted)
    tree = json.loads(run("documents", company.court.code, company.register_type, company.register_number))
    labels = {d["label"] for d in tree["documents"]}

    output = run(
        "download",
        company.court.code,
        company.register_type,
        company.register_number,
        "--kind",
        "DK",
        "-o",
        str(tmp_path),
    )

    # The statute sits in two folders; it is downloaded once.
    assert len(tree["documents"]) > len(labels)
    assert len(output.splitlines()) == len(labels) == len(list(tmp_path.iterdir()))


def test_cli_download_of_ut_and_voe_pages(configured, tmp_path):
    company = unique(configured.corpus, lambda c: not c.deleted)
    for kind in ("UT", "VÖ"):
        run(
            "download",
            company.court.code,
            company.register_type,
            company.register_number,
            "--kind",
            kind,
            "-o",
            str(tmp_path),
        )
    ut, voe = (next(tmp_path.glob(f"*_{suffix}.html")) for suffix in ("UT", "VO"))
    assert company.name in ut.read_text() and "<html" in voe.read_text()


# ----------------------------------------------------------------------------- announcements


def test_announcements_through_the_client_and_a_new_document(sample_register, tmp_path):
    company = unique(
        sample_register.corpus, lambda c: c.legal_form == "GmbH" and c.sample_file is None and not c.deleted
    )
    today = sample_register.register.today
    with PortalClient(sample_register.url, diagnostics_dir=tmp_path) as client:
        before = client.search_announcements(today, today, court=company.court.code)
        filed = httpx.post(
            f"{sample_register.url}/_sample/companies/{company.court.code}/{company.register_type}/{company.register_number}/documents"
        ).json()
        after = client.search_announcements(today, today, court=company.court.code, category="3")
        (new,) = [a for a in after if a.id == filed["announcement_id"]]
        detail = client.announcement_detail(new)
        (row,) = client.search(company.name, SearchMode.EXACT)
        labels = [n.label for n in client.list_documents(row)[0].children]

    assert filed["announcement_id"] not in {a.id for a in before}
    assert (new.category, new.category_code, new.register_number, new.name) == (
        "Einreichung neuer Dokumente",
        "3",
        company.register_number,
        company.name,
    )
    assert new.published == today and detail.published == today and detail.name == company.name
    assert filed["label"] in detail.text
    # The new list is the current one, directly under the root.
    assert labels[1] == filed["label"]


def test_announcement_search_by_state_and_date_range(sample_register, tmp_path):
    today = date.today()
    with PortalClient(sample_register.url, diagnostics_dir=tmp_path) as client:
        bavaria = client.search_announcements(today - timedelta(days=60), today, state="Bayern")
        recent = client.search_announcements(today - timedelta(days=5), today)
        with pytest.raises(JobError) as caught:
            client.search_announcements(today, today - timedelta(days=3))
    assert bavaria and {a.state for a in bavaria} == {"Bayern"}
    assert all(today - timedelta(days=5) <= a.published <= today for a in recent)
    assert all(isinstance(a, Announcement) for a in recent)
    assert (caught.value.failure_class, caught.value.code) == (FailureClass.INVALID_FILE, "portal_message")


def test_cli_announcements_prints_json_lines(configured):
    output = run("announcements", "--days", "60", "--category", "3")
    found = [Announcement.model_validate_json(line) for line in output.splitlines()]
    assert found and {a.category_code for a in found} == {"3"}
