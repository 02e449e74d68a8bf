"""Common constructor and lifecycle of the scholarly clients (one :class:`ScholarlyHTTP` each)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path

from ideaharness.scholarly.cache import DEFAULT_SECRET_PARAMS
from ideaharness.scholarly.http import HTTPStats, ScholarlyHTTP

DateWindow = tuple[dt.date | None, dt.date | None]


class ClientBase:
    """Holds the base URL and the HTTP layer; async context manager closing it.

    Args:
        base_url: service root (no trailing slash needed); point it at a local server in tests.
        cache_dir: response-cache folder (None = no cache).
        min_interval_s: seconds between two requests (the service's etiquette by default).
        max_retries, backoff_base_s, backoff_max_s, timeout_s: see :class:`ScholarlyHTTP`.
        headers: default request headers (API keys go here, never into URLs).
    """

    def __init__(
        self,
        base_url: str,
        *,
        cache_dir: str | Path | None = None,
        min_interval_s: float = 0.0,
        max_retries: int = 6,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        timeout_s: float = 30.0,
        headers: Mapping[str, str] | None = None,
        secret_params: tuple[str, ...] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = ScholarlyHTTP(
            cache_dir=cache_dir,
            min_interval_s=min_interval_s,
            max_retries=max_retries,
            backoff_base_s=backoff_base_s,
            backoff_max_s=backoff_max_s,
            timeout_s=timeout_s,
            headers=headers,
            secret_params=secret_params or DEFAULT_SECRET_PARAMS,
        )

    @property
    def stats(self) -> HTTPStats:
        """Request / cache-hit / retry counters of this client."""
        return self.http.stats

    async def aclose(self) -> None:
        """Close the HTTP layer."""
        await self.http.aclose()

    async def __aenter__(self):  # type: ignore[no-untyped-def]
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def check_window(window: DateWindow | None) -> DateWindow | None:
    """Validate a publication-date window ``(start, end)`` (either end may be None).

    Raises:
        ValueError: start after end.
    """
    if window is None:
        return None
    start, end = window
    if start is not None and end is not None and start > end:
        raise ValueError(f"publication_date_window start {start} is after end {end}")
    return window
