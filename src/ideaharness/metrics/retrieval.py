"""Inspiration-retrieval metrics (ResearchBench, Liu, Yang et al. 2025, §3.1; MOOSE-Chem screening).

All functions work on candidate indices of one pool and return ratios in [0, 1], or None when the
denominator is empty (never 0 for "undefined").
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

LEVELS = ("negative_t1", "negative_t2", "negative_t3")


def hit_ratio(kept: Collection[int], gold: Collection[int]) -> float | None:
    """Gold hit ratio: share of ground-truth inspirations still kept after a screening round.

    hit = |kept ∩ gold| / |gold|   (MOOSE-Chem ``ratio_hit_in_top3``; ResearchBench hit ratio at
    20% retention after round 1 (75 -> 15) and 4% after round 2 (15 -> 3)).

    Args:
        kept: pool indices kept by the round (any order, duplicates ignored).
        gold: pool indices of the gold inspirations.

    Returns:
        Ratio in [0, 1]; None if ``gold`` is empty.
    """
    gold_set = set(gold)
    if not gold_set:
        return None
    return len(gold_set & set(kept)) / len(gold_set)


def hit_ratio_top1(window_firsts: Iterable[int], gold: Collection[int]) -> float | None:
    """Share of gold inspirations that were the *first* title kept in some window of a round.

    MOOSE-Chem ``ratio_hit_in_top1`` (parity figure; depends on the order the model lists titles).
    """
    return hit_ratio(set(window_firsts), gold)


def negative_selection_ratio(
    selected: Iterable[int], labels: Mapping[int, str], levels: Iterable[str] = LEVELS
) -> dict[str, float | None]:
    """Per distance level: selected negatives of that level / negatives of that level in the pool.

    Args:
        selected: pool indices kept by a round.
        labels: pool index -> label (``gold``, ``negative_t1`` ...).

    Returns:
        ``{level: ratio}``; None for a level absent from the pool. Lower is better: a screener
        that keeps many level-1 (near) negatives is fooled by surface similarity.
    """
    selected_set = set(selected)
    out: dict[str, float | None] = {}
    for level in levels:
        members = [i for i, lab in labels.items() if lab == level]
        out[level] = (len([i for i in members if i in selected_set]) / len(members)) if members else None
    return out
