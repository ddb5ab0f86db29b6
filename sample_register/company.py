"""A company of the sample register, as its index knows it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from sample_register.courts import Court

WORD = re.compile(r"\w+")
# Legal forms whose companies file shareholder lists (GmbHG §40).
SHAREHOLDER_LIST_FORMS = frozenset({"GmbH", "UG"})


@dataclass(frozen=True)
class Company:
    court: Court
    register_type: str
    register_number: str
    register_suffix: str | None
    name: str
    seat: str
    legal_form: str  # canonical code of orchestration.xjustiz.codes.LEGAL_FORMS
    capital: Decimal | None = None
    deleted: bool = False
    earlier_names: tuple[tuple[str, str], ...] = ()  # (name, seat), newest first
    sample_file: Path | None = None  # a real SI document, served as it is
    seed: int | None = None  # a generated company: the seed of all its documents
    si_version: str = "3.3.1"
    words: frozenset[str] = field(init=False, compare=False, repr=False)  # casefolded words of the name

    def __post_init__(self) -> None:
        object.__setattr__(self, "words", frozenset(w.casefold() for w in WORD.findall(self.name)))

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.court.code, self.register_type, self.register_number)

    @property
    def designation(self) -> str:
        return " ".join(p for p in (self.register_type, self.register_number, self.register_suffix) if p)

    @property
    def files_shareholder_lists(self) -> bool:
        return self.legal_form in SHAREHOLDER_LIST_FORMS
