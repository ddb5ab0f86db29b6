"""XJustiz parser throughput, measured against lxml's bare parse of the same bytes.

    .venv/bin/python -m bench.parse [--documents N] [--rounds R] [--corpus DIR]

The corpus is the real SI samples followed by documents written from them (register numbers
varied, versions 3.3.1 / 3.5.1 / 1.x in turn) up to N documents; or, with --corpus, every
``*.xml`` below DIR (such as a document store). Documents are produced or read and dropped one
at a time, so memory stays flat however large the corpus is. Each document is parsed R times
bare (the hardened lxml parser, nothing else) and R times by ``parse_si``; the fastest CPU time
of each counts, which keeps the comparison stable on a busy machine. The last line printed is
one JSON object:
``records_per_s``, ``bare_parse_per_s``, ``ratio`` (records / bare; 1.0 means extraction is free)
and ``peak_rss_mb``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from lxml import etree

from bench.common import SAMPLES_DIR, log, peak_rss_mb, template_records
from orchestration.xjustiz import parse_si, write_si
from orchestration.xjustiz.safe_xml import hardened_parser

GENERATED_VERSIONS = ("3.3.1", "3.5.1", "1.x")


def files(directory: Path) -> Iterator[bytes]:
    for path in sorted(directory.rglob("*.xml")):
        yield path.read_bytes()


def corpus(documents: int) -> Iterator[bytes]:
    samples = sorted(SAMPLES_DIR.glob("*.xml"))
    for path in samples[:documents]:
        yield path.read_bytes()
    templates = template_records()
    for i in range(max(0, documents - len(samples))):
        template = templates[i % len(templates)]
        register = template.register.model_copy(update={"number": str(900000 + i)})
        yield write_si(
            template.model_copy(update={"register": register}), GENERATED_VERSIONS[i % len(GENERATED_VERSIONS)]
        )


def _cpu_seconds(function, data: bytes) -> float:
    start = time.thread_time()
    function(data)
    return time.thread_time() - start


def measure(documents: Iterable[bytes], rounds: int) -> dict[str, float]:
    parser = hardened_parser()

    def bare_parse(data: bytes) -> None:
        etree.fromstring(data, parser)

    bare_seconds = parse_seconds = 0.0
    count = total_bytes = 0
    for data in documents:
        # The fastest of the rounds: other processes on the machine only ever add time.
        bare_seconds += min(_cpu_seconds(bare_parse, data) for _ in range(rounds))
        parse_seconds += min(_cpu_seconds(parse_si, data) for _ in range(rounds))
        count += 1
        total_bytes += len(data)
    log(f"{count} documents ({total_bytes / 1e6:.1f} MB), fastest of {rounds} rounds each")
    records_per_s = count / parse_seconds
    bare_parse_per_s = count / bare_seconds
    return {
        "records_per_s": round(records_per_s, 1),
        "bare_parse_per_s": round(bare_parse_per_s, 1),
        "ratio": round(records_per_s / bare_parse_per_s, 3),
        "peak_rss_mb": peak_rss_mb(include_children=False),
    }


def main() -> None:
    arguments = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    arguments.add_argument("--documents", type=int, default=2000, help="documents in the corpus (default 2000)")
    arguments.add_argument("--rounds", type=int, default=3, help="parses of each document per side (default 3)")
    arguments.add_argument("--corpus", type=Path, help="read every *.xml below this folder instead")
    options = arguments.parse_args()
    documents = files(options.corpus) if options.corpus else corpus(options.documents)
    print(json.dumps(measure(documents, options.rounds)), flush=True)


if __name__ == "__main__":
    main()
