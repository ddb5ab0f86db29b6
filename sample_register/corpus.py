"""The companies of the sample register: every real SI sample plus generated companies.

Building the index is cheap (names, register numbers, legal forms); documents are produced on
request from each company's seed, so that the server starts fast and every run serves the
same bytes for the same company.
"""

from __future__ import annotations

import fnmatch
import logging
import zlib
from decimal import Decimal
from pathlib import Path

from orchestration.register.results import SearchMode
from orchestration.xjustiz import parse_si
from sample_register.company import WORD, Company
from sample_register.courts import Court, court
from sample_register.generated import generate_companies

log = logging.getLogger(__name__)

# ../shared/samples beside the repository.
DEFAULT_SAMPLES_DIR = Path(__file__).resolve().parents[2] / "shared" / "samples"
DEFAULT_SEED = 20240229
DEFAULT_GENERATED_COUNT = 2400


def _normalise(text: str) -> str:
    return " ".join(text.casefold().split())


def company_from_sample(path: Path) -> Company:
    record = parse_si(path.read_bytes())
    register = record.register
    key = f"{register.court_code}|{register.type}|{register.number}"
    return Company(
        court=court(register.court_code),
        register_type=register.type,
        register_number=register.number,
        register_suffix=register.suffix,
        name=record.name,
        seat=record.seat or court(register.court_code).seat,
        legal_form=record.legal_form.code,
        capital=Decimal(record.capital.amount) if record.capital else None,
        sample_file=path,
        seed=zlib.crc32(key.encode()),  # its documents other than the SI are generated
        si_version=record.source.xjustiz_version,
    )


class Corpus:
    def __init__(self, companies: list[Company]) -> None:
        self.companies: list[Company] = []
        self._by_key: dict[tuple[str, str, str], Company] = {}
        for company in companies:
            if company.key in self._by_key:
                log.info("%s %s %s has several SI samples; serving the first", *company.key)
                continue
            self.companies.append(company)
            self._by_key[company.key] = company

    def __len__(self) -> int:
        return len(self.companies)

    def get(self, court_code: str, register_type: str, register_number: str) -> Company | None:
        return self._by_key.get((court_code, register_type, register_number))

    @property
    def courts(self) -> list[Court]:
        return sorted({c.court for c in self.companies}, key=lambda c: c.name)

    def search(
        self,
        query: str,
        mode: SearchMode,
        *,
        register_type: str | None = None,
        court_code: str | None = None,
        register_number: str | None = None,
        include_deleted: bool = False,
    ) -> list[Company]:
        """Companies as the portal finds them, sorted by name."""
        keywords = [w.casefold() for w in WORD.findall(query)]
        exact = _normalise(query)

        def name_matches(company: Company) -> bool:
            if mode is SearchMode.EXACT:
                return fnmatch.fnmatchcase(_normalise(company.name), exact) if exact else True
            if not keywords:
                return True
            hits = [k in company.words for k in keywords]
            return all(hits) if mode is SearchMode.ALL else any(hits)

        found = [
            c
            for c in self.companies
            if (include_deleted or not c.deleted)
            and (register_type is None or c.register_type == register_type)
            and (court_code is None or c.court.code == court_code)
            and (register_number is None or c.register_number == register_number)
            and name_matches(c)
        ]
        return sorted(found, key=lambda c: (c.name.casefold(), c.court.name, c.register_number))


def load_corpus(
    samples_dir: Path | None = None, *, seed: int = DEFAULT_SEED, generated: int = DEFAULT_GENERATED_COUNT
) -> Corpus:
    """The real SI samples of ``samples_dir/xjustiz`` and ``generated`` companies from ``seed``."""
    samples_dir = samples_dir or DEFAULT_SAMPLES_DIR
    real = [company_from_sample(path) for path in sorted((samples_dir / "xjustiz").glob("*.xml"))]
    taken = {c.key for c in real}
    return Corpus(real + generate_companies(seed, generated, taken=taken))
