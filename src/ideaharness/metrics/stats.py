"""Summary statistics shared by the benchmarks: percentiles and bootstrap confidence intervals.

Intervals are percentile bootstrap intervals over instances from ``scipy.stats.bootstrap``
(:func:`bootstrap_ci`); :func:`bootstrap_settings` is what a ``results.json`` records about them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.stats import bootstrap


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


def p80(values: np.ndarray, axis: int | None = None) -> Any:
    """80th percentile (numpy 'linear' interpolation), IdeaBench's reported statistic.

    A float for ``axis=None``; with ``axis``, an array with that axis reduced (for vectorised bootstrap).
    """
    if axis is None:
        return float(np.quantile(values, 0.8))
    return np.quantile(values, 0.8, axis=axis)


BOOTSTRAP_METHOD = "percentile"


def bootstrap_settings(n_resamples: int, seed: int, *, confidence: float = 0.95) -> dict[str, object]:
    """How :func:`bootstrap_ci` formed the intervals of a run, for ``results.json``.

    Returns:
        ``{"method", "n_resamples", "confidence", "seed", "resampled_unit", "implementation"}``.
    """
    return {"method": BOOTSTRAP_METHOD, "n_resamples": n_resamples, "confidence": confidence, "seed": seed,
            "resampled_unit": "instance", "implementation": "scipy.stats.bootstrap"}


def bootstrap_ci(
    values: Sequence[float],
    statistic: Callable[[np.ndarray], float] = np.mean,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of ``statistic`` over instances, by ``scipy.stats.bootstrap``.

    Method: ``n_resamples`` resamples of the instances with replacement (numpy ``default_rng(seed)``);
    the interval is the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the
    resampled statistic (Efron & Tibshirani 1993, ch. 13, percentile interval). None values are
    dropped first.

    Args:
        values: one value per instance.
        statistic: maps a 1-d array to a float (e.g. ``np.mean``, :func:`p80`).
        n_resamples: bootstrap resamples, >= 1.
        confidence: interval coverage in (0, 1).
        seed: seed of the resampling.

    Returns:
        ``(lower, upper)`` in the unit of ``statistic``, or None for fewer than 2 values (no interval
        can be formed).
    """
    arr = np.asarray([v for v in values if v is not None], dtype=float)
    if arr.size < 2:
        return None
    if np.all(arr == arr[0]):  # every resample gives the same statistic: a zero-width interval
        point = float(statistic(arr))
        return point, point

    result = bootstrap(
        (arr,), _vectorised(statistic, arr), n_resamples=n_resamples, confidence_level=confidence,
        method=BOOTSTRAP_METHOD, rng=np.random.default_rng(seed), vectorized=True,
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def _vectorised(statistic: Callable[..., Any], sample: np.ndarray) -> Callable[..., np.ndarray]:
    """``statistic`` taking an ``axis`` argument, as scipy's vectorised bootstrap calls it.

    Statistics that accept ``axis`` (``np.mean``, :func:`p80`) are used as they are; others are
    applied along the axis one resample at a time.
    """
    try:
        probe = np.asarray(statistic(np.stack([sample, sample]), axis=-1))
    except TypeError:
        probe = None
    if probe is not None and probe.shape == (2,):
        return lambda x, axis=-1: statistic(x, axis=axis)
    return lambda x, axis=-1: np.apply_along_axis(statistic, axis, x)


def bootstrap_ratio_ci(
    numerators: Sequence[float],
    denominators: Sequence[float],
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of a pooled ratio ``sum(numerators) / sum(denominators)``,
    resampling units (e.g. instances) with their numerator and denominator together.

    For a share pooled over the judgments of several instances (ResearchBench directional
    accuracy: gold choices / parsed judgments): the judgments of one instance are not independent,
    so the instance is the resampled unit (a cluster bootstrap), by ``scipy.stats.bootstrap`` with
    ``paired=True``. Units with denominator 0 carry no information and are dropped.

    Args:
        numerators, denominators: one value each per unit, same length; denominators >= 0.
        n_resamples, confidence, seed: as :func:`bootstrap_ci`.

    Returns:
        ``(lower, upper)``, or None for fewer than 2 units with a positive denominator.

    Raises:
        ValueError: the two sequences differ in length.
    """
    if len(numerators) != len(denominators):
        raise ValueError(f"{len(numerators)} numerators but {len(denominators)} denominators")
    pairs = [(float(a), float(b)) for a, b in zip(numerators, denominators, strict=True) if b > 0]
    if len(pairs) < 2:
        return None
    num = np.asarray([a for a, _ in pairs])
    den = np.asarray([b for _, b in pairs])
    ratios = num / den
    if np.all(ratios == ratios[0]):  # every resample has the same pooled ratio
        point = float(num.sum() / den.sum())
        return point, point

    def pooled(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.sum(a, axis=axis) / np.sum(b, axis=axis)

    result = bootstrap(
        (num, den), pooled, n_resamples=n_resamples, confidence_level=confidence, method=BOOTSTRAP_METHOD,
        rng=np.random.default_rng(seed), vectorized=True, paired=True,
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)
