"""The register's retrieval limit, as a token bucket in PostgreSQL shared by every process.

The portal's terms allow 60 retrievals per hour for everybody using it from here, not per
process, so the bucket lives in `processing.rate_limits` and is taken by
`processing.take_rate_limit_token`, which is atomic across connections.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import sqlalchemy as sa
from sqlalchemy.engine import Engine

log = logging.getLogger(__name__)

_TAKE = sa.text("SELECT processing.take_rate_limit_token(:name, :capacity, :refill_per_s)")


class SharedRateLimiter:
    """At most ``per_hour`` retrievals in any hour across all processes sharing ``name``.

    A burst of ``burst`` tokens is allowed; the refill rate is lowered by the burst so that burst
    plus an hour's refill never exceeds ``per_hour``.
    """

    def __init__(
        self,
        engine: Engine,
        name: str,
        per_hour: float,
        *,
        burst: int | None = None,
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
        self._sleep = sleep

    def _take(self) -> float:
        with self.engine.begin() as conn:
            return float(
                conn.execute(_TAKE, {"name": self.name, "capacity": float(self.burst), "refill_per_s": self.refill_per_s}).scalar_one()
            )

    def acquire(self, what: str = "register retrieval") -> float:
        """Take one token, sleeping while none is available; returns the seconds waited."""
        waited = 0.0
        while (wait_s := self._take()) > 0:
            log.info("rate limit %r: waiting %.1f s before %s", self.name, wait_s, what)
            self._sleep(wait_s)
            waited += wait_s
        return waited
