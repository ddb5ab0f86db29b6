"""Optional validation of 3.x SI documents against the official XSDs of their version.

Validation is reported, never required: real documents that fail it still parse. The schemas of
3.3.1, 3.5.1 and 3.6.2 (only the files the register message needs) ship in ``xjustiz/xsd/``;
another folder can be given as ``xsd_dir`` (``hreg xjustiz validate`` passes ``--xsd-dir`` or
``HREG_XJUSTIZ_XSD_DIR``). A folder holds one sub-folder per version, named ``3.3.1`` or, as the openXJV
distribution names them, ``openXJV_XJustiz_3_3_1``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from lxml import etree

from orchestration.runtime.failures import JobError
from orchestration.xjustiz.safe_xml import parse_xml
from orchestration.xjustiz.xml_values import XJUSTIZ_NS

PACKAGED_XSD_DIR = Path(__file__).parent / "xsd"
REGISTER_SCHEMA_GLOB = "xjustiz_0400_register_*.xsd"


def validate_xsd(data: bytes, *, xsd_dir: str | Path | None = None) -> list[str]:
    """Problems found validating ``data`` against the XSD of its XJustiz version; empty = valid."""
    try:
        root = parse_xml(data)
    except JobError as exc:
        return [str(exc)]
    header = root.find(f"{{{XJUSTIZ_NS}}}nachrichtenkopf")
    version = header.get("xjustizVersion") if header is not None else None
    if not version:
        return ["no XJustiz 3.x version in nachrichtenkopf/@xjustizVersion: no schema to validate against"]
    folder = _version_folder(Path(xsd_dir or PACKAGED_XSD_DIR), version)
    if folder is None:
        return [f"no XSD for XJustiz {version} available"]
    schema = _schema(folder)
    if schema.validate(root.getroottree()):
        return []
    return [f"line {e.line}: {e.message}" for e in schema.error_log]


def _version_folder(base: Path, version: str) -> Path | None:
    for name in (version, "openXJV_XJustiz_" + version.replace(".", "_")):
        if (base / name).is_dir():
            return base / name
    return None


@lru_cache(maxsize=8)
def _schema(folder: Path) -> etree.XMLSchema:
    main = sorted(folder.glob(REGISTER_SCHEMA_GLOB))
    if not main:
        raise FileNotFoundError(f"{folder} has no {REGISTER_SCHEMA_GLOB}")
    # Schema files are local and trusted, but their imports must not reach the network either.
    parser = etree.XMLParser(no_network=True, resolve_entities=False)
    return etree.XMLSchema(etree.parse(str(main[-1]), parser))
