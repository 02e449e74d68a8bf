"""arXiv API client (``/api/query``, Atom 1.0 parsed with the standard library).

Query syntax per the arXiv API user manual: ``cat:cs.CL AND submittedDate:[YYYYMMDDHHMM TO
YYYYMMDDHHMM]`` (GMT). Etiquette: at most one request every 3 s, one connection at a time.
"""

from __future__ import annotations

import datetime as dt
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ideaharness.cutoff import CutoffLedger
from ideaharness.schema import Paper
from ideaharness.scholarly.base import ClientBase, DateWindow, check_window, date_window, filter_again
from ideaharness.scholarly.errors import ScholarlyError

_NS = {
    "atom": "http://www.w3.org/2005/Atom",
    "opensearch": "http://a9.com/-/spec/opensearch/1.1/",
    "arxiv": "http://arxiv.org/schemas/atom",
}
_VERSION = re.compile(r"v\d+$")


class ArxivPage(BaseModel):
    """One page of arXiv results: ``total`` = opensearch totalResults, ``start`` = startIndex."""

    total: int
    start: int
    papers: list[Paper]


SEARCH_SOURCE = "arxiv_search"
"""The :class:`~ideaharness.cutoff.CutoffLedger` source of arXiv searches."""


def _text(node: ET.Element | None) -> str | None:
    if node is None or node.text is None:
        return None
    return " ".join(node.text.split())


def parse_atom(xml_text: str) -> ArxivPage:
    """Parse an arXiv API Atom feed into papers.

    Each entry becomes a :class:`Paper` with ``id`` = the arXiv id without version,
    ``publication_date`` = v1 ``published`` date, ``external_ids`` ArXiv (+ DOI), and
    ``extra`` = version, authors, categories, primary_category, comment, journal_ref, updated.

    Raises:
        ScholarlyError: the text is not an Atom feed (arXiv reports errors as feed entries
            titled "Error"; those are raised too).
    """
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError as exc:
        raise ScholarlyError(f"arXiv response is not XML: {exc}") from None
    if root.tag != f"{{{_NS['atom']}}}feed":
        raise ScholarlyError(f"arXiv response is not an Atom feed (root {root.tag})")
    papers = []
    for entry in root.findall("atom:entry", _NS):
        title = _text(entry.find("atom:title", _NS)) or ""
        abs_url = _text(entry.find("atom:id", _NS)) or ""
        if title == "Error" and "api/errors" in abs_url:
            raise ScholarlyError(f"arXiv API error: {_text(entry.find('atom:summary', _NS))}")
        versioned = abs_url.rsplit("/abs/", 1)[-1]
        arxiv_id = _VERSION.sub("", versioned)
        published = _text(entry.find("atom:published", _NS))
        pub_date = dt.date.fromisoformat(published[:10]) if published else None
        external = {"ArXiv": arxiv_id}
        doi = _text(entry.find("arxiv:doi", _NS))
        if doi:
            external["DOI"] = doi
        primary = entry.find("arxiv:primary_category", _NS)
        extra: dict[str, Any] = {
            "version": versioned[len(arxiv_id) :] or None,
            "authors": [_text(a.find("atom:name", _NS)) for a in entry.findall("atom:author", _NS)],
            "categories": [c.get("term") for c in entry.findall("atom:category", _NS)],
            "primary_category": primary.get("term") if primary is not None else None,
            "comment": _text(entry.find("arxiv:comment", _NS)),
            "journal_ref": _text(entry.find("arxiv:journal_ref", _NS)),
            "updated": _text(entry.find("atom:updated", _NS)),
        }
        papers.append(
            Paper(
                id=arxiv_id,
                title=title,
                abstract=_text(entry.find("atom:summary", _NS)),
                year=pub_date.year if pub_date else None,
                publication_date=pub_date,
                venue="arXiv",
                external_ids=external,
                extra={k: v for k, v in extra.items() if v not in (None, [])},
            )
        )
    total = int(_text(root.find("opensearch:totalResults", _NS)) or len(papers))
    start = int(_text(root.find("opensearch:startIndex", _NS)) or 0)
    return ArxivPage(total=total, start=start, papers=papers)


def submitted_date_clause(window: DateWindow | None) -> str | None:
    """``submittedDate:[YYYYMMDD0000 TO YYYYMMDD2359]`` for a date window (open ends widened)."""
    if check_window(window) is None:
        return None
    start, end = window  # type: ignore[misc]
    if start is None and end is None:
        return None
    lo = (start or dt.date(1991, 1, 1)).strftime("%Y%m%d") + "0000"
    hi = (end or dt.date(9999, 12, 31)).strftime("%Y%m%d") + "2359"
    return f"submittedDate:[{lo} TO {hi}]"


class ArXiv(ClientBase):
    """Async arXiv API client (default 3 s between requests, per arXiv's terms of use)."""

    def __init__(
        self,
        base_url: str = "http://export.arxiv.org",
        cache_dir: str | Path | None = None,
        min_interval_s: float = 3.0,
        **http_options: Any,
    ) -> None:
        super().__init__(base_url, cache_dir=cache_dir, min_interval_s=min_interval_s, **http_options)

    async def query(
        self,
        search_query: str | None = None,
        *,
        id_list: list[str] | None = None,
        category: str | None = None,
        publication_date_window: DateWindow | None = None,
        start: int = 0,
        max_results: int = 100,
        sort_by: str | None = None,
        sort_order: str | None = None,
        published_after: dt.date | None = None,
        published_before: dt.date | None = None,
        ledger: CutoffLedger | None = None,
    ) -> ArxivPage:
        """One page of ``/api/query``.

        ``category`` (e.g. ``cs.CL``) and ``publication_date_window`` (submission dates; or
        ``published_after`` = strictly after, ``published_before`` = on or before,
        :func:`~ideaharness.scholarly.base.date_window`) are ANDed to ``search_query``; the
        entries are filtered again by their v1 dates (``papers``; ``total`` stays the service's
        count), counted in ``ledger`` (source :data:`SEARCH_SOURCE`). ``max_results`` <= 2,000 per
        call (arXiv limit).

        Raises:
            ValueError: nothing to query, max_results outside 1..2000, both window forms given.
        """
        if not 1 <= max_results <= 2000:
            raise ValueError("max_results must be in 1..2000")
        publication_date_window = date_window(publication_date_window, published_after=published_after,
                                              published_before=published_before)
        clauses = [
            c
            for c in (
                search_query,
                f"cat:{category}" if category else None,
                submitted_date_clause(publication_date_window),
            )
            if c
        ]
        if not clauses and not id_list:
            raise ValueError("give search_query, category, a date window or id_list")
        params: dict[str, Any] = {
            "search_query": " AND ".join(clauses) if clauses else None,
            "id_list": ",".join(id_list) if id_list else None,
            "start": start,
            "max_results": max_results,
            "sortBy": sort_by,
            "sortOrder": sort_order,
        }
        page = parse_atom(await self.http.get_text(f"{self.base_url}/api/query", params=params))
        kept = filter_again(page.papers, publication_date_window, source=SEARCH_SOURCE, ledger=ledger)
        return page.model_copy(update={"papers": kept})
