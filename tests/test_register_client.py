"""The register client against the sample register, over real HTTP."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from orchestration.cli import main
from orchestration.register import PortalClient, ResultRow, SearchMode, register_client_for
from orchestration.register.results import walk_nodes
from orchestration.runtime.failures import FailureClass, JobError
from orchestration.settings import Settings
from orchestration.xjustiz import parse_si, validate_xsd
from sample_register import start_sample_register_in_thread

MAGIC = {"application/pdf": b"%PDF", "image/tiff": (b"II*\x00", b"MM\x00*")}


@pytest.fixture(scope="module")
def sample_register(samples_dir):
    with start_sample_register_in_thread(samples_dir=samples_dir) as server:
        yield server


@pytest.fixture(scope="module")
def corpus(sample_register):
    return sample_register.corpus


@pytest.fixture(autouse=True)
def no_faults(sample_register):
    yield
    httpx.delete(sample_register.url + "/_sample/faults").raise_for_status()


@pytest.fixture
def client(sample_register, tmp_path):
    with PortalClient(sample_register.url, diagnostics_dir=tmp_path / "diagnostics") as client:
        yield client


# A client that gives up after 10 s, and an answer the register holds back six times as long:
# the answer times out however busy the machine, while every other answer has 10 s to come.
IMPATIENT_S, HELD_BACK_S = 10.0, 60.0


@pytest.fixture
def impatient_client(sample_register, tmp_path):
    with PortalClient(sample_register.url, diagnostics_dir=tmp_path / "diagnostics", timeout_s=IMPATIENT_S) as client:
        yield client


def arm(sample_register, **fault) -> None:
    httpx.post(sample_register.url + "/_sample/faults", json=fault).raise_for_status()


def words(name: str) -> set[str]:
    return {w.casefold() for w in re.findall(r"\w+", name)}


# ----------------------------------------------------------------------------- search


def test_search_all_words_any_word_and_exact_name(client):
    every = client.search("Amazon Logistik", SearchMode.ALL, max_results=100, register_type="HRB")
    # The portal wants a further criterion with "at least one keyword".
    some = client.search("Amazon Logistik", SearchMode.ANY, max_results=100, register_type="HRB")
    exact = client.search("Amazon City Logistik Alpha GmbH", SearchMode.EXACT)
    pattern = client.search("amazon city logistik *", SearchMode.EXACT)

    assert {"Amazon City Logistik Alpha GmbH", "Amazon City Logistik Gamma GmbH"} <= {r.name for r in every}
    assert all({"amazon", "logistik"} <= words(r.name) for r in every)
    assert all({"amazon", "logistik"} & words(r.name) for r in some)
    assert {r.name for r in every} < {r.name for r in some}
    assert [r.name for r in exact] == ["Amazon City Logistik Alpha GmbH"]
    assert sorted(r.name for r in pattern) == ["Amazon City Logistik Alpha GmbH", "Amazon City Logistik Gamma GmbH"]


def test_result_limit(client, corpus):
    assert len(corpus.search("GmbH", SearchMode.ANY, register_type="HRB")) > 60
    assert len(client.search("GmbH", SearchMode.ANY, register_type="HRB", max_results=7)) == 7
    assert len(client.search("GmbH", SearchMode.ANY, register_type="HRB", max_results=60)) == 60


def test_search_filters_by_register_type_court_and_deletion(client, corpus):
    clubs = client.search("Bremen", SearchMode.ANY, register_type="VR", court="Bremen", max_results=100)
    assert clubs and all(r.register_type == "VR" and r.court_code == "H1101" for r in clubs)
    assert "University Club e.V. at Jacobs University Bremen" in {r.name for r in clubs}

    deleted = next(c for c in corpus.companies if c.deleted)
    assert client.search(deleted.name, SearchMode.EXACT) == []
    (row,) = client.search(deleted.name, SearchMode.EXACT, include_deleted=True)
    assert row.status == "deleted" and "HD" in row.documents


def test_rows_carry_court_code_suffix_and_earlier_names(client, corpus):
    renamed = next(c for c in corpus.companies if c.earlier_names and c.register_suffix and not c.deleted)

    (row,) = client.search(renamed.name, SearchMode.EXACT, court=renamed.court.name)

    assert (row.court_code, row.court, row.state) == (renamed.court.code, renamed.court.name, renamed.court.state)
    assert (row.register_type, row.register_number, row.register_suffix) == (*renamed.key[1:], renamed.register_suffix)
    assert [(e.name, e.seat) for e in row.earlier_names] == list(renamed.earlier_names)
    assert row.documents == ["AD", "CD", "DK", "UT", "VÖ", "SI"]


def test_no_results_is_an_empty_list(client):
    assert client.search("Xylophonquartett Zzyzx", SearchMode.ALL) == []


# ----------------------------------------------------------------------------- SI


def test_si_download_of_a_real_sample(client, corpus):
    sample = next(c for c in corpus.companies if c.sample_file and c.register_suffix == "B")
    (row,) = client.search(sample.name, SearchMode.EXACT)

    content, filename = client.download_si(row)

    assert content == sample.sample_file.read_bytes()
    assert re.fullmatch(rf"BE-Berlin_Charlottenburg_HRB_{sample.register_number}\+SI-\d{{14}}\.xml", filename)


@pytest.mark.parametrize("version", ["3.3.1", "3.5.1", "1.x"])
def test_si_of_generated_companies_parses(client, corpus, version):
    company = next(c for c in corpus.companies if c.sample_file is None and c.si_version == version and not c.deleted)
    (row,) = client.search(company.name, SearchMode.EXACT)

    content, _ = client.download_si(row)

    record = parse_si(content)
    assert (record.name, record.register.number) == (company.name, company.register_number)
    if version != "1.x":
        assert validate_xsd(content) == []


def test_a_row_from_another_session_is_found_again(sample_register, client, tmp_path):
    (row,) = client.search("Apple GmbH", SearchMode.EXACT)
    with PortalClient(sample_register.url, diagnostics_dir=tmp_path) as other:
        content, _ = other.download_si(row)
    assert parse_si(content).name == "Apple GmbH"


def test_an_idle_session_is_replaced_by_a_new_one(sample_register, tmp_path):
    def sessions() -> int:
        return httpx.get(sample_register.url + "/_sample/health").json()["sessions"]

    before = sessions()
    with PortalClient(sample_register.url, diagnostics_dir=tmp_path, session_idle_s=0) as client:
        (row,) = client.search("Apple GmbH", SearchMode.EXACT)
        content, _ = client.download_si(row)

    # The download did not trust the search's session and found the row again in a new one.
    assert sessions() - before == 2
    assert parse_si(content).name == "Apple GmbH"


# ----------------------------------------------------------------------------- DK tree


def test_document_tree_and_shareholder_list(sample_register, client, corpus, tmp_path):
    company = next(c for c in corpus.companies if c.legal_form == "GmbH" and c.sample_file is None and not c.deleted)
    (row,) = client.search(company.name, SearchMode.EXACT)

    nodes = client.list_documents(row)

    lists = [n for n in walk_nodes(nodes) if n.is_shareholder_list]
    assert lists, [n.label for n in walk_nodes(nodes)]
    assert all(n.kind == "document" and not n.children for n in lists)
    download = client.download_document(row, lists[-1])
    assert download.media_type in (*MAGIC, "application/zip")
    assert download.filename.startswith(f"{company.court.state_abbreviation}-")

    # A fresh session expands the folders on the way to a node by itself.
    folder_documents = [n for n in walk_nodes(nodes) if n.kind == "document" and n.row_key.count("_") == 3]
    with PortalClient(sample_register.url, diagnostics_dir=tmp_path) as other:
        download = other.download_document(row, folder_documents[-1])
    assert download.media_type == "application/pdf" and download.content.startswith(b"%PDF")


def test_companies_without_shareholder_lists(client, corpus):
    club = next(c for c in corpus.companies if c.legal_form == "e.V." and not c.deleted)
    (row,) = client.search(club.name, SearchMode.EXACT)
    documents = [n for n in walk_nodes(client.list_documents(row)) if n.kind == "document"]
    # The club files documents (its statutes among them), just no shareholder list.
    assert any(n.label.startswith("Satzung vom") for n in documents), [n.label for n in documents]
    assert not [n for n in documents if n.is_shareholder_list]


# ----------------------------------------------------------------------------- faults


@pytest.mark.parametrize(
    ("fault", "failure_class", "code"),
    [
        ({"kind": "server_error", "status": 503}, FailureClass.DEPENDENCY_UNAVAILABLE, "503"),
        ({"kind": "server_error", "status": 500}, FailureClass.DEPENDENCY_UNAVAILABLE, "500"),
        ({"kind": "too_many_requests"}, FailureClass.DEPENDENCY_UNAVAILABLE, "429"),
        ({"kind": "rate_limit_page"}, FailureClass.DEPENDENCY_UNAVAILABLE, "rate_limit_page"),
    ],
)
def test_transient_faults_during_a_search(sample_register, client, fault, failure_class, code):
    arm(sample_register, **fault)
    with pytest.raises(JobError) as caught:
        client.search("Apple", SearchMode.ALL)
    assert (caught.value.failure_class, caught.value.code, caught.value.source) == (failure_class, code, "register")
    # The fault was one response; the same client carries on.
    assert client.search("Apple GmbH", SearchMode.EXACT)


def test_an_answer_held_back_times_out_and_the_client_carries_on(sample_register, impatient_client):
    arm(sample_register, kind="slow", delay_s=HELD_BACK_S)
    with pytest.raises(JobError) as caught:
        impatient_client.search("Apple", SearchMode.ALL)
    assert (caught.value.failure_class, caught.value.code, caught.value.source) == (
        FailureClass.TIMEOUT,
        "timeout",
        "register",
    )
    assert impatient_client.search("Apple GmbH", SearchMode.EXACT)


def test_truncated_si_download_is_transient(sample_register, client):
    (row,) = client.search("Apple GmbH", SearchMode.EXACT)
    arm(sample_register, kind="truncated")
    with pytest.raises(JobError) as caught:
        client.download_si(row)
    assert (caught.value.failure_class, caught.value.code) == (FailureClass.DEPENDENCY_UNAVAILABLE, "truncated")
    assert parse_si(client.download_si(row)[0]).name == "Apple GmbH"


def test_unexpected_page_is_a_parser_error_and_is_kept(sample_register, client, tmp_path):
    arm(sample_register, kind="unexpected_page", on="page")
    with pytest.raises(JobError) as caught:
        client.search("Apple", SearchMode.ALL)

    assert caught.value.failure_class is FailureClass.PARSER_ERROR
    (saved,) = (tmp_path / "diagnostics").iterdir()
    assert str(saved) in caught.value.message
    assert b"The register portal is being redesigned." in saved.read_bytes()


def test_unexpected_partial_response_is_a_parser_error(sample_register, client, corpus):
    company = next(c for c in corpus.companies if c.legal_form == "GmbH" and not c.deleted)
    (row,) = client.search(company.name, SearchMode.EXACT)
    arm(sample_register, kind="unexpected_page", on="ajax")
    with pytest.raises(JobError) as caught:
        client.list_documents(row)
    assert caught.value.failure_class is FailureClass.PARSER_ERROR


# ----------------------------------------------------------------------------- wiring


def test_configured_client_takes_tokens_of_the_shared_bucket(sample_register, engine):
    settings = Settings(register_url=sample_register.url, rate_limit_per_hour=3600)
    with register_client_for(settings, engine) as client:
        client.search("Apple GmbH", SearchMode.EXACT)

    with engine.connect() as conn:
        capacity, tokens = conn.execute(
            sa.text("SELECT capacity, tokens FROM processing.rate_limits WHERE name = :n"),
            {"n": f"register {sample_register.url}"},
        ).one()
    # The start page (a redirect, then the page) and the navigation carry no register data: the
    # result page is the one retrieval, out of a burst of 300.
    assert capacity - tokens == pytest.approx(1, abs=0.1)


# ----------------------------------------------------------------------------- command line


@pytest.fixture
def configured_register(sample_register, db_url, monkeypatch):
    """The settings point at the sample register and the test database."""
    monkeypatch.setenv("HREG_REGISTER_URL", sample_register.url)
    return sample_register


def test_cli_search_prints_json_lines(configured_register):
    result = CliRunner().invoke(main, ["register", "search", "Amazon Logistik", "--max", "5"])

    assert result.exit_code == 0, result.output
    rows = [ResultRow.model_validate_json(line) for line in result.output.splitlines()]
    assert {r.name for r in rows} == {"Amazon City Logistik Alpha GmbH", "Amazon City Logistik Gamma GmbH"}


def test_cli_download_si_saves_the_document(configured_register, corpus, tmp_path):
    sample = next(c for c in corpus.companies if c.sample_file and c.court.code == "D2601")
    target = tmp_path / "si.xml"

    result = CliRunner().invoke(
        main,
        ["register", "download-si", sample.court.code, sample.register_type, sample.register_number, "-o", str(target)],
    )

    assert result.exit_code == 0, result.output
    assert target.read_bytes() == sample.sample_file.read_bytes()


def test_cli_download_si_of_an_unknown_number_fails(configured_register, tmp_path):
    result = CliRunner().invoke(
        main, ["register", "download-si", "D2601", "HRB", "9999999", "-o", str(tmp_path / "x.xml")]
    )
    assert result.exit_code == 1 and "not in the register" in result.output


def test_cli_serves_the_sample_register(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "hreg"), "sample-register", "--port", str(port), "--generated", "50"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/", follow_redirects=True, timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.2)
        assert response.status_code == 200 and "naviForm:erweiterteSucheLink" in response.text
    finally:
        process.terminate()
        process.wait(timeout=10)
