"""The processes we start: their interrupt signals, and worker processes joined within a bound.

A process inherits ignored signals from its parent, across exec too: started as a background job
or under nohup, it begins with SIGINT ignored. Dagster maps SIGTERM to SIGINT's disposition
(``setup_interrupt_handlers``, again whenever ``capture_interrupts`` restores SIGINT), so such a
process then ignores SIGTERM as well, and so does every process it starts afterwards: pools and
code servers stop answering ``terminate()``. Each process of ours therefore begins by putting both
signals back to their defaults; a handler is reset to the default on exec, so every program it
starts then begins with the defaults too.
"""

from __future__ import annotations

import multiprocessing
import queue
import signal
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any


def reset_interrupt_signals() -> None:
    """SIGINT raises KeyboardInterrupt and SIGTERM ends the process, whatever was inherited.

    Only the main thread may set them; elsewhere (a command invoked from a thread) the process's
    main thread has already done so."""
    if threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _call_and_report(results, index: int, target: Callable[..., Any], args: Sequence[Any]) -> None:
    reset_interrupt_signals()
    try:
        results.put((index, True, target(*args)))
    except BaseException as error:  # handed to the parent, which raises it
        results.put((index, False, repr(error)))
        raise


def run_in_processes(
    target: Callable[..., Any], args_per_process: Sequence[Sequence[Any]], timeout_s: float
) -> list[Any]:
    """Run ``target(*args)`` in one spawned process per ``args``; return the results in order.

    Each process is waited for within ``timeout_s`` in all; one still running then is killed and
    the call fails, so a stuck worker can never hold up its caller."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    processes = [
        context.Process(target=_call_and_report, args=(results, index, target, args), daemon=True)
        for index, args in enumerate(args_per_process)
    ]
    for process in processes:
        process.start()
    answers: dict[int, Any] = {}
    failures: list[str] = []
    deadline = time.monotonic() + timeout_s
    try:
        for _ in processes:
            index, succeeded, value = results.get(timeout=max(0.0, deadline - time.monotonic()))
            if succeeded:
                answers[index] = value
            else:
                failures.append(f"worker {index}: {value}")
    except queue.Empty:
        failures.append(f"{len(processes) - len(answers)} worker(s) gave no result within {timeout_s:.0f}s")
    finally:
        for process in processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
                process.join()
        results.close()
    if failures:
        raise RuntimeError("; ".join(failures))
    return [answers[index] for index in range(len(processes))]
