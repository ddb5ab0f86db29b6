"""The register's rate limit: one token bucket in PostgreSQL shared by every process."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
import time

from orchestration.register.ratelimit import SharedRateLimiter

# Ten tokens a second after a burst of two: fast enough for a test, slow enough to measure.
PER_HOUR = 36_000
BURST = 2
TAKES_PER_PROCESS = 6

WORKER = textwrap.dedent(
    """
    import json, logging, sys, time
    from orchestration.db.engine import create_app_engine
    from orchestration.register.ratelimit import SharedRateLimiter

    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    url, per_hour, burst, takes = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    limiter = SharedRateLimiter(create_app_engine(url), "test bucket", per_hour, burst=burst)
    print(sys.stdin.readline(), end="", flush=True)  # start together
    times = []
    for _ in range(takes):
        limiter.acquire("test retrieval")
        times.append(time.time())
    print(json.dumps(times))
    """
)


def test_two_processes_share_one_bucket(db_url):
    url = db_url.render_as_string(hide_password=False)
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, url, str(PER_HOUR), str(BURST), str(TAKES_PER_PROCESS)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for worker in workers:
        worker.stdin.write("go\n")
        worker.stdin.flush()
    outputs = [worker.communicate(timeout=60) for worker in workers]
    assert all(w.returncode == 0 for w in workers), [err for _, err in outputs]

    times = sorted(t for out, _ in outputs for t in json.loads(out.splitlines()[-1]))
    refill_per_s = (PER_HOUR - BURST) / 3600
    # Alone, each process would be done after (6 - 2) / 10 s; sharing, the twelve takes need
    # (12 - 2) / 10 s: the processes wait for each other's tokens.
    assert times[-1] - times[0] >= (len(times) - BURST) / refill_per_s * 0.9
    # At no point did the two together take more than the bucket allows.
    for i, start in enumerate(times):
        window = [t for t in times[i:] if t - start <= 0.5]
        assert len(window) <= BURST + 0.5 * refill_per_s + 1
    # Both processes waited, and said how long.
    for _, err in outputs:
        assert "waiting" in err and " s before test retrieval" in err


def test_a_wait_is_logged_with_its_duration(engine, caplog):
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        time.sleep(seconds)

    limiter = SharedRateLimiter(engine, "logged bucket", 3600 * 2, burst=1, sleep=sleep)
    with caplog.at_level(logging.INFO, logger="orchestration.register.ratelimit"):
        assert limiter.acquire("first") == 0
        waited = limiter.acquire("second")

    assert slept and waited == sum(slept)
    assert 0 < slept[0] <= 1.0  # one token refills in 1 / (2 - 1/3600) s
    assert f"waiting {slept[0]:.1f} s before second" in caplog.text
