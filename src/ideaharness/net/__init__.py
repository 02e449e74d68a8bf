"""Network politeness shared by the LLM and scholarly layers: one retry policy, one rate limiter.

:mod:`ideaharness.net.retry` (bounded retries with full-jitter exponential backoff on tenacity,
honouring ``Retry-After``) and :mod:`ideaharness.net.ratelimit` (request pacing on aiolimiter). Neither
layer imports the other; both import these.
"""

from ideaharness.net.ratelimit import HostRateLimits, rate_limiter
from ideaharness.net.retry import (
    DEFAULT_RETRY_CAP_S,
    RetryPolicy,
    backoff_delay,
    is_retryable_status,
    parse_retry_after,
)

__all__ = [
    "DEFAULT_RETRY_CAP_S",
    "HostRateLimits",
    "RetryPolicy",
    "backoff_delay",
    "is_retryable_status",
    "parse_retry_after",
    "rate_limiter",
]
