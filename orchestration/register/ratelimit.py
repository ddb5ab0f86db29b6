"""The register's retrieval limit, as a token bucket in PostgreSQL shared by every process.

The portal's terms allow 60 retrievals per hour for everybody using it from here, not per
process, so the bucket lives in `processing.rate_limits` and is taken by
`processing.take_rate_limit_token`, which is atomic across connections.

People first: a taker is ``interactive`` (a person waits for the result) or ``background``.
Background takers leave the last ``reserve`` tokens of the bucket to interactive ones, so a
person finds a token at once or within about one refill interval, however much background
work is queued; and since a background taker needs ``reserve + 1`` tokens where a person needs
one, a person whose token is due always takes it first. Background work never starves: once no
background taker has had a token for ``patience_s``, the next one is owed the next token, and
people leave it that one (a person then waits at most one refill more, once per patience).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Literal

from sqlalchemy.engine import Engine

from orchestration.db import queries

QUERIES = queries.load("ratelimit")

log = logging.getLogger(__name__)

Priority = Literal["interactive", "background"]
PRIORITIES: tuple[Priority, ...] = ("interactive", "background")


class SharedRateLimiter:
    """At most ``per_hour`` retrievals in any hour across all processes sharing ``name``.

    A burst of ``burst`` tokens is allowed; the refill rate is lowered by the burst so that burst
    plus an hour's refill never exceeds ``per_hour``. ``priority`` is the default of ``acquire``.
    """

    def __init__(
        self,
        engine: Engine,
        name: str,
        per_hour: float,
        *,
        burst: int | None = None,
        reserve: int = 2,
        patience_refills: float = 10.0,
        priority: Priority = "interactive",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if per_hour <= 0:
            raise ValueError("per_hour must be positive")
        self.engine = engine
        self.name = name
        self.burst = burst if burst is not None else max(1, int(per_hour // 12))
        if self.burst >= per_hour:
            raise ValueError("burst must be smaller than per_hour")
        self.refill_per_s = (per_hour - self.burst) / 3600.0
        # A reserve of the whole bucket would leave background work only its starvation tokens.
        self.reserve = max(1, min(reserve, self.burst - 1)) if self.burst > 1 else 0
        self.patience_s = patience_refills / self.refill_per_s
        self.priority = _checked(priority)
        self._sleep = sleep

    @property
    def refill_interval_s(self) -> float:
        """Seconds between two tokens once the burst is spent."""
        return 1.0 / self.refill_per_s

    def _take(self, priority: Priority) -> float:
        params = {
            "name": self.name,
            "capacity": float(self.burst),
            "refill_per_s": self.refill_per_s,
            "priority": priority,
            "reserve": float(self.reserve),
            "patience_s": self.patience_s,
        }
        with self.engine.begin() as conn:
            return float(conn.execute(QUERIES["take_token"], params).scalar_one())

    def acquire(self, what: str = "register retrieval", *, priority: Priority | None = None) -> float:
        """Take one token, sleeping while none is available to ``priority``; returns the seconds waited."""
        priority = _checked(priority or self.priority)
        waited = 0.0
        while (wait_s := self._take(priority)) > 0:
            log.info("rate limit %r: waiting %.1f s before %s (%s)", self.name, wait_s, what, priority)
            self._sleep(wait_s)
            waited += wait_s
        return waited


def _checked(priority: str) -> Priority:
    if priority not in PRIORITIES:
        raise ValueError(f"priority must be one of {', '.join(PRIORITIES)}, not {priority!r}")
    return priority  # type: ignore[return-value]
