"""`hreg dev`'s children: everything they print goes to their log file, warnings and errors also
to the terminal (here: a list), so the sensor daemon's routine lines do not bury the UI address."""

from __future__ import annotations

import sys
import time

from sqlalchemy.engine import make_url

from orchestration.settings import Settings
from orchestration.stacks import devstack

# What the Dagster daemon prints (coloured even into a pipe), a traceback after an error, uvicorn.
OUTPUT = [
    "\x1b[32m2026-12-01 08:55:36 +0000\x1b[0m - dagster.daemon.SensorDaemon - \x1b[34mINFO\x1b[0m - Checking for new runs for sensor: xml_parsing_sensor",
    "\x1b[32m2026-12-01 08:57:15 +0000\x1b[0m - dagster.code_server - \x1b[34mWARNING\x1b[0m - No heartbeat received in 20 seconds",
    "2026-12-01 08:57:16 +0000 - dagster.daemon.SensorDaemon - INFO - Sensor xml_parsing_sensor skipped: no due xml_parsing jobs",
    "2026-12-01 08:57:17 +0000 - dagster.daemon.SensorDaemon - ERROR - Sensor xml_parsing_sensor failed",
    "Traceback (most recent call last):",
    '  File "sensors/jobs.py", line 44, in job_sensor',
    "RuntimeError: database is gone",
    'INFO:     127.0.0.1:5000 - "GET / HTTP/1.1" 200 OK',
]


def test_a_child_s_output_is_logged_whole_and_only_its_warnings_and_errors_are_shown(tmp_path) -> None:
    url = make_url("postgresql+psycopg2://postgres@/hreg?host=/nowhere")
    stack = devstack.Stack(settings=Settings(), app_url=url, dagster_url=url, dagster_home=tmp_path)
    shown: list[tuple[str, str]] = []
    script = f"import sys\nfor line in {OUTPUT!r}:\n    print(line)\nsys.exit(3)"
    devstack._spawn(
        stack, "dagster-daemon", [sys.executable, "-c", script], tmp_path / "logs", lambda *a: shown.append(a)
    )
    assert stack.processes["dagster-daemon"].wait(timeout=30) == 3
    log = tmp_path / "logs" / "dagster-daemon.log"
    deadline = time.monotonic() + 10
    while log.read_text().count("\n") < len(OUTPUT) and time.monotonic() < deadline:
        time.sleep(0.05)

    assert log.read_text().splitlines() == OUTPUT
    assert [name for name, _ in shown] == ["dagster-daemon"] * 5
    assert [line for _, line in shown] == [
        "2026-12-01 08:57:15 +0000 - dagster.code_server - WARNING - No heartbeat received in 20 seconds",
        *OUTPUT[3:7],
    ]
