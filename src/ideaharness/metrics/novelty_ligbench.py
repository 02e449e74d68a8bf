"""LigBench hybrid novelty: similarity to related literature blended with the judge's novelty.

Appendix F of LigBench (Wang et al.):

    s_weighted = α · max_i sim_i + (1 − α) · mean_i sim_i                  (α = 0.6)
    s_sim      = 5 · (1 − 1 / (1 + exp(−k (s_weighted − μ))))              (k = 12, μ = 0.72)
    novelty    = β · s_sim + (1 − β) · s_llm                                (β = 0.7)

sim_i are cosine similarities between the idea and related papers (Semantic Scholar search, or a
local corpus offline); s_llm is the judge's novelty score on 0-5 from the initial-scoring step.
The paper's worked values: s_weighted 0.61 → 3.95, 0.72 → 2.50, 0.79 → 1.51, 0.90 → 0.52.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, Field


class NoveltySettings(BaseModel):
    """α, k, μ, β of LigBench Appendix F (the paper's values as defaults)."""

    alpha: float = Field(default=0.6, ge=0, le=1, description="Novelty: weight of the max in "
                         "s_weighted = alpha*max + (1-alpha)*mean similarity.")
    k: float = Field(default=12.0, gt=0,
                     description="Novelty: steepness k of s_sim = 5(1 - sigma(k(s - mu))).")
    mu: float = Field(0.72, description="Novelty: midpoint mu of s_sim.")
    beta: float = Field(default=0.7, ge=0, le=1, description="Novelty: weight of s_sim in "
                        "beta*s_sim + (1-beta)*s_llm.")


def weighted_similarity(similarities: Sequence[float], alpha: float = 0.6) -> float:
    """s_weighted = α·max(sim) + (1 − α)·mean(sim) (LigBench Appendix F).

    Args:
        similarities: cosine similarities in [-1, 1] to the related papers (at least one).

    Raises:
        ValueError: empty input.
    """
    sims = [float(x) for x in similarities]
    if not sims:
        raise ValueError("weighted_similarity needs at least one similarity")
    return alpha * max(sims) + (1 - alpha) * sum(sims) / len(sims)


def similarity_novelty(s_weighted: float, k: float = 12.0, mu: float = 0.72) -> float:
    """s_sim = 5·(1 − 1/(1 + exp(−k (s_weighted − μ)))), in (0, 5); high similarity → low novelty."""
    return 5.0 * (1.0 - 1.0 / (1.0 + math.exp(-k * (s_weighted - mu))))


def novelty_score(s_sim: float, s_llm: float, beta: float = 0.7) -> float:
    """Final LigBench novelty β·s_sim + (1 − β)·s_llm on 0-5."""
    return beta * s_sim + (1 - beta) * s_llm


def hybrid_novelty(
    similarities: Sequence[float], s_llm: float, settings: NoveltySettings | None = None
) -> dict[str, float]:
    """All three stages at once: ``{"s_weighted", "s_sim", "s_llm", "novelty"}``."""
    cfg = settings or NoveltySettings()
    s_weighted = weighted_similarity(similarities, cfg.alpha)
    s_sim = similarity_novelty(s_weighted, cfg.k, cfg.mu)
    return {"s_weighted": s_weighted, "s_sim": s_sim, "s_llm": s_llm,
            "novelty": novelty_score(s_sim, s_llm, cfg.beta)}
