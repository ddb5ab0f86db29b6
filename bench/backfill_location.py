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

import dagster as dg

from bench.backfill import RENAMING_VERSIONS, renaming_parse_si
from orchestration.definitions import build_definitions
from orchestration.jobs.specs import JOB_TYPES


@dg.definitions
def defs() -> dg.Definitions:
    version = RENAMING_VERSIONS.get(os.environ.get("BENCH_PARSER", "current"))
    if version is None:
        return build_definitions()
    parsing = JOB_TYPES.xml_parsing
    return build_definitions(
        job_types=JOB_TYPES.deploying(parsing, version, functools.partial(renaming_parse_si, version=version))
    )
