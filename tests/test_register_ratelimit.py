"""The register's rate limit: one token bucket in PostgreSQL shared by every process.

Time here is the bucket's clock, which the test moves (`BucketClock`): the limiter's order and
token counts are checked at times the test chose, however busy the machine is. A token refills
every 1000 s of that clock, so the real seconds a test takes add a thousandth of a token or so,
never a whole one.
"""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable

import pytest
import sqlalchemy as sa

from orchestration.register.ratelimit import SharedRateLimiter

REFILL_S = 1000.0


def per_hour(burst: int) -> float:
    """The hourly limit whose refill, after a burst of ``burst``, is one token every REFILL_S."""
    return burst + 3600 / REFILL_S


class BucketClock:
    """The clock of one bucket, moved by the test. Moving it on by some seconds moves every time
    the bucket recorded back by as much, which is all the passing of time means to
    ``take_rate_limit_token``."""

    def __init__(self, engine: sa.Engine, name: str) -> None:
        self.engine = engine
        self.name = name
        self.now = 0.0

    def advance(self, seconds: float) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                sa.text("""
                UPDATE processing.rate_limits
                   SET refilled_at = refilled_at - make_interval(secs => :s),
                       background_taken_at = background_taken_at - make_interval(secs => :s),
                       background_owed_until = background_owed_until - make_interval(secs => :s)
                 WHERE name = :name
                """),
                {"s": seconds, "name": self.name},
            )
        self.now += seconds


class Waited(Exception):
    """Raised by a sleep that must not happen."""


def refuse_to_wait(seconds: float) -> None:
    raise Waited(seconds)


def took(limiter: SharedRateLimiter) -> bool:
    """Whether ``limiter`` (built with ``refuse_to_wait``) took a token without waiting."""
    try:
        limiter.acquire("test retrieval")
    except Waited:
        return False
    return True


def sleep_while(clock: BucketClock, others_try: Callable[[], None]) -> Callable[[float], None]:
    """A sleep on the bucket's clock during which the other takers try every quarter refill."""

    def sleep(seconds: float) -> None:
        while seconds > 0:
            step = min(REFILL_S / 4, seconds)
            clock.advance(step)
            seconds -= step
            others_try()

    return sleep


WORKER = textwrap.dedent(
    """
    import logging, sys
    from orchestration.db.engine import create_app_engine
    from orchestration.register.ratelimit import SharedRateLimiter

    class Waited(Exception):
        pass

    def refuse_to_wait(seconds):
        raise Waited(seconds)

    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    url, per_hour, burst = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    limiter = SharedRateLimiter(create_app_engine(url), "test bucket", per_hour, burst=burst, sleep=refuse_to_wait)
    for line in sys.stdin:  # each line: how many tokens to try for
        taken = 0
        for _ in range(int(line)):
            try:
                limiter.acquire("test retrieval")
                taken += 1
            except Waited:
                pass
        print(taken, flush=True)
    """
)


def test_two_processes_share_one_bucket(engine, db_url):
    burst = 3
    url = db_url.render_as_string(hide_password=False)
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, url, str(per_hour(burst)), str(burst)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    clock = BucketClock(engine, "test bucket")

    def both_try(tokens: int) -> int:
        for worker in workers:
            worker.stdin.write(f"{tokens}\n")
            worker.stdin.flush()
        return sum(int(worker.stdout.readline()) for worker in workers)

    try:
        # Alone, each process would take the whole burst; together they take it once.
        assert both_try(burst) == burst
        assert both_try(1) == 0
        clock.advance(1.5 * REFILL_S)
        assert both_try(2) == 1  # one and a half refills: one token between the two
        clock.advance(0.6 * REFILL_S)
        assert both_try(2) == 1
    finally:
        outputs = [worker.communicate(timeout=60) for worker in workers]
    assert all(w.returncode == 0 for w in workers), [err for _, err in outputs]
    # Both processes were told to wait, and said how long: at most one refill, a whole one on an
    # empty bucket.
    for _, err in outputs:
        waits = [float(s) for s in re.findall(r"waiting (\d+\.\d) s before test retrieval", err)]
        assert waits and all(0 < wait <= REFILL_S for wait in waits), err
        assert max(waits) > 0.9 * REFILL_S, err


def test_a_wait_is_logged_with_its_duration(engine, caplog):
    clock, slept = BucketClock(engine, "logged bucket"), []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.advance(seconds)

    limiter = SharedRateLimiter(engine, "logged bucket", per_hour(1), burst=1, sleep=sleep)
    with caplog.at_level(logging.INFO, logger="orchestration.register.ratelimit"):
        assert limiter.acquire("first") == 0
        waited = limiter.acquire("second")

    # The burst of one is spent: the second retrieval waits one refill, in one sleep.
    assert len(slept) == 1 and waited == slept[0]
    assert REFILL_S / 2 < slept[0] <= REFILL_S
    assert f"waiting {slept[0]:.1f} s before second" in caplog.text


# ----------------------------------------------------------------------------- people first


def test_background_work_leaves_the_reserve_to_people(engine):
    # A burst of 5 and no refill to speak of: what is taken is what the bucket held.
    background = SharedRateLimiter(
        engine, "reserve bucket", per_hour(5), burst=5, reserve=2, priority="background", sleep=refuse_to_wait
    )
    for _ in range(3):
        assert background.acquire("refresh") == 0
    with pytest.raises(Waited):
        background.acquire("refresh")  # two tokens left: they are the people's
    person = SharedRateLimiter(engine, "reserve bucket", per_hour(5), burst=5, reserve=2, sleep=refuse_to_wait)
    assert person.acquire("open") == 0
    assert person.acquire("open", priority="interactive") == 0
    with pytest.raises(Waited):
        person.acquire("open")


def test_a_person_waits_at_most_one_refill_while_background_work_takes_every_token(engine):
    clock, taken = BucketClock(engine, "busy bucket"), []
    background = [
        SharedRateLimiter(
            engine, "busy bucket", per_hour(5), burst=5, reserve=2, priority="background", sleep=refuse_to_wait
        )
        for _ in range(3)
    ]

    def background_tries() -> None:
        for limiter in background:
            if took(limiter):
                taken.append(clock.now)

    background_tries()
    assert len(taken) == 3  # the burst of 5, less the reserve of 2
    person = SharedRateLimiter(engine, "busy bucket", per_hour(5), burst=5, sleep=sleep_while(clock, background_tries))
    waits = [person.acquire("open") for _ in range(4)]
    background_during = len(taken)
    sleep_while(clock, background_tries)(4.5 * REFILL_S)

    # The reserve served the first two opens at once; each further one waited for the next token,
    # which background work, trying every quarter refill meanwhile, did not take first.
    assert waits[:2] == [0, 0]
    assert all(REFILL_S / 2 < wait <= REFILL_S for wait in waits[2:]), waits
    assert background_during == 3
    # Once the person is done, background work goes on with the refill, keeping the reserve.
    assert len(taken) == background_during + 2
    # Together they took no more than the burst and the refill allow.
    assert len(taken) + len(waits) <= 5 + clock.now / REFILL_S


def test_background_work_is_not_starved_by_people(engine):
    clock, people_took = BucketClock(engine, "contended bucket"), []
    people = [
        SharedRateLimiter(engine, "contended bucket", per_hour(5), burst=5, sleep=refuse_to_wait) for _ in range(2)
    ]

    def people_try() -> None:
        for person in people:
            if took(person):
                people_took.append(clock.now)

    while took(people[0]):  # the people take the burst
        people_took.append(clock.now)
    assert len(people_took) == 5
    background = SharedRateLimiter(
        engine,
        "contended bucket",
        per_hour(5),
        burst=5,
        priority="background",
        patience_refills=4,
        sleep=sleep_while(clock, people_try),
    )
    first = background.acquire("refresh")
    people_meanwhile = len(people_took) - 5
    second = background.acquire("refresh")

    # People take every token until no background taker has had one for its patience (4 refills);
    # then background work is owed the next token, and has it within one refill.
    assert background.patience_s - REFILL_S / 2 < first <= background.patience_s + REFILL_S, first
    assert background.patience_s - REFILL_S / 2 < second <= background.patience_s + REFILL_S, second
    assert people_meanwhile >= 3
