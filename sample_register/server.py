"""Running the sample register: in the foreground (`hreg sample-register`) or on a background
thread of the current process (tests, demos)."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import httpx
import uvicorn
from starlette.applications import Starlette

from sample_register.app import create_app
from sample_register.corpus import DEFAULT_GENERATED_COUNT, DEFAULT_SEED, load_corpus
from sample_register.retrievals import RetrievalLog

log = logging.getLogger(__name__)


def _config(
    port: int, host: str, samples_dir: Path | None, seed: int, generated: int, *, log_retrievals: bool = False
) -> uvicorn.Config:
    started = time.monotonic()
    corpus = load_corpus(samples_dir, seed=seed, generated=generated)
    log.info("sample register corpus: %d companies in %.2f s", len(corpus), time.monotonic() - started)
    app = create_app(corpus)
    return uvicorn.Config(
        RetrievalLog(app) if log_retrievals else app, host=host, port=port, log_level="warning", access_log=False
    )


def serve(
    port: int,
    *,
    host: str = "127.0.0.1",
    samples_dir: Path | None = None,
    seed: int = DEFAULT_SEED,
    generated: int = DEFAULT_GENERATED_COUNT,
) -> None:
    """Serve until interrupted, logging the retrievals served (``GET /_sample/retrievals``)."""
    server = uvicorn.Server(_config(port, host, samples_dir, seed, generated, log_retrievals=True))
    log.info("sample register on http://%s:%d", host, port)
    server.run()


class SampleRegisterThread:
    """A sample register on a background thread; ``url`` once started, ``stop()`` to end it."""

    def __init__(self, server: uvicorn.Server) -> None:
        self._server = server
        app = server.config.app
        assert isinstance(app, Starlette | RetrievalLog), "_config serves the register's app, logged or not"
        self.register = app.state.register
        self.corpus = self.register.corpus
        # What the register served, when the server was started to log it.
        self.retrieval_log: RetrievalLog | None = app if isinstance(app, RetrievalLog) else None
        self._thread = threading.Thread(target=server.run, name="sample-register", daemon=True)
        self.url = ""

    def start(self, timeout_s: float) -> SampleRegisterThread:
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the sample register did not start")
            time.sleep(0.02)
        host, port = self._server.servers[0].sockets[0].getsockname()[:2]
        self.url = f"http://{host}:{port}"
        httpx.get(self.url + "/_sample/health", timeout=timeout_s).raise_for_status()
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        # An answer held back by a ``slow`` fault must not hold the stop until it is sent.
        self._server.force_exit = True
        self._thread.join(timeout=10)

    def __enter__(self) -> SampleRegisterThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_sample_register_in_thread(
    port: int = 0,
    *,
    host: str = "127.0.0.1",
    samples_dir: Path | None = None,
    seed: int = DEFAULT_SEED,
    generated: int = DEFAULT_GENERATED_COUNT,
    timeout_s: float = 30.0,
    log_retrievals: bool = True,
) -> SampleRegisterThread:
    """Start a sample register and return once it answers; port 0 picks a free port. It logs
    the retrievals it serves (``retrieval_log``) unless told not to."""
    # Off the main thread uvicorn leaves signal handling to the process.
    server = uvicorn.Server(_config(port, host, samples_dir, seed, generated, log_retrievals=log_retrievals))
    return SampleRegisterThread(server).start(timeout_s)
