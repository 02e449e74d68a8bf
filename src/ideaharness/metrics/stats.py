"""Summary statistics shared by the benchmarks: percentiles and bootstrap confidence intervals."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


def summarize(values: Sequence[float]) -> dict[str, float | int | None]:
    """Mean, median, 80th percentile (numpy 'linear', as pandas ``quantile(0.8)``) and count.

    Empty input gives ``n = 0`` and None for every statistic (never 0).
    """
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    if arr.size == 0:
        return {"n": 0, "mean": None, "median": None, "p80": None}
    return {
        "n": int(arr.size),
        "mean": float(arr.mean()),
        "median": float(np.median(arr)),
        "p80": float(np.quantile(arr, 0.8)),
    }


def p80(values: np.ndarray) -> float:
    """80th percentile (numpy 'linear' interpolation), IdeaBench's reported statistic."""
    return float(np.quantile(values, 0.8))


def bootstrap_ci(
    values: Sequence[float],
    statistic: Callable[[np.ndarray], float] = np.mean,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of ``statistic`` over instances (resampled with replacement).

    Returns None for fewer than 2 values (no interval can be formed).
    """
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    if arr.size < 2:
        return None
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, arr.size, size=(n_resamples, arr.size))
    stats = np.apply_along_axis(statistic, 1, arr[idx])
    alpha = (1 - confidence) / 2
    return float(np.quantile(stats, alpha)), float(np.quantile(stats, 1 - alpha))
