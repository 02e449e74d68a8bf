"""Common constructor and lifecycle of the scholarly clients (one :class:`ScholarlyHTTP` each)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from ideaharness.cutoff import CutoffLedger, Dated, within_window
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


def date_window(window: DateWindow | None = None, *, published_after: dt.date | None = None,
                published_before: dt.date | None = None) -> DateWindow | None:
    """The publication-date window of a search, from either form.

    ``published_before=D``: works published on or before D (a knowledge cutoff: its day is
    visible); ``published_after=D``: works published strictly after D (a future window
    (T, T + horizon] is ``published_after=T, published_before=T + horizon``).

    Raises:
        ValueError: both ``window`` and a ``published_*`` bound given, or start after end.
    """
    if published_after is None and published_before is None:
        return check_window(window)
    if window is not None:
        raise ValueError("give publication_date_window or published_after/published_before, not both")
    start = published_after + dt.timedelta(days=1) if published_after is not None else None
    return check_window((start, published_before))


D = TypeVar("D", bound=Dated)


def filter_again(papers: Sequence[D], window: DateWindow | None, *, source: str,
                 ledger: CutoffLedger | None = None) -> list[D]:
    """The results of a dated search filtered again by their own dates (a service may ignore or
    round the date filter, or place a paper by another date than ours): works provably outside
    ``window`` are dropped, works that cannot be placed are kept; counts (and the dropped works)
    go to ``ledger`` under ``source`` (:func:`ideaharness.cutoff.within_window`). No window: the
    papers unchanged and nothing counted."""
    if window is None or (window[0] is None and window[1] is None):
        return list(papers)
    return within_window(papers, window[0], window[1], source=source, ledger=ledger)
