"""Benchmarks, each run as ``python -m bench.NAME``; each prints its figures as one JSON line."""

from orchestration.processes import reset_interrupt_signals

# Every benchmark is a program of its own: begin it with SIGINT and SIGTERM at their defaults, so
# the pools and servers it starts answer SIGTERM even when it was started as a background job.
reset_interrupt_signals()
