"""Services of the multi-host layout as separate processes on free loopback ports: moto's
standalone S3 server (the object store)."""

from __future__ import annotations

import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import httpx

from process_helpers import free_port, wait_until

BIN = Path(sys.executable).parent

# moto accepts any credentials; boto3 wants some, and a region.
S3_CLIENT_ENV = {
    "AWS_ACCESS_KEY_ID": "hreg-test",
    "AWS_SECRET_ACCESS_KEY": "hreg-test",
    "AWS_DEFAULT_REGION": "eu-central-1",
}


def _reset_signals() -> None:
    # A child started while SIGINT is ignored would ignore SIGTERM too (see DESIGN.md).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def moto_s3_server(log_dir: Path):
    """moto's S3 server; yields the environment boto3 needs to reach it."""
    port = free_port()
    log_dir.mkdir(parents=True, exist_ok=True)
    with open(log_dir / "moto.log", "ab") as log:
        process = subprocess.Popen(
            [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=_reset_signals,
        )
    endpoint = f"http://127.0.0.1:{port}"

    def answers() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"moto_server exited with {process.returncode} (see {log_dir / 'moto.log'})")
        try:
            return httpx.get(f"{endpoint}/moto-api/", timeout=2).status_code < 500
        except httpx.HTTPError:
            return False

    try:
        wait_until(answers, 60, "moto_server to answer")
        yield {**S3_CLIENT_ENV, "AWS_ENDPOINT_URL": endpoint}
    finally:
        stop(process)
