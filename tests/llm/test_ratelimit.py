"""Retry-After parsing, full-jitter backoff bounds, token-bucket pacing."""

from __future__ import annotations

import asyncio
import random
import time
from datetime import UTC, datetime

import pytest

from ideaharness.llm.ratelimit import AsyncRateLimiter, backoff_delay, parse_retry_after

NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "1"}, 1.0),
        ({"retry-after": "2.5"}, 2.5),
        ({"Retry-After": "Sun, 29 Nov 2026 12:00:30 GMT"}, 30.0),
        ({"Retry-After": "Sun, 29 Nov 2026 11:59:00 GMT"}, 0.0),  # in the past: no wait
        ({"retry-after-ms": "1500", "Retry-After": "9"}, 1.5),
        ({"Retry-After": "soon"}, None),
        ({}, None),
    ],
)
def test_parse_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers, now=NOW) == expected


def test_backoff_is_full_jitter_and_capped() -> None:
    rng = random.Random(0)
    for retry in range(12):
        high = min(5.0, 0.5 * 2**retry)
        draws = [backoff_delay(retry, base_s=0.5, cap_s=5.0, rng=rng) for _ in range(200)]
        assert all(0.0 <= d <= high for d in draws)
        assert max(draws) > 0.8 * high  # uses the whole interval, not a fixed fraction
    assert backoff_delay(10_000, cap_s=3.0, rng=rng) <= 3.0


def test_rate_limiter_rejects_bad_rates() -> None:
    with pytest.raises(ValueError):
        AsyncRateLimiter(0)
    with pytest.raises(ValueError):
        AsyncRateLimiter(60, burst=0)


async def test_rate_limiter_spaces_acquisitions() -> None:
    limiter = AsyncRateLimiter(1200)  # one every 0.05 s, burst 1
    start = time.monotonic()
    stamps = []

    async def take() -> None:
        await limiter.acquire()
        stamps.append(time.monotonic() - start)

    await asyncio.gather(*(take() for _ in range(11)))
    assert stamps[0] < 0.03
    assert stamps[-1] >= 0.45  # 10 waits of 0.05 s
    assert stamps[-1] < 1.5


async def test_rate_limiter_burst() -> None:
    limiter = AsyncRateLimiter(60, burst=5)  # 5 at once, then one per second
    start = time.monotonic()
    for _ in range(5):
        await limiter.acquire()
    assert time.monotonic() - start < 0.1
