"""The XJustiz parser: SI documents (structured register content) of every generation the
register portal serves, into one canonical, versioned company record."""

from orchestration.xjustiz.company_record import (
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
from orchestration.xjustiz.parser_version import PARSER_VERSION
from orchestration.xjustiz.xsd import validate_xsd

__all__ = [
    "PARSER_VERSION",
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
]
