"""Request pacing on aiolimiter (a leaky bucket): the LLM ``--rpm`` limit and per-host intervals.

``AsyncLimiter(max_rate, time_period)`` admits ``max_rate`` acquisitions per ``time_period`` seconds
with a bucket of ``max_rate``; with ``max_rate = 1`` acquisitions are spaced ``time_period`` apart,
which keeps providers that count per second as well as per minute happy.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from aiolimiter import AsyncLimiter


def rate_limiter(rpm: float, *, burst: int = 1) -> AsyncLimiter:
    """A limiter admitting ``rpm`` requests per minute, in bursts of at most ``burst``.

    With the default ``burst=1`` requests are spaced evenly, ``60 / rpm`` seconds apart.

    Raises:
        ValueError: if rpm <= 0 or burst < 1.
    """
    if rpm <= 0:
        raise ValueError(f"rpm must be > 0, got {rpm}")
    if burst < 1:
        raise ValueError(f"burst must be >= 1, got {burst}")
    return AsyncLimiter(burst, burst * 60.0 / rpm)


class HostRateLimits:
    """A minimum interval between two requests to the same host, one aiolimiter bucket per host.

    Args:
        min_interval_s: seconds for every host, or ``{host: seconds}`` (hosts not listed: 0).
            0 means no pacing.

    ``waited_s`` totals the seconds spent waiting for a turn.
    """

    def __init__(self, min_interval_s: float | Mapping[str, float] = 0.0) -> None:
        self.min_interval_s = min_interval_s
        self.waited_s = 0.0
        self._limiters: dict[str, AsyncLimiter | None] = {}

    def interval_for(self, host: str) -> float:
        """The minimum seconds between two requests to ``host``."""
        if isinstance(self.min_interval_s, Mapping):
            return float(self.min_interval_s.get(host, 0.0))
        return float(self.min_interval_s)

    async def wait_turn(self, host: str) -> None:
        """Wait until ``host`` may receive the next request (FIFO among waiters)."""
        if host not in self._limiters:
            interval = self.interval_for(host)
            self._limiters[host] = AsyncLimiter(1, interval) if interval > 0 else None
        limiter = self._limiters[host]
        if limiter is None:
            return
        start = time.monotonic()
        await limiter.acquire()
        self.waited_s += time.monotonic() - start
