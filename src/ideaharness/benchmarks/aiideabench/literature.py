"""Literature-based metrics of AI Idea Bench 2025: novelty NA (Eq. 7) and feasibility FA (Eq. 8-10).

Both need Semantic Scholar (:class:`ideaharness.scholarly.SemanticScholar`, any base URL, e.g. a
local replay server), reached through a :class:`~ideaharness.scholarly.gate.ScholarGate`. When the
host cannot be reached at all (detected once, by a fast probe) every NA/FA unit is skipped with
the reason; when one request fails (a 400, a 5xx after retries) only the idea that needed it is
skipped. Skipped units are listed and counted (the run is partial) -- never a score of 0.

NA: the topic's keywords (the dataset's ``split_topic`` keywords, else an LLM keyword step) are
searched twice with the instance cutoff as the boundary (``search_limit`` papers before, the same
number on/after: the contemporary papers are the future window Eq. 7 compares against, read after
the cutoff by design; they are embedded, never shown in a prompt); title + abstract of each paper
is embedded with the run's embedding model; hd, cd
and cc follow Eq. 7, for the idea's motivation and for its experiment plan (contemporary papers
without a citation count are left out of cd and cc and counted in the record).
FA: an LLM splits the idea into at most ``max_concepts`` atomic method concepts; each is searched
(``search_limit`` papers, published up to the cutoff); every paper found gets its citations per
year (as far as S2 serves them: a paper whose citation pages stop early is counted from what was
fetched, with a note in the record); S_F is the mean influence over all of them (Eq. 10) with y_l
from the config.

Knowledge cutoff: every search sends its date bound and the client filters the results again by
their own dates (:mod:`ideaharness.scholarly.base`); each search's works, kept and excluded, are
returned as ``cutoff`` access records (:func:`ideaharness.cutoff.access_record`, sources
:data:`HISTORICAL_SOURCE`, :data:`CONTEMPORARY_SOURCE`, :data:`FEASIBILITY_SOURCE`).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ideaharness.cutoff import CutoffLedger, access_record
from ideaharness.metrics.feasibility import feasibility_score, paper_influence
from ideaharness.metrics.novelty import novelty_from_embeddings
from ideaharness.schema import Paper
from ideaharness.scholarly.gate import ScholarGate, ScholarUnavailable

__all__ = ["CONTEMPORARY_SOURCE", "FEASIBILITY_SOURCE", "HISTORICAL_SOURCE", "ScholarGate",
           "ScholarUnavailable", "feasibility_record", "novelty_record", "paper_text", "search_split"]

HISTORICAL_SOURCE = "s2_search_historical"
"""NA's search before the cutoff (the cutoff governs it)."""
CONTEMPORARY_SOURCE = "s2_search_contemporary"
"""NA's search on or after the cutoff: the future window of Eq. 7 (read after the cutoff by design)."""
FEASIBILITY_SOURCE = "s2_search_feasibility"
"""FA's concept searches, up to the cutoff."""


def paper_text(paper: Paper) -> str:
    """Text of a found paper compared with ideas: title + abstract (the paper digests PDFs)."""
    return f"{paper.title}. {paper.abstract}" if paper.abstract else paper.title


async def search_split(
    gate: ScholarGate, query: str, cutoff: dt.date, limit: int,
    records: list[dict[str, Any]] | None = None,
) -> tuple[list[Paper], list[Paper]]:
    """(historical, contemporary) papers for a query: published before / on-or-after ``cutoff``
    (each search sends its bound and its results are filtered again by their own dates).

    Args:
        records: when given, the two searches' ``cutoff`` access records are appended (sources
            :data:`HISTORICAL_SOURCE`, :data:`CONTEMPORARY_SOURCE`).

    Raises:
        ScholarUnavailable: Semantic Scholar is unreachable or a search failed.
    """
    before = cutoff - dt.timedelta(days=1)
    past, future = CutoffLedger(), CutoffLedger()
    historical = list(await gate.call("search", query, limit=limit, published_before=before, ledger=past))
    contemporary = list(await gate.call("search", query, limit=limit, published_after=before, ledger=future))
    if records is not None:
        record = access_record(_as(past, HISTORICAL_SOURCE), HISTORICAL_SOURCE, historical, cutoff=cutoff)
        record["window"] = [None, before.isoformat()]  # strictly before the cutoff day (Eq. 7's split)
        records.append(record)
        records.append(access_record(_as(future, CONTEMPORARY_SOURCE), CONTEMPORARY_SOURCE, contemporary,
                                     cutoff=None, start=cutoff))
    return historical, contemporary


def _as(ledger: CutoffLedger, source: str) -> CutoffLedger:
    """The ledger's rows (a client counts under its own source) under ``source``."""
    out = CutoffLedger()
    for rows in ledger.counts.values():
        out.merge({source: rows})
    for works in ledger.excluded_works.values():
        out.excluded_works.setdefault(source, []).extend(works)
    if source not in out.counts:
        out.merge({source: {}})
    return out


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
    gate: ScholarGate, concepts: list[str], cutoff: dt.date, limit: int, latest_year: int, lam: float,
    records: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """FA of one idea: search each concept (published up to ``cutoff``, filtered again), fetch
    citations per year of every paper, S_F (Eq. 10).

    ``notes`` in the record says which papers' citations S2 served only in part; ``records``, when
    given, receives one ``cutoff`` access record per concept search (:data:`FEASIBILITY_SOURCE`).

    Raises:
        ScholarUnavailable: Semantic Scholar is unreachable or a request failed.
    """
    papers: list[dict[str, Any]] = []
    notes: list[str] = []
    for concept in concepts:
        ledger = CutoffLedger()
        found = list(await gate.call("search", concept, limit=limit, published_before=cutoff, ledger=ledger))
        if records is not None:
            records.append(access_record(_as(ledger, FEASIBILITY_SOURCE), FEASIBILITY_SOURCE, found,
                                         cutoff=cutoff))
        for paper in found:
            counts = await gate.call("citation_counts_by_year", paper.id, notes=notes)
            papers.append({
                "concept": concept, "paper_id": paper.id, "title": paper.title,
                "publication_date": paper.publication_date.isoformat() if paper.publication_date else None,
                "year": paper.year,
                "citations_by_year": {str(y): int(c) for y, c in counts.items()},
                "influence": paper_influence(counts, latest_year, lam),
            })
    score = feasibility_score([{int(y): c for y, c in p["citations_by_year"].items()} for p in papers],
                              latest_year, lam)
    return {"concepts": concepts, "papers": papers, "n_papers": len(papers), "latest_year": latest_year,
            "feasibility": score, "notes": notes}
