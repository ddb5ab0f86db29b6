"""Which XJustiz versions are read, which are refused, and the places where versions differ."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestration.runtime.failures import FailureClass, JobError
from orchestration.xjustiz import parse_si

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "shared" / "samples" / "xjustiz"
SAMPLE = SAMPLES_DIR / "SI_HRB_66158___2023-08-12T22-51-46.321Z.xml"
LEGACY_SAMPLE = SAMPLES_DIR / "SI.xml"
V351_SAMPLE = SAMPLES_DIR / "si_gmbh_3.5.1_from_test_handelsregister_py.xml"


def _failure(data: bytes) -> JobError:
    with pytest.raises(JobError) as caught:
        parse_si(data)
    return caught.value


@pytest.mark.parametrize("version", ["3.8.1", "4.0.0", "2.6.0", "3.1.1", "drei"])
def test_unknown_3x_versions_are_unsupported(version: str) -> None:
    data = SAMPLE.read_bytes().replace(b'xjustizVersion="3.3.1"', f'xjustizVersion="{version}"'.encode())
    error = _failure(data)
    assert error.failure_class is FailureClass.UNSUPPORTED_VERSION
    assert version in error.message


def test_unknown_legacy_version_is_unsupported() -> None:
    data = LEGACY_SAMPLE.read_bytes().replace(b'XJustizVersion="1.20.0"', b'XJustizVersion="2.0.0"')
    assert _failure(data).failure_class is FailureClass.UNSUPPORTED_VERSION


@pytest.mark.parametrize("version", ["3.2.1", "3.4.1", "3.6.2", "3.7.0"])
def test_every_3x_version_from_32_to_37_is_read(version: str) -> None:
    data = SAMPLE.read_bytes().replace(b'xjustizVersion="3.3.1"', f'xjustizVersion="{version}"'.encode())
    record = parse_si(data)
    assert record.source.xjustiz_version == version and record.name == "Apple GmbH"


def test_36_capital_under_kapital_hoehe_is_read() -> None:
    """From 3.6 the capital of any Kapitalgesellschaft sits in kapital/hoehe, not zusatzGmbH."""
    data = V351_SAMPLE.read_text(encoding="utf-8").replace('xjustizVersion="3.5.1"', 'xjustizVersion="3.6.2"')
    data = data.replace("<tns:zusatzGmbH><tns:stammkapital>", "<tns:kapital><tns:hoehe>")
    data = data.replace("</tns:stammkapital></tns:zusatzGmbH>", "</tns:hoehe></tns:kapital>")
    assert "<tns:kapital><tns:hoehe><tns:zahl>25000.00" in data
    record = parse_si(data.encode())
    assert record.capital is not None and (record.capital.amount, record.capital.currency) == ("25000.00", "EUR")


def test_historic_currency_of_35_is_read() -> None:
    data = V351_SAMPLE.read_text(encoding="utf-8")
    start = data.index("<tns:auswahl_waehrung>")
    end = data.index("</tns:auswahl_waehrung>")
    data = data[:start] + "<tns:auswahl_waehrung><tns:historischeWaehrung>DEM</tns:historischeWaehrung>" + data[end:]
    record = parse_si(data.encode())
    assert record.capital is not None and record.capital.currency == "DEM"


@pytest.mark.parametrize(
    ("label", "code", "canonical"),
    [
        ("Abwickler", "262", "Abwickler(in)"),
        ("Ständiger Vertreter", "290", "Ständige(r) Vertreter(in) für die Zweigniederlassung"),
        ("Geschäftsführender Direktor", "268", "Geschäftsführende(r) Direktor(in)"),
        ("Sonstiger Vertreter", "152", "Sonstige(r) Vertreter(in)"),
    ],
)
def test_legacy_role_labels_seen_in_real_files_have_their_codes(label: str, code: str, canonical: str) -> None:
    # The real 1.x sample with its managing directors named as other real 1.x files name these roles.
    data = LEGACY_SAMPLE.read_text(encoding="utf-8").replace(
        "<content>Geschäftsführer(in)</content>", f"<content>{label}</content>"
    )

    record = parse_si(data.encode())

    renamed = [officer for officer in record.officers if officer.role_code == code]
    assert len(renamed) == 3
    assert {officer.role for officer in renamed} == {canonical}
    assert not [officer for officer in record.officers if officer.role_code == ""]


def test_legacy_foreign_legal_form_has_its_code() -> None:
    data = LEGACY_SAMPLE.read_text(encoding="utf-8").replace(
        "<content>Gesellschaft mit beschränkter Haftung</content>",
        "<content>Rechtsform ausländischen Rechts HRB</content>",
    )

    record = parse_si(data.encode())

    assert (record.legal_form.code, record.legal_form.label) == ("ausl. Rechtsform", "Rechtsform ausländischen Rechts")
