"""Aggregations and intervals of per-unit scores: what a :class:`~ideaharness.runner.protocol.MetricSpec`
carries as callables, and what the runner and ``compare`` call on a metric's scores.

A metric's units form a table ``(n, k)`` of floats: one row per unit (an instance, a keyword, a
pair; the ``pair_key`` of its scores), ``k`` columns. A one-input metric has the two columns
``(value, weight)`` of its scores (weight 1 unless the benchmark gives one, e.g. the denominator
of a pooled ratio); a metric with ``inputs`` (several metrics' scores per unit, e.g. a leaderboard
average) has one column per input, NaN where a unit lacks that input.

* a :class:`Statistic` maps a unit table to the metric's value (None where it is not defined):
  :data:`mean` (the default), :data:`ratio` (``sum(value * weight) / sum(weight)``),
  :func:`percentile` (``percentile(80)``: IdeaBench's p80; ``percentile(30, min_units=5)``:
  LiveIdeaBench flexibility), or any ``Statistic(description, function)``;
* an :data:`Interval` maps ``(table, statistic, settings)`` to a 95 % interval or None:
  :func:`percentile_bootstrap` (the default: seeded ``scipy.stats.bootstrap`` over units, through
  :func:`~ideaharness.metrics.stats.bootstrap_ci`; a pooled ratio resamples numerator and
  denominator together, :func:`~ideaharness.metrics.stats.bootstrap_ratio_ci`), :func:`wilson`
  (0/1 values, Wilson 1927), :func:`no_interval`.

Every function here is pure; randomness only through the seed in :class:`IntervalSettings`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ideaharness.metrics.judge_accuracy import wilson_interval
from ideaharness.metrics.stats import bootstrap_ci, bootstrap_ratio_ci


MIN_INTERVAL_N = 5
"""Fewest units a headline interval is formed from: below it a metric's value is shown with no
interval and "n too small" (the interval's coverage, checked by simulation in the test suite,
holds from this size on). One rule for the run's headline and ``compare``."""


@dataclass(frozen=True)
class IntervalSettings:
    """How intervals are formed: bootstrap resamples, coverage and seed (the run's
    ``bootstrap_resamples`` and ``seed``)."""

    n_resamples: int = 2000
    confidence: float = 0.95
    seed: int = 0


@dataclass(frozen=True)
class Statistic:
    """An aggregation of a metric's unit table ``(n, k)`` into its value.

    Attributes:
        description: what it computes, shown in tables (e.g. ``"mean over instances"``).
        function: ``(n, k)`` float table -> value, or None (or NaN) where not defined.
        values: optional 1-d form ``(values, axis=-1) -> statistic`` over the first column, used
            for a vectorised bootstrap (``np.mean``, a percentile); None: the bootstrap resamples
            rows of the table and calls ``function``.
        undefined: why the value is None although units have values: a text formatted with
            ``n`` (the units), e.g. ``"needs at least 5 keywords, has {n}"``, or a function of
            the table giving the text; "" when it cannot happen.
    """

    description: str
    function: Callable[[np.ndarray], float | None]
    values: Callable[..., Any] | None = None
    undefined: str | Callable[[np.ndarray], str] = ""

    def why_undefined(self, table: np.ndarray, n: int) -> str | None:
        """Why the statistic of ``table`` (n units) is None, or None when it does not say."""
        if callable(self.undefined):
            return self.undefined(as_table(table))
        return self.undefined.format(n=n) if self.undefined else None

    def __call__(self, table: np.ndarray) -> float | None:
        """The value of the table (None for no unit, or where ``function`` gives None or NaN)."""
        table = as_table(table)
        if len(table) == 0:
            return None
        value = self.function(table)
        return None if value is None or not np.isfinite(value) else float(value)


def as_table(table: Any) -> np.ndarray:
    """``table`` as a 2-d float array (a 1-d sequence of values becomes one column)."""
    arr = np.asarray(table, dtype=float)
    return arr.reshape(len(arr), -1) if arr.ndim != 2 else arr


def _mean(table: np.ndarray) -> float | None:
    values = table[:, 0][np.isfinite(table[:, 0])]
    return float(values.mean()) if values.size else None


mean = Statistic("mean over units", _mean, np.mean)
"""The mean of the scores' values (the default aggregation)."""


def _ratio(table: np.ndarray) -> float | None:
    value, weight = table[:, 0], table[:, 1] if table.shape[1] > 1 else np.ones(len(table))
    keep = np.isfinite(value) & (weight > 0)
    return float((value[keep] * weight[keep]).sum() / weight[keep].sum()) if keep.any() else None


ratio = Statistic("pooled ratio: sum(value x weight) / sum(weight) over units", _ratio)
"""A ratio pooled over units: each score's ``value`` is its unit's ratio and ``weight`` the unit's
denominator (e.g. parsed judgments), so the result is ``sum(numerators) / sum(denominators)``."""


def percentile(q: float, *, min_units: int = 1, description: str | None = None,
               undefined: str = "") -> Statistic:
    """The ``q``-th percentile (numpy ``linear``) of the values, None below ``min_units`` units.

    Args:
        q: in [0, 100]; 80 for IdeaBench's p80, 30 for LiveIdeaBench flexibility.
        min_units: fewest units with a value for the percentile to be defined.
        description: shown in tables (default ``"p<q> over units"``).
        undefined: why it is None below ``min_units`` (``{n}``: the units; default "needs at
            least <min_units> units, has {n}").

    Raises:
        ValueError: q outside [0, 100].
    """
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q}: must lie in [0, 100]")

    def function(table: np.ndarray) -> float | None:
        values = table[:, 0][np.isfinite(table[:, 0])]
        return float(np.percentile(values, q)) if values.size >= max(1, min_units) else None

    def vectorised(x: np.ndarray, axis: int = -1) -> Any:
        return np.percentile(x, q, axis=axis)

    return Statistic(description or f"p{q:g} over units", function, vectorised,
                     undefined or f"needs at least {min_units} units, has {{n}}")


Interval = Callable[[np.ndarray, Statistic, IntervalSettings], "tuple[float, float] | None"]
"""``(unit table, statistic, settings) -> (low, high)`` or None where no interval can be formed."""


def percentile_bootstrap(table: np.ndarray, statistic: Statistic,
                         settings: IntervalSettings) -> tuple[float, float] | None:
    """Percentile bootstrap interval of ``statistic`` over units (rows), seeded.

    :data:`mean` and :func:`percentile` resample the values (vectorised,
    :func:`~ideaharness.metrics.stats.bootstrap_ci`); :data:`ratio` resamples each unit's
    numerator and denominator together (:func:`~ideaharness.metrics.stats.bootstrap_ratio_ci`);
    any other statistic resamples whole rows of the table (the rows sorted first, so the interval
    does not depend on the order units were read in). Units are the rows where ``statistic`` has
    every column it reads finite: rows with a NaN are left out.

    Returns:
        ``(low, high)``, or None for fewer than 2 units or an undefined statistic.
    """
    table = as_table(table)
    boot: dict[str, Any] = {"n_resamples": settings.n_resamples, "confidence": settings.confidence,
                            "seed": settings.seed}
    if statistic is ratio:
        value, weight = table[:, 0], table[:, 1] if table.shape[1] > 1 else np.ones(len(table))
        keep = np.isfinite(value)
        return bootstrap_ratio_ci((value * weight)[keep].tolist(), weight[keep].tolist(), **boot)
    if statistic.values is not None:
        values = table[:, 0][np.isfinite(table[:, 0])]
        if statistic(values) is None:
            return None
        return bootstrap_ci(values.tolist(), statistic.values, **boot)
    rows = table[np.isfinite(table).all(axis=1)]
    if len(rows) < 2 or statistic(rows) is None:
        return None
    rows = rows[np.lexsort(rows.T[::-1])]

    def resampled(index: np.ndarray) -> float:
        value = statistic(rows[np.asarray(index, dtype=int)])
        return float("nan") if value is None else value

    ci = bootstrap_ci(list(range(len(rows))), resampled, **boot)
    return None if ci is None or not all(np.isfinite(ci)) else ci


def wilson(table: np.ndarray, statistic: Statistic, settings: IntervalSettings) -> tuple[float, float] | None:
    """Wilson score interval (Wilson 1927) of the share of units with value 1 among the units
    with a value (values must be 0 or 1), at ``settings.confidence``.

    Raises:
        ValueError: a value other than 0 or 1.
    """
    from scipy.stats import norm

    values = as_table(table)[:, 0]
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    if not np.isin(values, (0.0, 1.0)).all():
        raise ValueError("a Wilson interval needs 0/1 values")
    z = float(norm.ppf((1 + settings.confidence) / 2))
    return wilson_interval(int(values.sum()), int(values.size), z=z)


def no_interval(table: np.ndarray, statistic: Statistic, settings: IntervalSettings) -> None:
    """No interval (the metric reports none)."""
    return None


INTERVAL_NAMES: dict[Any, str] = {
    percentile_bootstrap: "percentile bootstrap over units",
    wilson: "Wilson",
    no_interval: "none",
}
"""The table description of the built-in intervals (a custom one shows its ``__doc__`` first line)."""


def interval_description(interval: Interval) -> str:
    """What ``interval`` is, for tables: the built-in name, else its docstring's first line."""
    if interval in INTERVAL_NAMES:
        return INTERVAL_NAMES[interval]
    doc = str(getattr(interval, "__doc__", None) or getattr(interval, "__name__", "custom")).strip()
    return doc.splitlines()[0]
