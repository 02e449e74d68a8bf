"""Literature novelty of an idea against historical and contemporary papers (AI Idea Bench NA).

Qiu et al. 2025, AI Idea Bench 2025 (arXiv 2504.14191), Eq. 7. Papers found for the topic's
keywords are split at the cutoff date into historical (before) and contemporary (on/after) sets;
hd and cd are the mean cosine similarities between the idea and those papers; cc is the mean
citation count of the contemporary papers.

S_N = (1 + cd) * cc / (1 + hd) is unbounded because cc is a raw citation count, so a bounded variant
replaces cc by Inf_N(cc) = 1 - exp(-cc / 50) (Eq. 8); both are reported.

Differences from the published ``Novelty.py``: an empty side gives None (the code gives 0); the
paper texts compared are title + abstract (the code digests open-access PDFs); the experiment-plan
score uses cd and hd of the plan (the code mixes in the motivation's cd).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

from ideaharness.metrics.feasibility import DEFAULT_LAMBDA, influence_norm
from ideaharness.schema import Paper


class NoveltyResult(BaseModel):
    """hd, cd, cc and both novelty scores of one idea text; None where a side had no paper."""

    hd: float | None
    cd: float | None
    cc: float | None
    n_historical: int
    n_contemporary: int
    novelty: float | None
    novelty_bounded: float | None


def novelty_score(hd: float, cd: float, cc: float) -> float:
    """Literature novelty S_N = (1 + cd) * cc / (1 + hd)   (AI Idea Bench 2025, Eq. 7).

    Args:
        hd: mean cosine similarity to historical papers, in [-1, 1] (> -1).
        cd: mean cosine similarity to contemporary papers, in [-1, 1].
        cc: mean citation count of contemporary papers (>= 0).

    Returns:
        S_N >= 0 for non-negative similarities; unbounded above (grows with cc).

    Raises:
        ValueError: hd <= -1 or cc < 0.
    """
    if hd <= -1:
        raise ValueError(f"hd must be > -1, got {hd}")
    if cc < 0:
        raise ValueError(f"cc must be >= 0, got {cc}")
    return (1.0 + cd) * cc / (1.0 + hd)


def bounded_novelty_score(hd: float, cd: float, cc: float, lam: float = DEFAULT_LAMBDA) -> float:
    """Bounded novelty (1 + cd) * Inf_N(cc) / (1 + hd), Inf_N from AI Idea Bench 2025 Eq. 8.

    Same arguments as :func:`novelty_score`; for similarities in [0, 1] the value lies in [0, 2).
    """
    if hd <= -1:
        raise ValueError(f"hd must be > -1, got {hd}")
    return (1.0 + cd) * influence_norm(cc, lam) / (1.0 + hd)


def split_by_cutoff(papers: Sequence[Paper], cutoff: dt.date) -> tuple[list[Paper], list[Paper]]:
    """Split papers into (historical, contemporary): published before ``cutoff`` vs on/after it.

    Uses ``publication_date`` when known, else ``year`` (a paper of the cutoff's year without a
    date counts as contemporary); papers with neither are dropped.
    """
    historical: list[Paper] = []
    contemporary: list[Paper] = []
    for paper in papers:
        if paper.publication_date is not None:
            (historical if paper.publication_date < cutoff else contemporary).append(paper)
        elif paper.year is not None:
            (historical if paper.year < cutoff.year else contemporary).append(paper)
    return historical, contemporary


def novelty_from_embeddings(
    idea: np.ndarray,
    historical: np.ndarray,
    contemporary: np.ndarray,
    contemporary_citations: Sequence[int],
    lam: float = DEFAULT_LAMBDA,
) -> NoveltyResult:
    """hd, cd, cc and S_N (Eq. 7) from L2-normalised embeddings.

    Args:
        idea: shape (d,), the idea text's embedding.
        historical: shape (n_h, d), historical papers' embeddings (n_h may be 0).
        contemporary: shape (n_c, d), contemporary papers' embeddings (n_c may be 0).
        contemporary_citations: n_c citation counts (unknown counts must be left out upstream).
    """
    if len(contemporary_citations) != contemporary.shape[0]:
        raise ValueError("one citation count per contemporary paper is required")
    hd = float(np.mean(historical @ idea)) if historical.shape[0] else None
    cd = float(np.mean(contemporary @ idea)) if contemporary.shape[0] else None
    cc = float(np.mean(contemporary_citations)) if len(contemporary_citations) else None
    novelty = bounded = None
    if hd is not None and cd is not None and cc is not None:
        novelty = novelty_score(hd, cd, cc)
        bounded = bounded_novelty_score(hd, cd, cc, lam)
    return NoveltyResult(
        hd=hd,
        cd=cd,
        cc=cc,
        n_historical=int(historical.shape[0]),
        n_contemporary=int(contemporary.shape[0]),
        novelty=novelty,
        novelty_bounded=bounded,
    )
