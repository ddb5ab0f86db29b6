"""The code location that bench.soak runs Dagster with: the project's definitions, with the
parser version named in the file BENCH_SOAK_PARSER_FILE (when it names one).

A week's parser change in the soak writes a new version there: every run's process loads this
module afresh, the webserver's code server once the location is reloaded, and the daemon's once
it refreshes its workspace (every minute), so the change is deployed without restarting the
daemon or the webserver, whose memory the soak follows. The parser's output is unchanged; only
its version differs, which is what makes every court stale until the backfill. The job sensors
tick at every look of the daemon, so that a simulated day is short (with_quick_sensors).
"""

import dataclasses
import os
from pathlib import Path

import dagster as dg

from orchestration.definitions import build_definitions
from orchestration.jobs.specs import JOB_TYPES, JobTypes
from orchestration.xjustiz import CompanyRecord, parse_si

SENSOR_INTERVAL_SECONDS = 1


def deployed_version() -> str | None:
    path = os.environ.get("BENCH_SOAK_PARSER_FILE")
    if not path or not Path(path).exists():
        return None
    return Path(path).read_text().strip() or None


def parse_as(version: str):
    def parse(data: bytes, **options) -> CompanyRecord:
        return parse_si(data, **options).model_copy(update={"parser_version": version})

    return parse


def with_quick_sensors(job_types: JobTypes) -> JobTypes:
    """``job_types`` whose sensors may tick at every look of the daemon (it looks every 5 s): a
    day's jobs wait less for their runs, and the day is shorter."""
    return dataclasses.replace(
        job_types,
        **{spec.name: dataclasses.replace(spec, sensor_interval_seconds=SENSOR_INTERVAL_SECONDS) for spec in job_types},
    )


@dg.definitions
def defs() -> dg.Definitions:
    version = deployed_version()
    job_types = JOB_TYPES if version is None else JOB_TYPES.deploying(JOB_TYPES.xml_parsing, version, parse_as(version))
    return build_definitions(job_types=with_quick_sensors(job_types))
