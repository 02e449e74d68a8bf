"""Request pacing and retry delays: an async token bucket and backoff with full jitter.

Backoff follows "Exponential Backoff And Jitter" (Brooker, AWS Architecture Blog, 2015), full-jitter
variant: delay_k = U(0, min(cap, base * 2**k)) for the k-th retry (k = 0, 1, ...). A server's
Retry-After (seconds or HTTP-date, RFC 9110 §10.2.3) overrides it, capped at ``cap``.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

DEFAULT_RETRY_CAP_S = 60.0


class AsyncRateLimiter:
    """Token bucket: at most ``rpm`` acquisitions per minute, bursts of at most ``burst``.

    Tokens refill continuously at rpm/60 per second; the bucket starts full. With the default
    ``burst=1`` requests are spaced evenly, 60/rpm seconds apart, which keeps providers that count
    per second as well as per minute happy.

    Args:
        rpm: requests per minute, > 0.
        burst: bucket capacity, >= 1.

    Raises:
        ValueError: if rpm <= 0 or burst < 1.
    """

    def __init__(self, rpm: float, *, burst: int = 1) -> None:
        if rpm <= 0:
            raise ValueError(f"rpm must be > 0, got {rpm}")
        if burst < 1:
            raise ValueError(f"burst must be >= 1, got {burst}")
        self.rpm = rpm
        self.burst = burst
        self._rate = rpm / 60.0
        self._tokens = float(burst)
        self._updated = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        """Wait until a token is available and take it (FIFO among waiters)."""
        async with self._lock:
            while True:
                now = time.monotonic()
                self._tokens = min(self.burst, self._tokens + (now - self._updated) * self._rate)
                self._updated = now
                if self._tokens >= 1.0:
                    self._tokens -= 1.0
                    return
                await asyncio.sleep((1.0 - self._tokens) / self._rate)


def backoff_delay(retry: int, *, base_s: float = 1.0, cap_s: float = DEFAULT_RETRY_CAP_S,
                  rng: random.Random | None = None) -> float:
    """Full-jitter exponential backoff: U(0, min(cap_s, base_s * 2**retry)) seconds.

    Args:
        retry: 0 for the first retry.
    """
    high = min(cap_s, base_s * (2.0 ** min(retry, 62)))
    return (rng or random).uniform(0.0, high)


def parse_retry_after(headers: Mapping[str, str], *, now: datetime | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (delta-seconds or HTTP-date).

    Returns:
        A non-negative float, or None when the headers carry no usable value.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
