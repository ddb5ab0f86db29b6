"""A task repeated on a background thread at a fixed interval while a `with` block runs."""

from __future__ import annotations

import threading
from typing import Self


class Periodic:
    """Calls `tick` every `interval_s` seconds on a daemon thread, from entering the `with` block
    until leaving it; leaving waits for a tick under way to end."""

    def __init__(self, interval_s: float, name: str | None = None) -> None:
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def tick(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            self.tick()
