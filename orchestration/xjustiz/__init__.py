"""The XJustiz parser: SI documents (structured register content) of every generation the
register portal serves, into one canonical, versioned company record; and a writer of such
documents for tests and the sample register."""

from orchestration.xjustiz.model import (
    Address,
    CompanyRecord,
    Entry,
    LegalForm,
    Money,
    Officer,
    Register,
    Source,
)
from orchestration.xjustiz.parser import parse_si
from orchestration.xjustiz.version import PARSER_VERSION
from orchestration.xjustiz.writer import SUPPORTED_WRITE_VERSIONS, write_si
from orchestration.xjustiz.xsd import validate_xsd

__all__ = [
    "PARSER_VERSION",
    "SUPPORTED_WRITE_VERSIONS",
    "Address",
    "CompanyRecord",
    "Entry",
    "LegalForm",
    "Money",
    "Officer",
    "Register",
    "Source",
    "parse_si",
    "validate_xsd",
    "write_si",
]
