"""Summary statistics shared by the benchmarks: percentiles, bootstrap confidence intervals and
paired significance tests.

Intervals are percentile bootstrap intervals over instances from ``scipy.stats.bootstrap``
(:func:`bootstrap_ci`); :func:`bootstrap_settings` is what a ``results.json`` records about them.
The values are put in one canonical order (sorted) before resampling, so an interval depends on the
values and the seed only, never on the order in which instances were read (data order, record
order, the order units finished in). Paired comparisons use an exact sign-flip permutation test
(:func:`paired_permutation_test`) and Holm's step-down adjustment over a family of comparisons
(:func:`holm_adjust`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

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


def p80(values: np.ndarray, axis: int | None = None) -> Any:
    """80th percentile (numpy 'linear' interpolation), IdeaBench's reported statistic.

    A float for ``axis=None``; with ``axis``, an array with that axis reduced (for vectorised bootstrap).
    """
    if axis is None:
        return float(np.quantile(values, 0.8))
    return np.quantile(values, 0.8, axis=axis)


BOOTSTRAP_METHOD = "percentile"
BOOTSTRAP_ORDER = "values sorted ascending before resampling (the interval does not depend on instance order)"
"""The order rule of :func:`bootstrap_ci` and :func:`bootstrap_ratio_ci`, recorded in results.json."""


def bootstrap_settings(n_resamples: int, seed: int, *, confidence: float = 0.95) -> dict[str, object]:
    """How :func:`bootstrap_ci` formed the intervals of a run, for ``results.json``.

    Returns:
        ``{"method", "n_resamples", "confidence", "seed", "resampled_unit", "order",
        "implementation"}``; ``order`` is :data:`BOOTSTRAP_ORDER`.
    """
    return {"method": BOOTSTRAP_METHOD, "n_resamples": n_resamples, "confidence": confidence, "seed": seed,
            "resampled_unit": "instance", "order": BOOTSTRAP_ORDER, "implementation": "scipy.stats.bootstrap"}


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
    dropped first, and the rest sorted (:data:`BOOTSTRAP_ORDER`): the same values in any order
    give the same interval for the same seed. A statistic that reads its input as indices (e.g.
    ``range(n)`` into a table) sees them sorted, i.e. unchanged.

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
    arr = np.sort(np.asarray([v for v in values if v is not None], dtype=float))
    if arr.size < 2:
        return None
    if np.all(arr == arr[0]):  # every resample gives the same statistic: a zero-width interval
        point = float(statistic(arr))
        return point, point

    from scipy.stats import bootstrap  # scipy.stats takes ~1 s to import: only when an interval is asked

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
    ``paired=True``. Units with denominator 0 carry no information and are dropped; the rest are
    sorted by (numerator, denominator) before resampling (:data:`BOOTSTRAP_ORDER`).

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
    pairs = sorted((float(a), float(b)) for a, b in zip(numerators, denominators, strict=True) if b > 0)
    if len(pairs) < 2:
        return None
    num = np.asarray([a for a, _ in pairs])
    den = np.asarray([b for _, b in pairs])
    ratios = num / den
    if np.all(ratios == ratios[0]):  # every resample has the same pooled ratio
        point = float(num.sum() / den.sum())
        return point, point

    def pooled(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(np.sum(a, axis=axis) / np.sum(b, axis=axis))

    from scipy.stats import bootstrap

    result = bootstrap(
        (num, den), pooled, n_resamples=n_resamples, confidence_level=confidence, method=BOOTSTRAP_METHOD,
        rng=np.random.default_rng(seed), vectorized=True, paired=True,
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


PERMUTATION_RESAMPLES = 9999
"""Default resamples of :func:`paired_permutation_test`: exact enumeration of all 2^n sign flips up
to n = 13 shared units, a seeded Monte Carlo test above."""


class PairedTest(NamedTuple):
    """Result of :func:`paired_permutation_test`.

    Attributes:
        statistic: the observed difference ``statistic(a) - statistic(b)``.
        p_value: two-sided p-value in (0, 1].
        exact: True when every one of the 2^n sign flips was enumerated.
        n: paired units.
    """

    statistic: float
    p_value: float
    exact: bool
    n: int


def paired_permutation_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    statistic: Callable[[np.ndarray], float] | None = None,
    *,
    n_resamples: int = PERMUTATION_RESAMPLES,
    seed: int = 0,
) -> PairedTest | None:
    """Two-sided paired permutation (sign-flip) test of ``statistic(a) - statistic(b)``.

    Under H0 (the two systems are exchangeable on every unit) the two values of each unit may be
    swapped; the p-value is the share of the 2^n swaps whose difference is at least as extreme as
    the observed one (Fisher 1935 §21; Good 2005, *Permutation, Parametric and Bootstrap Tests of
    Hypotheses*, §3.1), by ``scipy.stats.permutation_test`` with ``permutation_type="samples"``,
    ``alternative="two-sided"``. Exact when ``2**n <= n_resamples``, else ``n_resamples`` seeded
    random swaps. Unlike a percentile bootstrap it has the right size at small n: with n = 3
    paired units the smallest attainable two-sided p is 2/8 = 0.25, so no difference over three
    instances is called significant. Units are sorted before testing (the p-value does not depend
    on their order).

    Args:
        a, b: paired values, one per unit, same length n: shape (n,), or (n, k) rows of k inputs
            per unit when ``statistic`` reads a table (e.g. LiveIdeaBench flexibility).
        statistic: maps one system's (n,) or (n, k) array to a float; default: the mean, so the
            tested difference is the mean paired difference.
        n_resamples: swaps drawn when enumeration is too large (>= 1).
        seed: seed of the random swaps (unused when exact).

    Returns:
        :class:`PairedTest`, or None for fewer than 2 units.

    Raises:
        ValueError: ``a`` and ``b`` differ in length.
    """
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) != len(y):
        raise ValueError(f"{len(x)} values in a but {len(y)} in b")
    n = len(x)
    if n < 2:
        return None
    order = np.lexsort(np.column_stack([x.reshape(n, -1), y.reshape(n, -1)]).T[::-1])
    x, y = x[order], y[order]
    from scipy.stats import permutation_test

    exact = 2**n <= n_resamples
    rng = np.random.default_rng(seed)
    if statistic is None:
        observed = float(np.mean(x - y))
        if np.all(x == y):
            return PairedTest(observed, 1.0, exact, n)
        result = permutation_test(
            (x, y), lambda u, v, axis=-1: np.mean(u - v, axis=axis), permutation_type="samples",
            alternative="two-sided", n_resamples=n_resamples, vectorized=True, rng=rng, batch=500,
        )  # batch: at most 500 x n resampled values in memory at once
    else:
        stacked = np.concatenate([x, y])
        stat = statistic

        def difference(i: np.ndarray, j: np.ndarray) -> float:
            return float(stat(stacked[np.asarray(i, dtype=int)]) - stat(stacked[np.asarray(j, dtype=int)]))

        observed = float(stat(x) - stat(y))
        if np.array_equal(x, y, equal_nan=True):
            return PairedTest(observed, 1.0, exact, n)
        result = permutation_test(
            (np.arange(n), np.arange(n) + n), difference, permutation_type="samples",
            alternative="two-sided", n_resamples=n_resamples, vectorized=False, rng=rng,
        )
    return PairedTest(observed, float(min(1.0, result.pvalue)), exact, n)


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values of a family of m tests (Holm 1979, *Scand. J. Statist.*
    6:65-70): sort p ascending, p_adj(i) = max over j <= i of min(1, (m - j + 1) p(j)) (1-based
    ranks). Rejecting where p_adj <= alpha controls the family-wise error rate at alpha under any
    dependence between the tests.

    Args:
        p_values: one p-value per test of the family, each in [0, 1].

    Returns:
        Adjusted p-values in the input order, each in [p, 1].

    Raises:
        ValueError: a p-value outside [0, 1] or NaN.
    """
    p = np.asarray(p_values, dtype=float)
    if p.size and (np.isnan(p).any() or (p < 0).any() or (p > 1).any()):
        raise ValueError("p-values must lie in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(stepped)
    return [float(v) for v in adjusted]
