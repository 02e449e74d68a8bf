"""OpenAlex works API client (docs.openalex.org).

Exact per-year citation counts come from one list call
``/works?filter=cites:W…&group_by=publication_year`` (``counts_by_year`` on a work covers only
the last ten years and omits zero years). The API key (env ``OPENALEX_API_KEY``) is a query
parameter ``api_key``, stripped from cache keys and error messages.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Any

from ideaharness.cutoff import CutoffLedger
from ideaharness.schema import Paper
from ideaharness.scholarly.base import ClientBase, DateWindow, check_window, date_window, filter_again

SEARCH_SOURCE = "openalex_search"
"""The :class:`~ideaharness.cutoff.CutoffLedger` source of OpenAlex searches."""


def abstract_from_inverted_index(index: dict[str, list[int]] | None) -> str | None:
    """Rebuild plain text from OpenAlex ``abstract_inverted_index`` (word -> positions)."""
    if not index:
        return None
    slots: dict[int, str] = {}
    for word, positions in index.items():
        for pos in positions:
            slots[int(pos)] = word
    return " ".join(slots[i] for i in sorted(slots))


def short_id(work_id: str) -> str:
    """``W123`` from ``https://openalex.org/W123`` or ``W123``."""
    return work_id.rstrip("/").rsplit("/", 1)[-1]


def paper_from_openalex(work: dict[str, Any]) -> Paper:
    """A :class:`Paper` from an OpenAlex work object."""
    ids = {k: str(v) for k, v in (work.get("ids") or {}).items() if v}
    external: dict[str, str] = {}
    if ids.get("doi") or work.get("doi"):
        external["DOI"] = (ids.get("doi") or work["doi"]).removeprefix("https://doi.org/")
    if ids.get("openalex"):
        external["OpenAlex"] = short_id(ids["openalex"])
    date = work.get("publication_date")
    venue = (((work.get("primary_location") or {}).get("source")) or {}).get("display_name")
    return Paper(
        id=short_id(work.get("id") or ids.get("openalex") or ""),
        title=work.get("title") or work.get("display_name") or "",
        abstract=abstract_from_inverted_index(work.get("abstract_inverted_index")),
        year=work.get("publication_year"),
        publication_date=dt.date.fromisoformat(date) if date else None,
        venue=venue,
        citation_count=work.get("cited_by_count"),
        publication_types=[work["type"]] if work.get("type") else None,
        external_ids=external,
        extra={k: work[k] for k in ("referenced_works", "counts_by_year") if work.get(k)},
    )


def date_filter(window: DateWindow | None) -> list[str]:
    """OpenAlex filter clauses ``from_publication_date:`` / ``to_publication_date:`` of a window."""
    if check_window(window) is None:
        return []
    start, end = window  # type: ignore[misc]
    out = []
    if start:
        out.append(f"from_publication_date:{start.isoformat()}")
    if end:
        out.append(f"to_publication_date:{end.isoformat()}")
    return out


class OpenAlex(ClientBase):
    """Async OpenAlex client.

    Args:
        api_key: default env ``OPENALEX_API_KEY`` (required by OpenAlex since 2026-02).
        mailto: optional contact address sent as ``mailto``.
        min_interval_s: default 0.1 s (OpenAlex allows at most 100 requests/s; budget is per call).
    """

    def __init__(
        self,
        base_url: str = "https://api.openalex.org",
        api_key: str | None = None,
        mailto: str | None = None,
        cache_dir: str | Path | None = None,
        min_interval_s: float = 0.1,
        **http_options: Any,
    ) -> None:
        super().__init__(
            base_url,
            cache_dir=cache_dir,
            min_interval_s=min_interval_s,
            secret_params=("api_key",),
            **http_options,
        )
        self._auth = {
            "api_key": api_key if api_key is not None else os.environ.get("OPENALEX_API_KEY"),
            "mailto": mailto,
        }

    async def search(
        self,
        query: str,
        *,
        per_page: int = 25,
        page: int = 1,
        publication_date_window: DateWindow | None = None,
        filters: list[str] | None = None,
        published_after: dt.date | None = None,
        published_before: dt.date | None = None,
        ledger: CutoffLedger | None = None,
    ) -> list[Paper]:
        """Full-text work search (``/works?search=``), one page of ``per_page`` (1..200).

        The date window (``publication_date_window``, or ``published_after`` = strictly after,
        ``published_before`` = on or before, :func:`~ideaharness.scholarly.base.date_window`) is
        sent as ``from_publication_date:`` / ``to_publication_date:`` AND the results are filtered
        again by their own dates, counted in ``ledger`` (source :data:`SEARCH_SOURCE`).

        Raises:
            ValueError: per_page outside 1..200; both window forms given.
        """
        if not 1 <= per_page <= 200:
            raise ValueError("per_page must be in 1..200")
        publication_date_window = date_window(publication_date_window, published_after=published_after,
                                              published_before=published_before)
        clauses = list(filters or []) + date_filter(publication_date_window)
        params = {
            "search": query,
            "per-page": per_page,
            "page": page,
            "filter": ",".join(clauses) or None,
            **self._auth,
        }
        data = await self.http.get_json(f"{self.base_url}/works", params=params)
        return filter_again([paper_from_openalex(w) for w in data.get("results") or []],
                            publication_date_window, source=SEARCH_SOURCE, ledger=ledger)

    async def work(self, work_id: str) -> Paper:
        """One work by ``W…`` id, ``doi:10.…`` or full URL. Raises NotFound for unknown ids."""
        data = await self.http.get_json(f"{self.base_url}/works/{short_id(work_id)}", params=self._auth)
        return paper_from_openalex(data)

    async def citation_counts_by_year(self, work_id: str) -> dict[int, int]:
        """Exact citations per publication year of the citing works.

        One call ``/works?filter=cites:W…&group_by=publication_year``; groups with an unknown
        year are dropped. Returns ``{year: count}`` sorted by year.
        """
        params = {"filter": f"cites:{short_id(work_id)}", "group_by": "publication_year", **self._auth}
        data = await self.http.get_json(f"{self.base_url}/works", params=params)
        counts = {}
        for group in data.get("group_by") or []:
            key = str(group.get("key"))
            if key.isdigit():
                counts[int(key)] = int(group.get("count") or 0)
        return dict(sorted(counts.items()))
