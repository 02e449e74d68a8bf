"""Literature-based metrics of AI Idea Bench 2025: novelty NA (Eq. 7) and feasibility FA (Eq. 8-10).

Both need Semantic Scholar (:class:`ideaharness.scholarly.SemanticScholar`, any base URL, e.g. a
local replay server). When it cannot be reached (offline, connection refused, server errors after
retries) the metrics are skipped and the reason is recorded -- never a score of 0.

NA: the topic's keywords (the dataset's ``split_topic`` keywords, else an LLM keyword step) are
searched twice with the instance cutoff as the boundary (``search_limit`` papers before, the same
number on/after); title + abstract of each paper is embedded with the run's embedding model; hd, cd
and cc follow Eq. 7, for the idea's motivation and for its experiment plan (contemporary papers
without a citation count are left out of cd and cc and counted in the record).
FA: an LLM splits the idea into at most ``max_concepts`` atomic method concepts; each is searched
(``search_limit`` papers, published up to the cutoff); every paper found gets its citations per
year; S_F is the mean influence over all of them (Eq. 10) with y_l from the config.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ideaharness.metrics.feasibility import feasibility_score, paper_influence
from ideaharness.metrics.novelty import novelty_from_embeddings
from ideaharness.schema import Paper

UNREACHABLE_ERRORS: tuple[type[BaseException], ...] = (OSError, TimeoutError)


def _unreachable_types() -> tuple[type[BaseException], ...]:
    import httpx

    from ideaharness.scholarly.errors import ScholarlyError

    return (*UNREACHABLE_ERRORS, httpx.HTTPError, ScholarlyError)


def paper_text(paper: Paper) -> str:
    """Text of a found paper compared with ideas: title + abstract (the paper digests PDFs)."""
    return f"{paper.title}. {paper.abstract}" if paper.abstract else paper.title


class ScholarGate:
    """Opens the Semantic Scholar client once and remembers whether it is usable.

    ``reason`` is None while usable; after the first connection/HTTP/API error (after the client's
    own bounded retries) every later call is skipped with that reason (no retry storm against a dead
    endpoint), and the metrics that needed it are reported as skipped.
    """

    def __init__(self, base_url: str | None, cache_dir: str | None = None, client: Any = None) -> None:
        self.reason: str | None = None
        self.base_url = base_url or "https://api.semanticscholar.org"
        self.client = client
        self._cache_dir = cache_dir

    def _open(self) -> Any:
        if self.client is None:
            from ideaharness.scholarly import SemanticScholar

            local = self.base_url.startswith(("http://127.0.0.1", "http://localhost"))
            self.client = SemanticScholar(
                base_url=self.base_url, cache_dir=self._cache_dir,
                min_interval_s=0.0 if local else None, max_retries=1 if local else 3, backoff_base_s=0.2,
                timeout_s=30.0,
            )
        return self.client

    async def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``await client.<method>(...)``; None when unreachable (``reason`` set)."""
        if self.reason is not None:
            return None
        try:
            return await getattr(self._open(), method)(*args, **kwargs)
        except _unreachable_types() as exc:
            self.reason = f"Semantic Scholar unusable at {self.base_url}: {type(exc).__name__}: {exc}"
            return None

    async def aclose(self) -> None:
        if self.client is not None and hasattr(self.client, "aclose"):
            await self.client.aclose()


async def search_split(
    gate: ScholarGate, query: str, cutoff: dt.date, limit: int
) -> tuple[list[Paper], list[Paper]] | None:
    """(historical, contemporary) papers for a query: published before / on-or-after ``cutoff``."""
    before = cutoff - dt.timedelta(days=1)
    historical = await gate.call("search", query, limit=limit, publication_date_window=(None, before))
    contemporary = await gate.call("search", query, limit=limit, publication_date_window=(cutoff, None))
    if historical is None or contemporary is None:
        return None
    return list(historical), list(contemporary)


def novelty_record(
    idea_texts: dict[str, str], historical: list[Paper], contemporary: list[Paper], embed_fn: Any, lam: float
) -> dict[str, Any]:
    """NA for each component text of one idea (hd, cd, cc, S_N and bounded S_N)."""
    import numpy as np

    cited = [p for p in contemporary if p.citation_count is not None]
    hist_vecs = embed_fn([paper_text(p) for p in historical]) if historical else np.zeros((0, 1))
    cont_vecs = embed_fn([paper_text(p) for p in cited]) if cited else np.zeros((0, 1))
    out: dict[str, Any] = {}
    for comp, text in idea_texts.items():
        vec = embed_fn([text])[0]
        h = hist_vecs if hist_vecs.shape[0] else np.zeros((0, vec.shape[0]))
        c = cont_vecs if cont_vecs.shape[0] else np.zeros((0, vec.shape[0]))
        out[comp] = novelty_from_embeddings(vec, h, c, [int(p.citation_count or 0) for p in cited],
                                            lam).model_dump()
    out["contemporary_without_citation_count"] = len(contemporary) - len(cited)
    return out


async def feasibility_record(
    gate: ScholarGate, concepts: list[str], cutoff: dt.date, limit: int, latest_year: int, lam: float
) -> dict[str, Any] | None:
    """FA of one idea: search each concept, fetch citations per year of every paper, S_F (Eq. 10)."""
    papers: list[dict[str, Any]] = []
    for concept in concepts:
        found = await gate.call("search", concept, limit=limit, publication_date_window=(None, cutoff))
        if found is None:
            return None
        for paper in found:
            counts = await gate.call("citation_counts_by_year", paper.id)
            if counts is None:
                return None
            papers.append({
                "concept": concept, "paper_id": paper.id, "title": paper.title,
                "citations_by_year": {str(y): int(c) for y, c in counts.items()},
                "influence": paper_influence(counts, latest_year, lam),
            })
    score = feasibility_score([{int(y): c for y, c in p["citations_by_year"].items()} for p in papers],
                              latest_year, lam)
    return {"concepts": concepts, "papers": papers, "n_papers": len(papers), "latest_year": latest_year,
            "feasibility": score}
