"""Literature-based metrics of AI Idea Bench 2025: novelty NA (Eq. 7) and feasibility FA (Eq. 8-10).

Both need Semantic Scholar (:class:`ideaharness.scholarly.SemanticScholar`, any base URL, e.g. a
local replay server), reached through a :class:`~ideaharness.scholarly.gate.ScholarGate`. When the
host cannot be reached at all (detected once, by a fast probe) every NA/FA unit is skipped with
the reason; when one request fails (a 400, a 5xx after retries) only the idea that needed it is
skipped. Skipped units are listed and counted (the run is partial) -- never a score of 0.

NA: the topic's keywords (the dataset's ``split_topic`` keywords, else an LLM keyword step) are
searched twice with the instance cutoff as the boundary (``search_limit`` papers before, the same
number on/after); title + abstract of each paper is embedded with the run's embedding model; hd, cd
and cc follow Eq. 7, for the idea's motivation and for its experiment plan (contemporary papers
without a citation count are left out of cd and cc and counted in the record).
FA: an LLM splits the idea into at most ``max_concepts`` atomic method concepts; each is searched
(``search_limit`` papers, published up to the cutoff); every paper found gets its citations per
year (as far as S2 serves them: a paper whose citation pages stop early is counted from what was
fetched, with a note in the record); S_F is the mean influence over all of them (Eq. 10) with y_l
from the config.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ideaharness.metrics.feasibility import feasibility_score, paper_influence
from ideaharness.metrics.novelty import novelty_from_embeddings
from ideaharness.schema import Paper
from ideaharness.scholarly.gate import ScholarGate, ScholarUnavailable

__all__ = ["ScholarGate", "ScholarUnavailable", "feasibility_record", "novelty_record", "paper_text",
           "search_split"]


def paper_text(paper: Paper) -> str:
    """Text of a found paper compared with ideas: title + abstract (the paper digests PDFs)."""
    return f"{paper.title}. {paper.abstract}" if paper.abstract else paper.title


async def search_split(
    gate: ScholarGate, query: str, cutoff: dt.date, limit: int
) -> tuple[list[Paper], list[Paper]]:
    """(historical, contemporary) papers for a query: published before / on-or-after ``cutoff``.

    Raises:
        ScholarUnavailable: Semantic Scholar is unreachable or a search failed.
    """
    before = cutoff - dt.timedelta(days=1)
    historical = await gate.call("search", query, limit=limit, publication_date_window=(None, before))
    contemporary = await gate.call("search", query, limit=limit, publication_date_window=(cutoff, None))
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
) -> dict[str, Any]:
    """FA of one idea: search each concept, fetch citations per year of every paper, S_F (Eq. 10).

    ``notes`` in the record says which papers' citations S2 served only in part.

    Raises:
        ScholarUnavailable: Semantic Scholar is unreachable or a request failed.
    """
    papers: list[dict[str, Any]] = []
    notes: list[str] = []
    for concept in concepts:
        found = await gate.call("search", concept, limit=limit, publication_date_window=(None, cutoff))
        for paper in found:
            counts = await gate.call("citation_counts_by_year", paper.id, notes=notes)
            papers.append({
                "concept": concept, "paper_id": paper.id, "title": paper.title,
                "citations_by_year": {str(y): int(c) for y, c in counts.items()},
                "influence": paper_influence(counts, latest_year, lam),
            })
    score = feasibility_score([{int(y): c for y, c in p["citations_by_year"].items()} for p in papers],
                              latest_year, lam)
    return {"concepts": concepts, "papers": papers, "n_papers": len(papers), "latest_year": latest_year,
            "feasibility": score, "notes": notes}
