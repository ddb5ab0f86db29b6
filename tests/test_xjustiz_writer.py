"""Generated SI documents: valid against the official XSDs, and read back into the same record."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from lxml import etree

import orchestration.xjustiz
from orchestration.xjustiz import PARSER_VERSION, CompanyRecord, parse_si
from sample_register.si_writer import SUPPORTED_WRITE_VERSIONS, write_si

FORMAT_OF_VERSION = {"1.x": "xjustiz-1", "3.3.1": "xjustiz-3", "3.5.1": "xjustiz-3"}


def _record(version: str, **changes) -> CompanyRecord:
    data = {
        "parser_version": PARSER_VERSION,
        "source": {
            "format": FORMAT_OF_VERSION[version],
            "xjustiz_version": "1.20.0" if version == "1.x" else version,
            "producer": "RegisSTAR",
            "retrieved_at": "2024-03-01T09:15:00",
        },
        "register": {"court_code": "D2601V", "court_name": "Amtsgericht München", "type": "HRB", "number": "123456"},
        "name": "Beispiel Software GmbH",
        "legal_form": {"code": "GmbH", "label": "Gesellschaft mit beschränkter Haftung"},
        "seat": "München",
        "address": {
            "street": "Leopoldstraße",
            "house_number": "12a",
            "postal_code": "80802",
            "city": "München",
            "country": "DE",
        },
        "capital": {"amount": "25000.00", "currency": "EUR"},
        "purpose": "Entwicklung und Vertrieb von Software.",
        "statute_date": "2019-05-07",
        "representation": "Ist nur ein Geschäftsführer bestellt, so vertritt er die Gesellschaft allein.",
        "officers": [
            {
                "role_code": "086",
                "role": "Geschäftsführer(in)",
                "kind": "person",
                "name": "Anna Maria Schulz",
                "first_name": "Anna Maria",
                "last_name": "Schulz",
                "birth_date": "1980-02-29",
                "city": "Starnberg",
                "representation": "einzelvertretungsberechtigt",
                "exempt_181": True,
            },
            {
                "role_code": "285",
                "role": "Prokurist(in)",
                "kind": "person",
                "name": "Jonas Weber",
                "first_name": "Jonas",
                "last_name": "Weber",
                "birth_date": "1975-11-03",
                "city": "München",
                "representation": "Gesamtprokura gemeinsam mit einem Geschäftsführer",
                "exempt_181": False,
            },
            {
                "role_code": "295",
                "role": "Zweigniederlassung",
                "kind": "organisation",
                "name": "Beispiel Software GmbH Zweigniederlassung Hamburg",
                "city": "Hamburg",
            },
        ],
        "entries": [
            {
                "column": 6,
                "position": 1,
                "number": 1,
                "kind": "Satzung",
                "text": "Gesellschaftsvertrag vom 07.05.2019.",
            },
            {
                "column": 6,
                "position": 2,
                "number": 2,
                "kind": "Freitext",
                "text": "Sitz verlegt von Augsburg nach München.",
            },
        ],
        "last_entry_date": "2023-11-20",
    }
    data.update(changes)
    return CompanyRecord.model_validate(data)


def _limited_partnership(version: str) -> CompanyRecord:
    return _record(
        version,
        name="Beispiel Verwaltungs GmbH & Co. KG",
        register={"court_code": "R2307", "court_name": "Amtsgericht Lemgo", "type": "HRA", "number": "4711"},
        legal_form={"code": "GmbH & Co. KG", "label": "GmbH & Co. Kommanditgesellschaft"},
        capital=None,
        officers=[
            {
                "role_code": "252",
                "role": "Persönlich haftende(r) Gesellschafter(in)",
                "kind": "organisation",
                "name": "Beispiel Verwaltungs GmbH",
                "city": "Lemgo",
                "exempt_181": True,
            },
            {
                "role_code": "275",
                "role": "Kommanditist(in)",
                "kind": "person",
                "name": "Karl Iser",
                "first_name": "Karl",
                "last_name": "Iser",
                "birth_date": "1964-03-19",
                "city": "Bad Salzuflen",
                "liability_amount": {"amount": "5052631.00", "currency": "EUR"},
            },
            {
                "role_code": "275",
                "role": "Kommanditist(in)",
                "kind": "person",
                "name": "Greta Pohl",
                "first_name": "Greta",
                "last_name": "Pohl",
                "liability_amount": {"amount": "1263158.40", "currency": "EUR"},
            },
        ],
    )


def _stock_corporation(version: str) -> CompanyRecord:
    return _record(
        version,
        name="Beispiel Holding AG",
        register={
            "court_code": "F1103R",
            "court_name": "Amtsgericht Charlottenburg",
            "type": "HRB",
            "number": "99",
            "suffix": "B",
        },
        legal_form={"code": "AG", "label": "Aktiengesellschaft"},
        capital={"amount": "120000.00", "currency": "EUR"},
        officers=[
            {
                "role_code": "194",
                "role": "Vorstand",
                "kind": "person",
                "name": "Eva Roth",
                "first_name": "Eva",
                "last_name": "Roth",
            }
        ],
    )


def _bare_association(version: str) -> CompanyRecord:
    """The least a document can say: no extract, no address, no capital, no producer."""
    return _record(
        version,
        source={"format": FORMAT_OF_VERSION[version], "xjustiz_version": "1.20.0" if version == "1.x" else version},
        name="Freunde des Beispielvereins e.V.",
        register={
            "court_code": "H1101",
            "court_name": "Amtsgericht Bremen",
            "type": "VR",
            "number": "6222",
            "suffix": "HB",
        },
        legal_form={"code": "e.V.", "label": "Eingetragener Verein"},
        address=None,
        capital=None,
        purpose=None,
        statute_date=None,
        representation=None,
        officers=[],
        entries=[],
        last_entry_date=None,
    )


RECORDS = {
    "gmbh": _record,
    "kg": _limited_partnership,
    "ag": _stock_corporation,
    "verein": _bare_association,
}


@pytest.mark.parametrize("version", SUPPORTED_WRITE_VERSIONS)
@pytest.mark.parametrize("kind", sorted(RECORDS))
def test_generated_document_reads_back_into_the_same_record(version: str, kind: str) -> None:
    record = RECORDS[kind](version)
    assert parse_si(write_si(record, version)) == record


# The register message's schema of each generation the writer writes, as the openXJV
# distribution names its folders and files. XJustiz 1.x (XJustiz_Daten) has no schema there: its
# documents are checked by reading them back only.
REGISTER_SCHEMAS = {
    "3.3.1": ("openXJV_XJustiz_3_3_1", "xjustiz_0400_register_3_2.xsd"),
    "3.5.1": ("openXJV_XJustiz_3_5_1", "xjustiz_0400_register_3_3.xsd"),
}
PACKAGED_XSD_DIR = Path(orchestration.xjustiz.__file__).parent / "xsd"


@functools.cache
def _schema(path: Path) -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(path), etree.XMLParser(no_network=True)))


def test_every_generation_written_has_a_schema_or_none_exists() -> None:
    assert set(SUPPORTED_WRITE_VERSIONS) == {"1.x", *REGISTER_SCHEMAS}


@pytest.mark.parametrize("schemas", ["distribution", "packaged"])
@pytest.mark.parametrize("version", sorted(REGISTER_SCHEMAS))
@pytest.mark.parametrize("kind", sorted(RECORDS))
def test_generated_3x_documents_are_valid_against_the_official_xsd(samples_dir, schemas, version, kind) -> None:
    folder, main = REGISTER_SCHEMAS[version]
    # The schemas as openXJV distributes them, and the copy the code location ships.
    path = samples_dir / "xsd" / folder / main if schemas == "distribution" else PACKAGED_XSD_DIR / version / main
    schema = _schema(path)
    document = etree.fromstring(write_si(RECORDS[kind](version), version))
    assert schema.validate(document), [f"line {e.line}: {e.message}" for e in schema.error_log]


def test_versions_differ_where_the_real_documents_differ() -> None:
    v33 = write_si(_record("3.3.1"), "3.3.1").decode()
    v35 = write_si(_record("3.5.1"), "3.5.1").decode()
    legacy = write_si(_record("1.x"), "1.x").decode()
    assert "<code>GmbH</code>" in v33 and "<code>221110</code>" in v35
    assert "auswahl_waehrung" in v35 and "auswahl_waehrung" not in v33
    assert "<XJustiz_Daten" in legacy and "<content>Gesellschaft mit beschränkter Haftung</content>" in legacy


def test_writer_refuses_a_record_it_cannot_carry() -> None:
    with pytest.raises(ValueError, match="either capital or Hafteinlagen"):
        write_si(_limited_partnership("3.3.1").model_copy(update={"capital": _record("3.3.1").capital}), "3.3.1")
    with pytest.raises(ValueError, match="cannot write"):
        write_si(_record("3.3.1"), "2.0")
