"""Helpers of the tests that start real processes: free ports and waiting for an outcome."""

from __future__ import annotations

import socket
import time


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(predicate, timeout_s: float, what: str):
    """Poll ``predicate`` every second until it returns something truthy; return that."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")
