"""The register's rate limit: one token bucket in PostgreSQL shared by every process."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
import threading
import time

import pytest

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


# ----------------------------------------------------------------------------- people first


class Waited(Exception):
    """Raised by a sleep that must not happen."""


def refuse_to_wait(seconds: float) -> None:
    raise Waited(seconds)


def test_background_work_leaves_the_reserve_to_people(engine):
    # A burst of 5 and hardly any refill: what is taken is what the bucket held.
    background = SharedRateLimiter(
        engine, "reserve bucket", 5.5, burst=5, reserve=2, priority="background", sleep=refuse_to_wait
    )
    for _ in range(3):
        assert background.acquire("refresh") == 0
    with pytest.raises(Waited):
        background.acquire("refresh")  # two tokens left: they are the people's
    person = SharedRateLimiter(engine, "reserve bucket", 5.5, burst=5, reserve=2, sleep=refuse_to_wait)
    assert person.acquire("open") == 0
    assert person.acquire("open", priority="interactive") == 0
    with pytest.raises(Waited):
        person.acquire("open")


def saturate(limiter: SharedRateLimiter, stop: threading.Event, taken: list[float]) -> None:
    while not stop.is_set():
        limiter.acquire("load")
        taken.append(time.monotonic())


def test_a_person_waits_at_most_about_one_refill_while_background_work_takes_every_token(engine):
    # Five tokens a second after a burst of 5: a refill interval of 0.2 s.
    per_hour = 5 + 5 * 3600
    stop, taken = threading.Event(), []
    workers = [
        threading.Thread(
            target=saturate,
            args=(SharedRateLimiter(engine, "busy bucket", per_hour, burst=5, priority="background"), stop, taken),
        )
        for _ in range(3)
    ]
    for worker in workers:
        worker.start()
    try:
        time.sleep(1.5)  # the burst is spent, background runs on the refill
        person = SharedRateLimiter(engine, "busy bucket", per_hour, burst=5)
        waits = []
        for _ in range(4):
            started = time.monotonic()
            person.acquire("open")
            waits.append(time.monotonic() - started)
            time.sleep(0.3)
        background_during = len(taken)
        time.sleep(0.6)
    finally:
        stop.set()
        for worker in workers:
            worker.join()
    assert max(waits) <= 1.5 * person.refill_interval_s, waits
    # The reserve kept tokens for the person, yet background work went on.
    assert len(taken) > background_during


def test_background_work_is_not_starved_by_people(engine):
    per_hour = 5 + 5 * 3600  # 0.2 s between tokens
    stop, taken = threading.Event(), []
    people = [
        threading.Thread(
            target=saturate, args=(SharedRateLimiter(engine, "contended bucket", per_hour, burst=5), stop, taken)
        )
        for _ in range(2)
    ]
    for person in people:
        person.start()
    try:
        time.sleep(1.5)
        background = SharedRateLimiter(
            engine, "contended bucket", per_hour, burst=5, priority="background", patience_refills=4
        )
        started = time.monotonic()
        background.acquire("refresh")
        first = time.monotonic() - started
        background.acquire("refresh")
        second = time.monotonic() - started
    finally:
        stop.set()
        for person in people:
            person.join()
    # Once no background taker has had a token for its patience (4 refills), it is owed the next one.
    assert first <= background.patience_s + 3 * background.refill_interval_s, first
    assert second - first <= background.patience_s + 3 * background.refill_interval_s, second - first
