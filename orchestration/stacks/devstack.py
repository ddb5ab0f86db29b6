"""The local stack: database, migrations, Dagster instance, sample register, webserver and daemon.

`hreg dev` runs it in the foreground; the end-to-end tests and the pipeline benchmark start the
same processes through this module.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

import httpx
from sqlalchemy.engine import URL

from orchestration.assembly.dagster_instance import RUN_START_TIMEOUT_SECONDS, ensure_storage, write_instance_config
from orchestration.db.engine import app_url, create_app_engine, dagster_url, ensure_database
from orchestration.db.migrate import upgrade
from orchestration.settings import Settings

log = logging.getLogger(__name__)

PROJECT_ROOT = Path(__file__).resolve().parents[2]
WORKSPACE = PROJECT_ROOT / "workspace.yaml"
BIN = Path(sys.executable).parent


@dataclass
class Stack:
    settings: Settings
    app_url: URL
    dagster_url: URL
    dagster_home: Path
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        """Environment of every child: one database URL, so no child starts a server of its own."""
        env = dict(os.environ)
        env["HREG_DATABASE_URL"] = self.app_url.render_as_string(hide_password=False)
        env["HREG_DATA_DIR"] = str(self.settings.resolved_data_dir)
        env["DAGSTER_HOME"] = str(self.dagster_home)
        env.setdefault("DAGSTER_GRPC_TIMEOUT_SECONDS", str(RUN_START_TIMEOUT_SECONDS))
        return env

    @property
    def webserver_url(self) -> str:
        return f"http://127.0.0.1:{self.settings.webserver_port}"

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.settings.metrics_port}/metrics"


def prepare(settings: Settings) -> Stack:
    """Start the embedded server when no URL is set, migrate, and write Dagster's instance config."""
    url = app_url(settings)
    ensure_database(url)
    engine = create_app_engine(url)
    try:
        upgrade(engine, settings)
    finally:
        engine.dispose()
    storage_url = dagster_url(settings)
    ensure_storage(storage_url)
    write_instance_config(settings.dagster_home, storage_url, settings)
    return Stack(settings=settings, app_url=url, dagster_url=storage_url, dagster_home=settings.dagster_home)


# A log line's level, as Dagster ("… - dagster.daemon - WARNING - …", coloured even into a pipe),
# uvicorn ("WARNING:  …") and Python's warnings ("…: UserWarning: …") write it; lines without one
# (tracebacks) continue the last.
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
_LEVEL = re.compile(r"(?:^|\s-\s)(DEBUG|INFO|WARNING|ERROR|CRITICAL)(?::|\s-\s)|\w+(Warning): ")
_SHOWN_LEVELS = frozenset(("WARNING", "ERROR", "CRITICAL", "Warning"))
# Receives the name of a child and one line of its output worth showing: a warning or an error.
Echo = Callable[[str, str], None]


def _spawn(stack: Stack, name: str, argv: list[str], log_dir: Path | None, echo: Echo | None = None) -> None:
    """Start a child; with ``log_dir`` its output goes to ``<name>.log`` there, and with ``echo``
    its warnings and errors are handed to ``echo`` as well."""
    if log_dir is None:
        stack.processes[name] = _popen(stack, argv, stdout=None)
        return
    log_dir.mkdir(parents=True, exist_ok=True)
    log_file = open(log_dir / f"{name}.log", "ab")  # noqa: SIM115 - closed once the child is started or its output ends
    if echo is None:
        with log_file:
            stack.processes[name] = _popen(stack, argv, stdout=log_file)
        return
    process = stack.processes[name] = _popen(stack, argv, stdout=subprocess.PIPE)
    threading.Thread(target=_copy_output, args=(process, log_file, name, echo), daemon=True).start()


def _popen(stack: Stack, argv: list[str], stdout) -> subprocess.Popen:
    return subprocess.Popen(
        argv,
        cwd=PROJECT_ROOT,
        env=stack.env,
        stdout=stdout,
        stderr=subprocess.STDOUT if stdout is not None else None,
        start_new_session=True,  # Ctrl-C reaches us once; we stop the children in order
    )


def _copy_output(process: subprocess.Popen, log_file: BinaryIO, name: str, echo: Echo) -> None:
    level = "INFO"
    with log_file, process.stdout:
        for line in process.stdout:
            log_file.write(line)
            log_file.flush()
            text = _COLOUR.sub("", line.decode(errors="replace")).rstrip()
            match = _LEVEL.search(text)
            if match:
                level = match.group(1) or match.group(2)
            if level in _SHOWN_LEVELS and text:
                echo(name, text)


def start_sample_register(stack: Stack, log_dir: Path | None = None, echo: Echo | None = None) -> str:
    port = stack.settings.sample_register_port
    _spawn(stack, "sample-register", [str(BIN / "hreg"), "sample-register", "--port", str(port)], log_dir, echo)
    base_url = f"http://127.0.0.1:{port}"
    wait_for_http(base_url + "/", stack.processes["sample-register"], timeout_s=60)
    return base_url


def start_metrics(stack: Stack, log_dir: Path | None = None, echo: Echo | None = None) -> str:
    """The Prometheus endpoint (`hreg metrics`) at HREG_METRICS_PORT; returns its URL."""
    argv = [str(BIN / "hreg"), "metrics", "--port", str(stack.settings.metrics_port)]
    _spawn(stack, "metrics", argv, log_dir, echo)
    wait_for_http(stack.metrics_url, stack.processes["metrics"], timeout_s=60)
    return stack.metrics_url


def start_dagster(
    stack: Stack,
    *,
    webserver: bool = True,
    daemon: bool = True,
    log_dir: Path | None = None,
    echo: Echo | None = None,
    workspace: Path = WORKSPACE,
) -> None:
    if daemon:
        _spawn(stack, "dagster-daemon", [str(BIN / "dagster-daemon"), "run", "-w", str(workspace)], log_dir, echo)
    if webserver:
        _spawn(
            stack,
            "dagster-webserver",
            [
                str(BIN / "dagster-webserver"),
                "-w",
                str(workspace),
                "-h",
                "127.0.0.1",
                "-p",
                str(stack.settings.webserver_port),
            ],
            log_dir,
            echo,
        )
        wait_for_http(stack.webserver_url + "/server_info", stack.processes["dagster-webserver"], timeout_s=180)


def wait_for_http(url: str, process: subprocess.Popen, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode} before {url} answered")
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"{url} did not answer within {timeout_s:.0f}s")


def stop(stack: Stack, timeout_s: float = 20) -> None:
    """Stop the children, newest first (webserver, daemon, then the sample register)."""
    stop_processes(stack.processes, timeout_s)


def stop_processes(processes: dict[str, subprocess.Popen], timeout_s: float = 20) -> None:
    """Stop ``processes``, newest first, each with the processes it started: every child leads a
    process group of its own, and a group member still there after its leader has gone (a code
    server, a run) is killed with the group."""
    for process in reversed(processes.values()):
        if process.poll() is None:
            _signal_group(process.pid, signal.SIGTERM)
    for name, process in reversed(list(processes.items())):
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            log.warning("%s did not stop within %ss; killing it", name, timeout_s)
            _signal_group(process.pid, signal.SIGKILL)
            process.wait()
    for name, process in processes.items():
        if _group_alive(process.pid, timeout_s):
            log.warning("processes started by %s outlived it; killing them", name)
            _signal_group(process.pid, signal.SIGKILL)
    processes.clear()


def _signal_group(group: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signum)


def _group_alive(group: int, timeout_s: float) -> bool:
    """Whether process group ``group`` still has a running member after up to ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while group_members(group):
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.2)
    return False


def group_members(group: int) -> list[int]:
    """Pids of the processes of ``group`` that still run (an exited one not yet reaped is not)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        state, pgrp = fields[0], int(fields[2])
        if pgrp == group and state not in ("Z", "X"):
            members.append(int(stat.parent.name))
    return members
