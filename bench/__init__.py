"""Benchmarks, each run as ``python -m bench.NAME``; each prints its figures as one JSON line."""

import signal
import sys

from orchestration.runtime.processes import reset_interrupt_signals

# Every benchmark is a program of its own: begin it with SIGINT and SIGTERM at their defaults, so
# the pools and servers it starts answer SIGTERM even when it was started as a background job.
reset_interrupt_signals()
# A benchmark stopped with SIGTERM still stops the stack it started (its `finally` and atexit run).
signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
