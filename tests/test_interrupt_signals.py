"""Processes started with SIGINT ignored (a background job, nohup, some CI runners) still stop on
SIGTERM: the dev stack with its code servers, and the worker pools of the suite."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from process_helpers import free_port, processes_with, wait_until

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent


def ignore_sigint() -> None:
    """``preexec_fn``: the child starts as a background job of a shell would."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def ignored_signals(pid: int) -> set[int]:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            mask = int(line.split()[1], 16)
            return {signum for signum in range(1, 65) if mask & (1 << (signum - 1))}
    raise AssertionError(f"no SigIgn line for {pid}")


POOL_AFTER_DAGSTER = textwrap.dedent(
    """
    import json
    import sys
    from orchestration.runtime.processes import reset_interrupt_signals, run_in_processes

    if sys.argv[1] == "reset":
        reset_interrupt_signals()  # what `hreg`, the benchmarks and the suite's conftest do first

    import dagster as dg

    @dg.op
    def nothing():
        return None

    @dg.job
    def one_op():
        nothing()

    # An in-process run: on its way out Dagster restores SIGINT and maps SIGTERM to it.
    assert one_op.execute_in_process().success

    from test_interrupt_signals import ignored_signals_of_this_process
    print(json.dumps(ignored_signals_of_this_process()))
    print(json.dumps(run_in_processes(ignored_signals_of_this_process, [()], timeout_s=120)[0]))
    """
)


def ignored_signals_of_this_process() -> list[int]:
    return sorted(ignored_signals(os.getpid()))


@pytest.mark.parametrize("reset", ["reset", "inherit"])
def test_after_a_dagster_run_a_process_and_its_pool_answer_sigterm(reset):
    done = subprocess.run(
        [sys.executable, "-c", POOL_AFTER_DAGSTER, reset],
        preexec_fn=ignore_sigint,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parent,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parent)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    parent_ignores, worker_ignores = (set(json.loads(line)) for line in done.stdout.splitlines()[-2:])
    if reset == "reset":
        assert not {signal.SIGINT, signal.SIGTERM} & parent_ignores
    else:
        # The trap itself: without the reset, one Dagster run makes the process ignore SIGTERM.
        assert {signal.SIGINT, signal.SIGTERM} <= parent_ignores
    # A pool's workers put both back themselves, whatever the process that starts them holds.
    assert signal.SIGTERM not in worker_ignores


def test_the_dev_stack_started_with_sigint_ignored_stops_on_sigterm_leaving_nothing(db_url, tmp_path):
    marker = f"HREG_TEST_STACK={uuid.uuid4()}"
    env = {
        **os.environ,
        "HREG_DATA_DIR": str(tmp_path),
        "HREG_REGISTER": "sample",
        "HREG_SAMPLE_REGISTER_PORT": str(free_port()),
        "HREG_WEBSERVER_PORT": str(free_port()),
        "HREG_METRICS_PORT": str(free_port()),
        marker.split("=")[0]: marker.split("=")[1],
    }
    log_path = tmp_path / "hreg-dev.out"
    with log_path.open("wb") as out:
        dev = subprocess.Popen(
            [str(BIN / "hreg"), "dev"], env=env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=ignore_sigint
        )
    try:
        wait_until(lambda: b"ready:" in log_path.read_bytes() or dev.poll() is not None, 240, "hreg dev to be ready")
        assert dev.poll() is None, log_path.read_text()[-3000:]
        # The code servers the webserver and the daemon start for the location, up and ready.
        code_servers = wait_until(
            lambda: [pid for pid, cmd in processes_with(marker).items() if "api grpc" in cmd], 120, "code servers"
        )
        stack = processes_with(marker)
        assert any("dagster-daemon" in cmd for cmd in stack.values()), stack
        for pid in stack:
            assert signal.SIGTERM not in ignored_signals(pid), f"{stack[pid]} ignores SIGTERM"
        assert code_servers

        dev.send_signal(signal.SIGTERM)
        assert dev.wait(timeout=120) == 0, log_path.read_text()[-3000:]
        deadline = time.monotonic() + 30
        while processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert processes_with(marker) == {}
        assert "stopped" in log_path.read_text()
    finally:
        for pid in processes_with(marker):
            os.kill(pid, signal.SIGKILL)
        if dev.poll() is None:
            dev.kill()
