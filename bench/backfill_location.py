"""The code location that bench.backfill runs Dagster with: the project's definitions, with the
parser that a measured re-parse deploys (``BENCH_PARSER``):

- ``current``: the project's parser and version (what a version bump with unchanged output does
  to documents parsed by an older version);
- ``renaming``: a new version whose parser names every 10th company (by register number)
  differently;
- ``people``: the renaming parser under yet another version (unchanged output).

The daemon's run workers load this module too, so every run of the backfill parses with it.
"""

import functools
import os

import orchestration.stages.parsing
import orchestration.xjustiz
from bench.backfill import RENAMING_VERSIONS, renaming_parse_si

if version := RENAMING_VERSIONS.get(os.environ.get("BENCH_PARSER", "current")):
    # Before the assets are imported: they take their code version from the parser's version.
    orchestration.xjustiz.PARSER_VERSION = version
    orchestration.stages.parsing.parse_si = functools.partial(renaming_parse_si, version=version)

from orchestration.definitions import defs

__all__ = ["defs"]
