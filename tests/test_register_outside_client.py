"""A client written by someone else against the real portal walks the sample register's DK tree and
downloads from it (tests/outside_client.py: the request flow of the public handelsregister-cli,
and the format radio as the public Node.js crawler sends it)."""

from __future__ import annotations

import io
import zipfile

import pytest

from orchestration.register import PortalClient, SearchMode
from orchestration.stages.shareholder_download import newest_shareholder_list, shareholder_list_file
from outside_client import click_link, doc_links, open_dk, search
from sample_register import start_sample_register_in_thread
from sample_register.documents import filings

MAGIC = (b"%PDF", b"II*\x00", b"MM\x00*")


@pytest.fixture(scope="module")
def sample_register(samples_dir):
    with start_sample_register_in_thread(samples_dir=samples_dir, generated=400) as server:
        yield server


def current_list_zip_only(company) -> bool:
    return [f for f in filings(company) if f.shareholder_list][-1].zip_only


@pytest.mark.parametrize("zip_only", [False, True])
def test_outside_client_walks_the_tree_and_downloads_the_shareholder_list(sample_register, tmp_path, zip_only):
    corpus = sample_register.corpus
    company = next(
        c
        for c in corpus.companies
        if c.legal_form == "GmbH"
        and c.sample_file is None
        and not c.deleted
        and current_list_zip_only(c) is zip_only
        and len(corpus.search(c.name, SearchMode.EXACT)) == 1
    )

    dk = open_dk(sample_register.url, company.name)
    nodes = dk.walk_tree()
    lists = [n for n in nodes.values() if n.leaf and n.label.startswith("Liste der Gesellschafter - Aufnahme")]
    content, headers = dk.download_leaf(lists[0].rowkey, radio="true" if zip_only else "false")

    assert "attachment" in {k.lower(): v for k, v in headers.items()}["content-disposition"]
    if zip_only:
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            (member,) = archive.namelist()
            content = archive.read(member)
    assert content[:4] in MAGIC
    # Our client, in its own session, gets the same document.
    with PortalClient(sample_register.url, diagnostics_dir=tmp_path) as client:
        (row,) = client.search(company.name, SearchMode.EXACT)
        ours = shareholder_list_file(
            client.download_document(row, newest_shareholder_list(client.list_documents(row))),
            "test",
            source="shareholder_download",
        )
    assert ours.content == content


def test_outside_client_downloads_si_and_printouts(sample_register):
    sample = next(
        c
        for c in sample_register.corpus.companies
        if c.sample_file and not c.deleted and len(sample_register.corpus.search(c.name, SearchMode.EXACT)) == 1
    )
    br, results = search(sample_register.url, sample.name)
    links = doc_links(results, 0)

    assert click_link(br, *links["SI"]).read() == sample.sample_file.read_bytes()
    br, results = search(sample_register.url, sample.name)
    assert click_link(br, *doc_links(results, 0)["AD"]).read()[:4] == b"%PDF"
