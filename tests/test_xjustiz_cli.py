"""`hreg xjustiz parse` and `hreg xjustiz validate` as a user runs them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from orchestration.cli import main

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "shared" / "samples" / "xjustiz"
REGISSTAR = SAMPLES_DIR / "SI_HRB_66158___2023-08-12T22-51-46.321Z.xml"
AUREG = SAMPLES_DIR / "SI_HRB_135559___2023-08-12T23-22-09.835Z.xml"
LEGACY = SAMPLES_DIR / "SI.xml"

CONTRACT_KEYS = {
    "parser_version",
    "source",
    "register",
    "name",
    "legal_form",
    "seat",
    "address",
    "capital",
    "purpose",
    "statute_date",
    "representation",
    "officers",
    "entries",
    "last_entry_date",
}
OFFICER_KEYS = {
    "role_code",
    "role",
    "kind",
    "name",
    "first_name",
    "last_name",
    "birth_date",
    "city",
    "representation",
    "exempt_181",
    "liability_amount",
}


def _run(*args: str):
    return CliRunner().invoke(main, ["xjustiz", *args])


def test_parse_one_file_prints_one_json_record_with_the_contract_fields() -> None:
    result = _run("parse", str(REGISSTAR))
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert set(record) == CONTRACT_KEYS
    assert set(record["source"]) == {"format", "xjustiz_version", "producer", "retrieved_at"}
    assert set(record["register"]) == {"court_code", "court_name", "type", "number", "suffix"}
    assert all(set(o) == OFFICER_KEYS for o in record["officers"])
    assert set(record["entries"][0]) == {"column", "position", "number", "kind", "text"}
    assert record["name"] == "Apple GmbH" and record["capital"] == {"amount": "5000000.00", "currency": "EUR"}


def test_parse_several_files_prints_json_lines_in_order() -> None:
    result = _run("parse", str(REGISSTAR), str(AUREG), str(LEGACY))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [json.loads(line)["name"] for line in lines] == ["Apple GmbH", "Amazon CS Berlin GmbH", "CargoKite GmbH"]


def test_a_bad_file_exits_non_zero_with_one_line_naming_the_failure_class(tmp_path: Path) -> None:
    broken = tmp_path / "broken.xml"
    broken.write_bytes(b"<tns:nachricht.reg.0400003 xmlns:tns='http://www.xjustiz.de'><unclosed>")
    foreign = tmp_path / "foreign.xml"
    foreign.write_bytes(b"<html/>")
    result = _run("parse", str(REGISSTAR), str(broken), str(foreign))
    assert result.exit_code == 1
    assert json.loads(result.stdout)["name"] == "Apple GmbH"  # the good file is still printed
    errors = result.stderr.splitlines()
    assert len(errors) == 2
    assert errors[0].startswith(f"{broken}: invalid_file: not well-formed XML")
    assert errors[1].startswith(f"{foreign}: invalid_file: not an XJustiz SI document")


def test_unsupported_version_and_parser_error_are_named(tmp_path: Path) -> None:
    future = tmp_path / "future.xml"
    future.write_bytes(REGISSTAR.read_bytes().replace(b'xjustizVersion="3.3.1"', b'xjustizVersion="3.9.0"'))
    result = _run("parse", str(future))
    assert result.exit_code == 1 and result.stderr.startswith(f"{future}: unsupported_version: ")

    undated = tmp_path / "undated.xml"
    undated.write_bytes(REGISSTAR.read_bytes().replace(b"<tns:geburtsdatum>1954-03-11<", b"<tns:geburtsdatum>gestern<"))
    result = _run("parse", str(undated))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"{undated}: parser_error: ") and " at /nachricht.reg.0400003/" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_validate_reports_per_file_and_fails_on_an_invalid_one(tmp_path: Path) -> None:
    tampered = tmp_path / "tampered.xml"
    tampered.write_bytes(
        REGISSTAR.read_bytes().replace(
            b"<tns:laufendeNummer>66158</tns:laufendeNummer>", b"<tns:nummer>66158</tns:nummer>"
        )
    )
    result = _run("validate", str(AUREG), str(tampered))
    assert result.exit_code == 1
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    assert first == {"file": str(AUREG), "valid": True, "problems": []}
    assert second["valid"] is False and any("nummer" in p for p in second["problems"])


def test_validate_against_a_given_xsd_folder(tmp_path: Path) -> None:
    xsd_root = SAMPLES_DIR.parent / "xsd"
    result = _run("validate", "--xsd-dir", str(xsd_root), str(REGISSTAR))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"file": str(REGISSTAR), "valid": True, "problems": []}

    # A folder without the file's version (3.3.1) is the one asked, not the shipped schemas.
    other_versions = tmp_path / "xsd"
    shutil.copytree(xsd_root / "openXJV_XJustiz_3_5_1", other_versions / "openXJV_XJustiz_3_5_1")
    result = _run("validate", "--xsd-dir", str(other_versions), str(REGISSTAR))
    assert result.exit_code == 1
    assert json.loads(result.stdout)["problems"] == ["no XSD for XJustiz 3.3.1 available"]


def test_validate_reads_the_xsd_folder_from_the_settings(tmp_path: Path, monkeypatch) -> None:
    other_versions = tmp_path / "xsd"
    shutil.copytree(SAMPLES_DIR.parent / "xsd" / "openXJV_XJustiz_3_5_1", other_versions / "openXJV_XJustiz_3_5_1")
    monkeypatch.setenv("HREG_XJUSTIZ_XSD_DIR", str(other_versions))

    result = _run("validate", str(REGISSTAR))
    assert result.exit_code == 1
    assert json.loads(result.stdout)["problems"] == ["no XSD for XJustiz 3.3.1 available"]
