"""The one retry policy of every network call (LLM endpoints and scholarly APIs), on tenacity.

Policy: at most ``max_retries`` retries after the first attempt; only faults the caller calls
retryable are retried (HTTP 408 / 429 / 5xx, timeouts, connection errors, malformed bodies —
:func:`is_retryable_status` for statuses); anything else is raised at once. The wait before retry
``k`` (0-based) is exponential backoff with full jitter, ``U(0, min(cap_s, base_s * 2**k))`` seconds
("Exponential Backoff And Jitter", Brooker, AWS Architecture Blog, 2015), unless the server sent
``Retry-After`` (seconds or HTTP-date, RFC 9110 §10.2.3; or ``retry-after-ms``): then that, capped at
``cap_s``. The jitter generator is seeded when ``seed`` is given; jitter never affects results.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_base

T = TypeVar("T")

DEFAULT_RETRY_CAP_S = 60.0


def is_retryable_status(status: int) -> bool:
    """True for HTTP statuses worth another attempt: 408 (timeout), 429 (rate limit) and 5xx."""
    return status in (408, 429) or status >= 500


def backoff_delay(retry: int, *, base_s: float = 1.0, cap_s: float = DEFAULT_RETRY_CAP_S,
                  rng: random.Random | None = None) -> float:
    """Full-jitter exponential backoff: ``U(0, min(cap_s, base_s * 2**retry))`` seconds.

    Args:
        retry: 0 for the first retry.
        base_s, cap_s: base and largest upper bound of the wait, seconds (>= 0).
        rng: the jitter generator (default: the ``random`` module).
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


class _PolicyWait(wait_base):
    """tenacity wait strategy: the policy's delay for the attempt that just failed (``done``
    attempts made before tenacity took over are counted too)."""

    def __init__(self, policy: RetryPolicy, done: int = 0) -> None:
        self.policy = policy
        self.done = done

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        retry_after = getattr(exc, "retry_after_s", None)
        return self.policy.delay(self.done + retry_state.attempt_number - 1, retry_after)


class RetryPolicy:
    """Bounded retries with full-jitter exponential backoff, honouring Retry-After (capped).

    A fault's server-given wait is read from its ``retry_after_s`` attribute (seconds or None), so
    each layer's own exception types carry it.

    Args:
        max_retries: retries after the first attempt, >= 0 (``--max-retries``).
        base_s: backoff base, seconds, >= 0.
        cap_s: longest single wait, seconds, >= 0; also caps Retry-After.
        seed: seed of the jitter generator; None = seeded from the OS.

    Raises:
        ValueError: a negative argument.
    """

    def __init__(self, *, max_retries: int = 6, base_s: float = 1.0, cap_s: float = DEFAULT_RETRY_CAP_S,
                 seed: int | None = None) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if base_s < 0 or cap_s < 0:
            raise ValueError(f"backoff base and cap must be >= 0 seconds, got {base_s}, {cap_s}")
        self.max_retries = max_retries
        self.base_s = base_s
        self.cap_s = cap_s
        self.seed = seed
        self._rng = random.Random(seed)

    def __repr__(self) -> str:
        return (f"RetryPolicy(max_retries={self.max_retries}, base_s={self.base_s}, cap_s={self.cap_s}, "
                f"seed={self.seed})")

    @property
    def max_attempts(self) -> int:
        """Attempts in all: ``max_retries + 1``."""
        return self.max_retries + 1

    def delay(self, retry: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait before retry ``retry`` (0-based): Retry-After capped, else full jitter."""
        if retry_after_s is not None:
            return min(max(0.0, retry_after_s), self.cap_s)
        return backoff_delay(retry, base_s=self.base_s, cap_s=self.cap_s, rng=self._rng)

    async def call(
        self,
        attempt: Callable[[], Awaitable[T]],
        *,
        retryable: Callable[[BaseException], bool],
        on_retry: Callable[[BaseException, float], None] | None = None,
    ) -> T:
        """Await ``attempt()`` until it returns, retrying the faults ``retryable`` accepts.

        Args:
            attempt: one try (a fresh awaitable per call).
            retryable: True for a fault worth another attempt. Cancellation and interrupts are never
                retried whatever it says.
            on_retry: called with the fault and the wait (seconds) before each retry's sleep.

        Returns:
            ``attempt()``'s result.

        Raises:
            The last fault, unchanged, once ``max_retries`` retries are spent, or at once when it is
            not retryable.

        The first attempt is awaited directly (a call that succeeds at once costs no retry
        machinery); the retries after a retryable fault run on tenacity.
        """
        try:
            return await attempt()
        except Exception as exc:
            if self.max_retries == 0 or not retryable(exc):
                raise
            first = exc
        wait_s = self.delay(0, getattr(first, "retry_after_s", None))
        if on_retry is not None:
            on_retry(first, wait_s)
        await asyncio.sleep(wait_s)

        def should_retry(exc: BaseException) -> bool:
            return isinstance(exc, Exception) and retryable(exc)

        def before_sleep(state: RetryCallState) -> None:
            if on_retry is not None and state.outcome is not None and state.next_action is not None:
                exc = state.outcome.exception()
                assert exc is not None
                on_retry(exc, state.next_action.sleep)

        async def once() -> T:  # a coroutine function, whatever kind of callable ``attempt`` is
            return await attempt()

        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_retries),
            wait=_PolicyWait(self, done=1),
            retry=retry_if_exception(should_retry),
            before_sleep=before_sleep,
            reraise=True,
        )
        return await retrying(once)
