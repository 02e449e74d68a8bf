"""Semantic Scholar Academic Graph API client (Graph API v1).

Endpoints (Kinney et al. 2023, "The Semantic Scholar Open Data Platform"; API docs at
api.semanticscholar.org/api-docs/graph): relevance search (offset+limit <= 1,000), bulk search
with continuation token, paper details, batch (<= 500 ids per request), references and citations
with ``contexts`` / ``intents`` / ``isInfluential`` (paginated by ``offset`` / ``next``).
The key travels in the ``x-api-key`` header (env ``S2_API_KEY``) and never into the cache.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ideaharness.cutoff import CutoffLedger
from ideaharness.schema import Paper, Reference
from ideaharness.scholarly.base import ClientBase, DateWindow, check_window, date_window, filter_again
from ideaharness.scholarly.errors import BadRequest, NotFound

PAPER_FIELDS = (
    "paperId,externalIds,title,abstract,venue,year,publicationDate,citationCount,"
    "publicationTypes,fieldsOfStudy"
)
#: Edge + paper fields IdeaBench requests for references (retrieve_references.py).
EDGE_FIELDS = (
    "contexts,intents,isInfluential,paperId,externalIds,title,abstract,venue,year,"
    "publicationDate,citationCount,publicationTypes"
)
SEARCH_SOURCE = "s2_search"
"""The :class:`~ideaharness.cutoff.CutoffLedger` source of Semantic Scholar searches."""
SEARCH_MAX_WINDOW = 1000
SEARCH_MAX_LIMIT = 100
BATCH_MAX_IDS = 500


def date_window_param(window: DateWindow | None) -> str | None:
    """S2 ``publicationDateOrYear`` value of a window: ``"2019-03-05:2020-06-06"``, ``"2015-01-01:"``."""
    if check_window(window) is None:
        return None
    start, end = window  # type: ignore[misc]
    if start is None and end is None:
        return None
    return f"{start.isoformat() if start else ''}:{end.isoformat() if end else ''}"


def _parse_date(value: Any) -> dt.date | None:
    if not value:
        return None
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def paper_from_s2(data: dict[str, Any]) -> Paper:
    """A :class:`Paper` from one S2 paper object (Graph API camelCase fields)."""
    return Paper(**_paper_fields(data))


def _paper_fields(data: dict[str, Any]) -> dict[str, Any]:
    title = data.get("title") or ""
    pid = data.get("paperId")
    if not pid:  # unresolved reference: stable id from its title
        pid = "s2-unresolved:" + hashlib.sha1(title.encode("utf-8")).hexdigest()[:16]
    external = {str(k): str(v) for k, v in (data.get("externalIds") or {}).items() if v is not None}
    extra: dict[str, Any] = {}
    for k in (
        "corpusId",
        "url",
        "referenceCount",
        "influentialCitationCount",
        "fieldsOfStudy",
        "isOpenAccess",
    ):
        if data.get(k) is not None:
            extra[k] = data[k]
    if isinstance(data.get("tldr"), dict) and data["tldr"].get("text"):
        extra["tldr"] = data["tldr"]["text"]
    return {
        "id": str(pid),
        "title": title,
        "abstract": data.get("abstract"),
        "year": data.get("year"),
        "publication_date": _parse_date(data.get("publicationDate")),
        "venue": data.get("venue") or None,
        "citation_count": data.get("citationCount"),
        "publication_types": data.get("publicationTypes"),
        "external_ids": external,
        "extra": extra,
    }


def reference_from_edge(edge: dict[str, Any], side: str = "citedPaper") -> Reference:
    """A :class:`Reference` from an S2 citation/reference edge (``side`` = citedPaper|citingPaper)."""
    fields = _paper_fields(edge.get(side) or {})
    if edge.get("contextsWithIntent"):
        fields["extra"]["contextsWithIntent"] = edge["contextsWithIntent"]
    return Reference(
        **fields,
        contexts=list(edge.get("contexts") or []),
        intents=list(edge.get("intents") or []),
        is_influential=edge.get("isInfluential"),
    )


class SemanticScholar(ClientBase):
    """Async Semantic Scholar Graph API client.

    Args:
        base_url: API root; point it at a local server in tests.
        api_key: sent as ``x-api-key``; default env ``S2_API_KEY``; None = unauthenticated.
        cache_dir: response cache folder (None = no cache).
        min_interval_s: seconds between requests; default 1.05 with a key (S2's 1 request/s),
            3.0 without.
        **http_options: ``max_retries``, ``backoff_base_s``, ``backoff_max_s``, ``timeout_s``.
    """

    def __init__(
        self,
        base_url: str = "https://api.semanticscholar.org",
        api_key: str | None = None,
        cache_dir: str | Path | None = None,
        min_interval_s: float | None = None,
        **http_options: Any,
    ) -> None:
        key = api_key if api_key is not None else os.environ.get("S2_API_KEY") or None
        interval = min_interval_s if min_interval_s is not None else (1.05 if key else 3.0)
        super().__init__(
            base_url,
            cache_dir=cache_dir,
            min_interval_s=interval,
            headers={"x-api-key": key} if key else None,
            **http_options,
        )

    def _url(self, path: str) -> str:
        return f"{self.base_url}/graph/v1{path}"

    @staticmethod
    def _filters(
        publication_date_window: DateWindow | None,
        year: int | str | None,
        venue: str | Sequence[str] | None,
        min_citation_count: int | None,
        fields_of_study: str | Sequence[str] | None,
        publication_types: str | Sequence[str] | None,
    ) -> dict[str, Any]:
        def join(v: str | Sequence[str] | None) -> str | None:
            return v if v is None or isinstance(v, str) else ",".join(v)

        return {
            "publicationDateOrYear": date_window_param(publication_date_window),
            "year": year,
            "venue": join(venue),
            "minCitationCount": min_citation_count,
            "fieldsOfStudy": join(fields_of_study),
            "publicationTypes": join(publication_types),
        }

    async def search(
        self,
        query: str,
        *,
        limit: int = 10,
        offset: int = 0,
        fields: str = PAPER_FIELDS,
        publication_date_window: DateWindow | None = None,
        year: int | str | None = None,
        venue: str | Sequence[str] | None = None,
        min_citation_count: int | None = None,
        fields_of_study: str | Sequence[str] | None = None,
        publication_types: str | Sequence[str] | None = None,
        published_after: dt.date | None = None,
        published_before: dt.date | None = None,
        ledger: CutoffLedger | None = None,
    ) -> list[Paper]:
        """Relevance search (``GET /graph/v1/paper/search``), one page.

        Args:
            limit: 1..100 results; ``offset + limit`` must be <= 1,000 (S2 limit since 2023-10).
            publication_date_window: ``(start, end)`` dates, either None (knowledge cutoff).
            published_after, published_before: the same window as bounds (after D: from D + 1 day;
                before D: up to D included; :func:`~ideaharness.scholarly.base.date_window`).
            year: ``2024`` or ``"2019-2023"``; venue / fields_of_study / publication_types:
                one value or a list (comma-joined).
            ledger: counts of the results kept and dropped by the date window (source
                :data:`SEARCH_SOURCE`). The window is sent as ``publicationDateOrYear`` AND the
                results are filtered again by their own dates (S2 places a paper by its year when
                it has no date; any service may round or ignore a filter).

        Raises:
            ValueError: limit outside 1..100 or offset + limit > 1,000; both window forms given.
        """
        publication_date_window = date_window(publication_date_window, published_after=published_after,
                                              published_before=published_before)
        if not 1 <= limit <= SEARCH_MAX_LIMIT:
            raise ValueError(f"limit must be in 1..{SEARCH_MAX_LIMIT}, got {limit}")
        if offset < 0 or offset + limit > SEARCH_MAX_WINDOW:
            raise ValueError(
                f"offset + limit must be <= {SEARCH_MAX_WINDOW} for relevance search "
                f"(got {offset} + {limit}); use search_bulk for more"
            )
        params = {"query": query, "fields": fields, "offset": offset, "limit": limit}
        params |= self._filters(
            publication_date_window, year, venue, min_citation_count, fields_of_study, publication_types
        )
        data = await self.http.get_json(self._url("/paper/search"), params=params)
        return filter_again([paper_from_s2(p) for p in data.get("data") or []], publication_date_window,
                            source=SEARCH_SOURCE, ledger=ledger)

    async def search_bulk(
        self,
        query: str | None = None,
        *,
        fields: str = PAPER_FIELDS,
        sort: str | None = None,
        max_results: int | None = None,
        publication_date_window: DateWindow | None = None,
        year: int | str | None = None,
        venue: str | Sequence[str] | None = None,
        min_citation_count: int | None = None,
        fields_of_study: str | Sequence[str] | None = None,
        publication_types: str | Sequence[str] | None = None,
        published_after: dt.date | None = None,
        published_before: dt.date | None = None,
        ledger: CutoffLedger | None = None,
    ) -> AsyncIterator[Paper]:
        """Bulk search (``GET /graph/v1/paper/search/bulk``): yields papers page by page.

        Follows the continuation ``token`` until it is absent or ``max_results`` papers were
        yielded. ``sort``: ``paperId|publicationDate|citationCount[:asc|desc]``. The date window
        (either form, as :meth:`search`) is sent and each page filtered again by the papers' own
        dates (counted in ``ledger``); ``max_results`` counts the papers yielded.
        """
        publication_date_window = date_window(publication_date_window, published_after=published_after,
                                              published_before=published_before)
        params: dict[str, Any] = {"query": query, "fields": fields, "sort": sort}
        params |= self._filters(
            publication_date_window, year, venue, min_citation_count, fields_of_study, publication_types
        )
        yielded = 0
        token: str | None = None
        while True:
            page = await self.http.get_json(
                self._url("/paper/search/bulk"), params={**params, "token": token}
            )
            papers = [paper_from_s2(item) for item in page.get("data") or []]
            for paper in filter_again(papers, publication_date_window, source=SEARCH_SOURCE, ledger=ledger):
                yield paper
                yielded += 1
                if max_results is not None and yielded >= max_results:
                    return
            token = page.get("token")
            if not token:
                return

    async def match_title(self, title: str, *, fields: str = PAPER_FIELDS) -> Paper | None:
        """Best title match (``/graph/v1/paper/search/match``); None when S2 finds none (404)."""
        try:
            data = await self.http.get_json(
                self._url("/paper/search/match"), params={"query": title, "fields": fields}
            )
        except NotFound:
            return None
        items = data.get("data") or []
        return paper_from_s2(items[0]) if items else None

    async def paper(self, paper_id: str, fields: str = PAPER_FIELDS) -> Paper:
        """Details of one paper (id forms: S2 sha, ``CorpusId:``, ``DOI:``, ``ARXIV:``, a bare DOI).

        Raises:
            NotFound: unknown id.
        """
        data = await self.http.get_json(
            self._url(f"/paper/{quote(paper_id, safe='/:')}"), params={"fields": fields}
        )
        return paper_from_s2(data)

    async def papers_batch(self, ids: Sequence[str], fields: str = PAPER_FIELDS) -> list[Paper | None]:
        """Details of many papers (``POST /graph/v1/paper/batch``, chunks of <= 500 ids).

        Returns:
            One entry per input id, in input order; None for ids S2 does not know.
        """
        out: list[Paper | None] = []
        for start in range(0, len(ids), BATCH_MAX_IDS):
            chunk = list(ids[start : start + BATCH_MAX_IDS])
            data = await self.http.post_json(
                self._url("/paper/batch"), params={"fields": fields}, json_body={"ids": chunk}
            )
            out.extend(paper_from_s2(d) if d else None for d in data)
        return out

    async def _edges(
        self, paper_id: str, kind: str, fields: str, page_size: int, max_items: int | None,
        notes: list[str] | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """Edges page by page. A 400 on a later page means S2 serves no more (it caps how deep
        ``offset`` may go): paging stops there with what was fetched, and a note says so."""
        offset = 0
        seen = 0
        while True:
            try:
                page = await self.http.get_json(
                    self._url(f"/paper/{quote(paper_id, safe='/:')}/{kind}"),
                    params={"fields": fields, "offset": offset, "limit": page_size},
                )
            except BadRequest as exc:
                if offset == 0:
                    raise
                if notes is not None:
                    notes.append(
                        f"{kind} of {paper_id}: Semantic Scholar serves no page at offset {offset} "
                        f"({exc}); used the first {seen}"
                    )
                return
            for edge in page.get("data") or []:
                yield edge
                seen += 1
                if max_items is not None and seen >= max_items:
                    return
            nxt = page.get("next")
            if nxt is None or not page.get("data"):
                return
            offset = int(nxt)

    async def references(
        self, paper_id: str, *, fields: str = EDGE_FIELDS, page_size: int = 1000,
        max_items: int | None = None, notes: list[str] | None = None,
    ) -> list[Reference]:
        """All references of a paper (``/paper/{id}/references``, paginated by ``next``).

        ``page_size`` <= 1,000; ``max_items`` stops early (IdeaBench parity: one page of 300).
        A page S2 refuses (HTTP 400 past the offsets it serves) ends the list; ``notes`` gets why.

        Raises:
            NotFound: unknown id. BadRequest: the first page is refused.
        """
        return [
            reference_from_edge(e, "citedPaper")
            async for e in self._edges(paper_id, "references", fields, page_size, max_items, notes)
        ]

    async def citations(
        self, paper_id: str, *, fields: str = EDGE_FIELDS, page_size: int = 1000,
        max_items: int | None = None, notes: list[str] | None = None,
    ) -> list[Reference]:
        """Papers citing this one (``/paper/{id}/citations``), as :class:`Reference` records.

        S2 serves only the first citations of a paper (its offset cap); paging stops at the first
        page it refuses (HTTP 400) and ``notes`` gets why.
        """
        return [
            reference_from_edge(e, "citingPaper")
            async for e in self._edges(paper_id, "citations", fields, page_size, max_items, notes)
        ]

    async def citation_counts_by_year(
        self, paper_id: str, *, page_size: int = 1000, notes: list[str] | None = None
    ) -> dict[int, int]:
        """Citations per calendar year, counted from the citing papers' years.

        S2 has no per-year field, so this pages through ``/paper/{id}/citations`` with
        ``fields=year,publicationDate`` and counts ``year`` (or the year of ``publicationDate``
        when ``year`` is null). Citations with neither are not counted. Exact up to what S2
        serves: when it refuses a later page (HTTP 400 past its offset cap) the counts cover the
        citations fetched so far and ``notes`` gets a line saying so.

        Returns:
            ``{year: count}`` sorted by year.
        """
        counts: dict[int, int] = {}
        async for edge in self._edges(paper_id, "citations", "year,publicationDate", page_size, None, notes):
            citing = edge.get("citingPaper") or {}
            year = citing.get("year")
            if year is None and citing.get("publicationDate"):
                year = int(str(citing["publicationDate"])[:4])
            if year is not None:
                counts[int(year)] = counts.get(int(year), 0) + 1
        return dict(sorted(counts.items()))
