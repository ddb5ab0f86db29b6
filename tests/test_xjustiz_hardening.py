"""Hostile, broken and foreign input: refused with the failure class a job needs to decide."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestration.runtime.failures import FailureClass, JobError
from orchestration.xjustiz import parse_si
from orchestration.xjustiz.safe_xml import MAX_DOCUMENT_BYTES

SAMPLE = (
    Path(__file__).resolve().parents[2]
    / "shared"
    / "samples"
    / "xjustiz"
    / "SI_HRB_66158___2023-08-12T22-51-46.321Z.xml"
)


def _failure(data: bytes) -> JobError:
    with pytest.raises(JobError) as caught:
        parse_si(data)
    assert caught.value.source == "xjustiz"
    return caught.value


def _with_doctype(doctype: str, body: str = "&payload;") -> bytes:
    """The real sample with a DTD in front and an entity reference in the company name."""
    text = SAMPLE.read_text(encoding="utf-8")
    text = text.replace("<?xml version='1.0' encoding='UTF-8'?>", "<?xml version='1.0' encoding='UTF-8'?>\n" + doctype)
    return text.replace("<tns:bezeichnung.aktuell>Apple GmbH", f"<tns:bezeichnung.aktuell>{body}", 1).encode()


def test_external_entity_is_refused_and_never_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    data = _with_doctype(f'<!DOCTYPE tns:nachricht.reg.0400003 [<!ENTITY payload SYSTEM "file://{secret}">]>')
    error = _failure(data)
    assert error.failure_class is FailureClass.INVALID_FILE
    assert "TOP-SECRET" not in str(error)


def test_billion_laughs_is_refused() -> None:
    entities = '<!ENTITY lol "lol">' + "".join(
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">' for i in range(1, 10)
    )
    error = _failure(_with_doctype(f"<!DOCTYPE tns:nachricht.reg.0400003 [{entities}]>", "&lol9;"))
    assert error.failure_class is FailureClass.INVALID_FILE


def test_external_dtd_over_the_network_is_refused() -> None:
    error = _failure(_with_doctype('<!DOCTYPE tns:nachricht.reg.0400003 SYSTEM "http://127.0.0.1:9/evil.dtd">', "x"))
    assert error.failure_class is FailureClass.INVALID_FILE


@pytest.mark.parametrize(
    "data",
    [b"", b"   \n", b"%PDF-1.7 not xml", SAMPLE.read_bytes()[:5000], b"<a><b></a>"],
    ids=["empty", "blank", "pdf", "truncated", "mismatched-tags"],
)
def test_broken_files_are_invalid(data: bytes) -> None:
    assert _failure(data).failure_class is FailureClass.INVALID_FILE


def test_a_document_over_the_size_limit_is_refused_before_parsing() -> None:
    data = SAMPLE.read_bytes()
    data += b"<!--" + b"x" * (MAX_DOCUMENT_BYTES - len(data)) + b"-->"
    error = _failure(data)
    assert error.failure_class is FailureClass.INVALID_FILE
    assert "limit" in error.message


@pytest.mark.parametrize(
    "data",
    [
        b"<html><body>Wartungsarbeiten</body></html>",
        b'<?xml version="1.0"?><tns:nachricht.gds.basisnachricht.0005005 xmlns:tns="http://www.xjustiz.de"/>',
        b'<nachricht.reg.0400003 xmlns="urn:not-xjustiz"/>',
    ],
    ids=["html", "other-xjustiz-message", "foreign-namespace"],
)
def test_xml_that_is_not_an_xjustiz_si_document_is_invalid(data: bytes) -> None:
    assert _failure(data).failure_class is FailureClass.INVALID_FILE


def test_missing_version_is_a_parser_error_with_its_path() -> None:
    error = _failure(SAMPLE.read_bytes().replace(b' xjustizVersion="3.3.1"', b""))
    assert error.failure_class is FailureClass.PARSER_ERROR
    assert error.code == "/nachricht.reg.0400003/nachrichtenkopf/@xjustizVersion"


def _without(data: bytes, start: bytes, end: bytes) -> bytes:
    before, rest = data.split(start, 1)
    return before + rest.split(end, 1)[1]


def test_missing_register_data_is_a_parser_error_with_its_path() -> None:
    data = _without(SAMPLE.read_bytes(), b"<tns:fachdatenRegister", b"</tns:fachdatenRegister>")
    error = _failure(data)
    assert error.failure_class is FailureClass.PARSER_ERROR
    assert error.code == "/nachricht.reg.0400003/fachdatenRegister"


def test_a_bad_date_is_a_parser_error_naming_where_it_is() -> None:
    data = SAMPLE.read_bytes().replace(b"<tns:geburtsdatum>1954-03-11<", b"<tns:geburtsdatum>11.03.1954<")
    error = _failure(data)
    assert error.failure_class is FailureClass.PARSER_ERROR
    assert error.code is not None and error.code.endswith(
        "/beteiligter/auswahl_beteiligter/natuerlichePerson/geburt/geburtsdatum"
    )
    assert "11.03.1954" in error.message


def test_a_bad_entry_number_is_a_parser_error_naming_where_it_is() -> None:
    data = SAMPLE.read_bytes().replace(b"<tns:spalte>7</tns:spalte>", b"<tns:spalte>VII</tns:spalte>", 1)
    error = _failure(data)
    assert error.failure_class is FailureClass.PARSER_ERROR
    assert error.code == "/nachricht.reg.0400003/fachdatenRegister/auszug/eintragungstext/spalte"
    assert "VII" in error.message


def test_an_unknown_register_type_is_a_parser_error() -> None:
    data = SAMPLE.read_bytes().replace(b"<code>HRB</code>", b"<code>GsR</code>")
    error = _failure(data)
    assert error.failure_class is FailureClass.PARSER_ERROR
    assert "GsR" in error.message and error.code.endswith("aktenzeichen.strukturiert")


def test_error_leads_to_the_structured_job_error() -> None:
    error = _failure(b"<html/>")
    assert error.to_error() == {
        "type": "invalid_file",
        "message": error.message,
        "source": "xjustiz",
        "code": "/html",
    }
