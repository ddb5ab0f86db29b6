"""Entry point: SI bytes -> CompanyRecord, for every XJustiz generation the portal serves.

Which generation a document is follows from its root element (``XJustiz_Daten`` for 1.x,
``nachricht.reg.0400003`` for 3.x, both in the XJustiz namespace) and the version attribute
(``Grunddaten/@XJustizVersion``, ``nachrichtenkopf/@xjustizVersion``).

Unknown versions are refused as ``unsupported_version`` rather than parsed on a guess: that
failure class is permanent, so such documents wait, untouched, until a parser version that knows
them is deployed, and the parser-change backfill then picks them up. Supported: 1.x, and 3.x
from 3.2 to 3.7.
"""

from __future__ import annotations

import gc
import re

from lxml import etree
from pydantic import ValidationError

from orchestration.runtime.failures import FailureClass, JobError
from orchestration.xjustiz import parse_v1, parse_v3
from orchestration.xjustiz.company_record import CompanyRecord
from orchestration.xjustiz.record import read_record
from orchestration.xjustiz.safe_xml import parse_xml
from orchestration.xjustiz.xml_values import XJUSTIZ_NS, children, element_path

LEGACY_ROOT = f"{{{XJUSTIZ_NS}}}XJustiz_Daten"
SI_ROOT = f"{{{XJUSTIZ_NS}}}nachricht.reg.0400003"
LEGACY_HEADER = f"{{{XJUSTIZ_NS}}}Grunddaten"
SI_HEADER = f"{{{XJUSTIZ_NS}}}nachrichtenkopf"
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)*$")
SUPPORTED_3X_MINORS = range(2, 8)


def parse_si(data: bytes, *, retrieved_at: str | None = None) -> CompanyRecord:
    """Parse one SI document (structured register content).

    Raises JobError with failure class ``invalid_file`` (not XML, hostile or not XJustiz SI),
    ``unsupported_version`` (an XJustiz version this parser does not read) or ``parser_error``
    (unexpected structure; ``code`` holds the XML path).
    """
    # A parse makes thousands of small objects (element proxies, reader state, the record) and
    # no reference cycles, so the cyclic collector would only walk them: it pauses meanwhile.
    # Left as found: a caller that switched it off keeps it off.
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        return _parse_si(data, retrieved_at)
    finally:
        if collecting:
            gc.enable()


def _parse_si(data: bytes, retrieved_at: str | None) -> CompanyRecord:
    root = parse_xml(data)
    tag = root.tag
    if tag == SI_ROOT:
        top = children(root)
        version = _version(root, top, SI_HEADER, "xjustizVersion")
        major, minor = _major_minor(version, root)
        if major != 3 or minor not in SUPPORTED_3X_MINORS:
            raise JobError(
                FailureClass.UNSUPPORTED_VERSION,
                f"XJustiz {version} is not supported (reads 1.x and 3.2 to 3.7)",
                source="xjustiz",
                code=element_path(root, "nachrichtenkopf/@xjustizVersion"),
            )
        return _validated(read_record(root, top, version, retrieved_at, parse_v3.GENERATION), root)
    if tag == LEGACY_ROOT:
        top = children(root)
        version = _version(root, top, LEGACY_HEADER, "XJustizVersion")
        major, _ = _major_minor(version, root)
        if major != 1:
            raise JobError(
                FailureClass.UNSUPPORTED_VERSION,
                f"XJustiz_Daten of version {version} is not supported (reads 1.x)",
                source="xjustiz",
                code=element_path(root, "Grunddaten/@XJustizVersion"),
            )
        return _validated(read_record(root, top, version, retrieved_at, parse_v1.GENERATION), root)
    raise JobError(
        FailureClass.INVALID_FILE,
        f"not an XJustiz SI document (root element {_describe(root)})",
        source="xjustiz",
        code=element_path(root),
    )


def _validated(data: dict, root: etree._Element) -> CompanyRecord:
    # The readers build plain data and the model validates it in one call: much cheaper than
    # constructing each officer and entry as a model of its own.
    try:
        return CompanyRecord.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        raise JobError(
            FailureClass.PARSER_ERROR,
            f"record field {where}: {problem['msg']}",
            source="xjustiz",
            code=element_path(root),
        ) from exc


def _version(root: etree._Element, top: dict, header: str, attribute: str) -> str:
    element = top.get(header)
    version = (element.get(attribute) or "").strip() if element is not None else ""
    if not version:
        raise JobError(
            FailureClass.PARSER_ERROR,
            "XJustiz version is missing",
            source="xjustiz",
            code=element_path(root, f"{header}/@{attribute}"),
        )
    return version


def _major_minor(version: str, root: etree._Element) -> tuple[int, int]:
    match = _VERSION.match(version)
    if not match:
        raise JobError(
            FailureClass.UNSUPPORTED_VERSION,
            f"XJustiz version {version!r} is not a version number",
            source="xjustiz",
            code=element_path(root),
        )
    return int(match.group(1)), int(match.group(2))


def _describe(root: etree._Element) -> str:
    qname = etree.QName(root)
    return f"{qname.localname!r} in namespace {qname.namespace!r}" if qname.namespace else repr(qname.localname)
