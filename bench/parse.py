"""XJustiz parser throughput, measured against lxml's bare parse of the same bytes.

    .venv/bin/python -m bench.parse [--documents N] [--rounds R] [--corpus DIR]

The corpus is the real SI samples followed by documents written from them (register numbers
varied, versions 3.3.1 / 3.5.1 / 1.x in turn) up to N documents; or, with --corpus, every
``*.xml`` below DIR (such as a document store). Documents are produced or read and dropped one
at a time, so memory stays flat however large the corpus is.

Both sides get the very same bytes object and the same hardened parser, so the bare parse is
exactly the parse ``parse_si`` starts with. Before anything is timed, both run on the first
document a few times (lazy tables, validators and parser state are built then, not in the
first measurement). Each document is then measured in R rounds; a round times the bare parse
and ``parse_si`` back to back, so both see the same state of a busy machine, and the fastest
CPU time of each side counts (other processes only ever add time). The median over rounds is
logged as well, as a check on that choice. The last line printed is one JSON object:
``records_per_s``, ``bare_parse_per_s``, ``ratio`` (records / bare; 1.0 means extraction is free)
and ``peak_rss_mb``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from lxml import etree

from bench.common import SAMPLES_DIR, log, peak_rss_mb, template_records
from orchestration.xjustiz import parse_si
from orchestration.xjustiz.safe_xml import hardened_parser
from sample_register.si_writer import write_si

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


WARM_UP_RUNS = 3


def measure(documents: Iterable[bytes], rounds: int) -> dict[str, float]:
    parser = hardened_parser()

    def bare_parse(data: bytes) -> None:
        etree.fromstring(data, parser)

    bare_fastest = parse_fastest = 0.0
    bare_rounds = [0.0] * rounds  # per round, for the median check
    parse_rounds = [0.0] * rounds
    count = total_bytes = 0
    for data in documents:
        if not count:
            for _ in range(WARM_UP_RUNS):
                bare_parse(data)
                parse_si(data)
        bare_best = parse_best = float("inf")
        for r in range(rounds):
            bare = _cpu_seconds(bare_parse, data)
            parse = _cpu_seconds(parse_si, data)
            bare_rounds[r] += bare
            parse_rounds[r] += parse
            bare_best = min(bare_best, bare)
            parse_best = min(parse_best, parse)
        bare_fastest += bare_best
        parse_fastest += parse_best
        count += 1
        total_bytes += len(data)
    median_ratio = statistics.median(b / p for b, p in zip(bare_rounds, parse_rounds))
    log(
        f"{count} documents ({total_bytes / 1e6:.1f} MB), fastest of {rounds} rounds each; "
        f"median round: ratio {median_ratio:.3f}"
    )
    records_per_s = count / parse_fastest
    bare_parse_per_s = count / bare_fastest
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
