"""Inspiration-retrieval metrics (ResearchBench, Liu, Yang et al. 2025, §3.1; MOOSE-Chem screening).

All functions work on candidate indices of one pool and return ratios in [0, 1], or None when the
denominator is empty (never 0 for "undefined"). ``undetermined`` candidates — those shown in a
screening window whose reply never parsed (or whose call failed) — are left out of numerator and
denominator alike: their fate is unknown, so they are neither hits nor misses.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

LEVELS = ("negative_t1", "negative_t2", "negative_t3")


def hit_ratio(
    kept: Collection[int], gold: Collection[int], undetermined: Collection[int] = ()
) -> float | None:
    """Gold hit ratio: share of ground-truth inspirations still kept after a screening round.

    hit = |kept ∩ gold| / |gold|   (MOOSE-Chem ``ratio_hit_in_top3``; ResearchBench hit ratio at
    20% retention after round 1 (75 -> 15) and 4% after round 2 (15 -> 3)).

    Args:
        kept: pool indices kept by the round (any order, duplicates ignored).
        gold: pool indices of the gold inspirations.
        undetermined: pool indices whose screening never parsed (by this round); excluded.

    Returns:
        Ratio in [0, 1]; None if no gold inspiration is determined.
    """
    gold_set = set(gold) - set(undetermined)
    if not gold_set:
        return None
    return len(gold_set & set(kept)) / len(gold_set)


def hit_ratio_top1(
    window_firsts: Iterable[int], gold: Collection[int], undetermined: Collection[int] = ()
) -> float | None:
    """Share of gold inspirations that were the *first* title kept in some window of a round.

    MOOSE-Chem ``ratio_hit_in_top1`` (parity figure; depends on the order the model lists titles).
    """
    return hit_ratio(set(window_firsts), gold, undetermined)


def negative_selection_ratio(
    selected: Iterable[int], labels: Mapping[int, str], levels: Iterable[str] = LEVELS,
    undetermined: Collection[int] = (),
) -> dict[str, float | None]:
    """Per distance level: selected negatives of that level / negatives of that level in the pool.

    Args:
        selected: pool indices kept by a round.
        labels: pool index -> label (``gold``, ``negative_t1`` ...).
        undetermined: pool indices whose screening never parsed (by this round); excluded.

    Returns:
        ``{level: ratio}``; None for a level absent from the pool. Lower is better: a screener
        that keeps many level-1 (near) negatives is fooled by surface similarity.
    """
    selected_set = set(selected)
    excluded = set(undetermined)
    out: dict[str, float | None] = {}
    for level in levels:
        members = [i for i, lab in labels.items() if lab == level and i not in excluded]
        out[level] = (len([i for i in members if i in selected_set]) / len(members)) if members else None
    return out
