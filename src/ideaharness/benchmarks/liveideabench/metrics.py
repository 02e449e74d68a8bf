"""LiveIdeaBench metrics (Ruan et al. 2024, arXiv 2412.17596; formulas as the published code
computes them, research notes §2): fluency grade values, flexibility, the leaderboard average.

Scales: originality, feasibility, clarity are judge scores on 1–10; fluency is the value of a pair
grade (:data:`FLUENCY_VALUES`); flexibility and the average are on the same 0–10 scale.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

FLUENCY_RAW = {"A": 10.0, "B": 20.0 / 3.0, "C": 10.0 / 3.0, "D": 0.0}
"""v1 pair score of each grade: the map of ``hash.py@2520c31`` (``{'A': 10, 'B': 6.6667, 'C': 3.3333,
'D': 0}``, commented out at HEAD); the published v1 fluency data hold 10 / 6.666666 / 3.333333 / 0
(``datasets/fluency/fluency_scores.csv`` @ 4c94105, within 7e-7 of these). Higher = the two ideas
differ more = more fluent."""
FLUENCY_VALUES: dict[str, dict[str, float]] = {
    "v2": {"A": 10.0, "B": 7.0, "C": 4.0, "D": 1.0},
    "v1": FLUENCY_RAW,
}
"""Leaderboard value of each grade: v2 = 10/7/4/1, the map ``hash.py`` applies directly at HEAD
(x66ccff/liveideabench 6fc8285, ``hash.py`` ``score_mapping``); v1 = :data:`FLUENCY_RAW`."""
FLEXIBILITY_PERCENTILE = 30.0
FLEXIBILITY_MIN_KEYWORDS = 5


def fluency_value(grade: str, protocol: str = "v2") -> float:
    """The leaderboard value of a fluency grade A–D under ``protocol`` (:data:`FLUENCY_VALUES`).

    Raises:
        KeyError: a grade other than A, B, C, D.
    """
    return FLUENCY_VALUES[protocol][grade]


def flexibility(keyword_means: Sequence[float], axis: int | None = None) -> float | None:
    """Flexibility: the 30th percentile (numpy ``linear``) over keywords of each keyword's mean
    score, the mean of its dimensions (``stats_flexibility.ipynb``
    ``get_model_flexibility_with_ci``, notes §2.4). High flexibility means even the weak keywords
    score well.

    Args:
        keyword_means: one value per keyword with every dimension present, on 0–10.

    Returns:
        The percentile, or None with fewer than :data:`FLEXIBILITY_MIN_KEYWORDS` keywords (the
        published code returns NaN then). With ``axis`` (vectorised bootstrap): an array.
    """
    arr = np.asarray(keyword_means, dtype=float)
    if axis is not None:
        return np.percentile(arr, FLEXIBILITY_PERCENTILE, axis=axis)
    if arr.size < FLEXIBILITY_MIN_KEYWORDS:
        return None
    return float(np.percentile(arr, FLEXIBILITY_PERCENTILE))


def leaderboard_average(values: Sequence[float | None]) -> float | None:
    """The leaderboard average: the unweighted mean of the model-level numbers (v2: fluency,
    feasibility, originality, clarity, flexibility; v1: fluency, feasibility, originality,
    flexibility — notes §2.5). None when any is missing (never a partial mean)."""
    if not values or any(v is None for v in values):
        return None
    return float(np.mean([float(v) for v in values if v is not None]))
