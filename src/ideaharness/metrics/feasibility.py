"""Feasibility of an idea from the citation history of the methods it relies on (AI Idea Bench FA).

Qiu et al. 2025, AI Idea Bench 2025 (arXiv 2504.14191), Eq. 8-10: each atomic method concept of the
idea is searched (5 papers per concept); each paper found gets an influence score from its citations
per year; the idea's feasibility S_F is the mean influence over every paper found.

Differences from the published ``feasibility.py`` (documented, deliberate): the latest year ``y_l``
is the instance's cutoff year or the current year (the code hard-codes 2024 and the recent-year set
{2023, 2024, 2025}); each of the last two years is normalised on its own (Eq. 9) rather than the
recent counts being summed first; years after ``y_l`` are not counted (they lie after the cutoff);
and S_F averages all papers found, not one list per keyword group.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

DEFAULT_LAMBDA = 50.0


def influence_norm(x: float, lam: float = DEFAULT_LAMBDA) -> float:
    """Normalised influence of a citation count.

    Inf_N(x) = 1 - exp(-x / lambda), lambda = 50   (AI Idea Bench 2025, Eq. 8)

    Args:
        x: citation count (>= 0).
        lam: saturation constant lambda (> 0).

    Returns:
        Value in [0, 1); Inf_N(35) ~ 0.50, Inf_N(100) ~ 0.86.

    Raises:
        ValueError: x < 0 or lam <= 0.
    """
    if x < 0:
        raise ValueError(f"citation count must be >= 0, got {x}")
    if lam <= 0:
        raise ValueError(f"lambda must be > 0, got {lam}")
    return 1.0 - math.exp(-x / lam)


def paper_influence(
    citations_by_year: Mapping[int, int], latest_year: int, lam: float = DEFAULT_LAMBDA
) -> float:
    """Influence of one paper from its citations per year.

    Inf = sum_{y < y_l - 1} Inf_N(x_y) / (y_l - y) + sum_{y in {y_l - 1, y_l}} Inf_N(x_y)
    (AI Idea Bench 2025, Eq. 9); x_y = citations received in year y; each year counted once.

    Args:
        citations_by_year: {year: number of citations received that year}; counts >= 0.
        latest_year: y_l, the instance cutoff's year (or the current year); years after it are
            ignored.
        lam: lambda of :func:`influence_norm`.

    Returns:
        Influence >= 0 (at most about 2 + sum_k 1/k over the older years).

    Raises:
        ValueError: a negative count.
    """
    total = 0.0
    for year, count in citations_by_year.items():
        year = int(year)
        if year > latest_year:
            continue
        value = influence_norm(float(count), lam)
        if year >= latest_year - 1:
            total += value
        else:
            total += value / (latest_year - year)
    return total


def feasibility_score(
    papers_citations_by_year: Sequence[Mapping[int, int]],
    latest_year: int,
    lam: float = DEFAULT_LAMBDA,
) -> float | None:
    """Feasibility S_F of one idea: the mean influence over all papers found for its concepts.

    S_F = (1/|P|) * sum_{p in P} Inf(p)   (AI Idea Bench 2025, Eq. 10), P = every paper returned
    by the concept searches (e.g. 5 per concept), not only the last one.

    Returns:
        Mean influence, or None when no paper was found (never 0 for "unknown").
    """
    if not papers_citations_by_year:
        return None
    values = [paper_influence(c, latest_year, lam) for c in papers_citations_by_year]
    return sum(values) / len(values)
