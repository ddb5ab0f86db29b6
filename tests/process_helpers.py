"""Helpers of the tests that start real processes: free ports, waiting for an outcome, and the
processes left running."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
HREG = REPO_ROOT / ".venv" / "bin" / "hreg"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def newcomer_env(**settings: str) -> dict[str, str]:
    """The environment of a shell that has set nothing of ours but ``settings``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("HREG_")}
    return {**env, **settings}


def hreg(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """`.venv/bin/hreg ARGS` as a person types it in a shell with ``env``; it must succeed."""
    done = subprocess.run([str(HREG), *args], env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"hreg {' '.join(args)}: {done.stderr[-3000:]}"
    return done


def wait_until(predicate, timeout_s: float, what: str):
    """Poll ``predicate`` every second until it returns something truthy; return that."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")


class WaitBudget:
    """One deadline for the waits of a test, so that together they stay inside the pytest timeout
    (600 s, pyproject.toml) and a slow run fails naming the wait it ran out in, instead of being cut
    off: each wait may take what the ones before it left."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def left(self) -> float:
        return max(self.deadline - time.monotonic(), 1.0)

    def wait_until(self, predicate, what: str):
        return wait_until(predicate, self.left(), what)


def processes_with(marker: str) -> dict[int, str]:
    """Running processes whose environment or command line carries ``marker``, with their command lines."""
    found = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes()
            if marker.encode() not in (proc / "environ").read_bytes() and marker.encode() not in cmdline:
                continue
            if (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                continue
            found[int(proc.name)] = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue  # gone meanwhile, or not ours to read
    return found
