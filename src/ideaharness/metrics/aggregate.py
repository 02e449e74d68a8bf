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
  :func:`standard_interval` (the default: :func:`bounded_score` for a mean or pooled ratio of a
  metric with a bounded ``range``, else :func:`percentile_bootstrap`), :func:`bounded_score`,
  :func:`percentile_bootstrap` (seeded ``scipy.stats.bootstrap`` over units, through
  :func:`~ideaharness.metrics.stats.bootstrap_ci`; a pooled ratio resamples numerator and
  denominator together, :func:`~ideaharness.metrics.stats.bootstrap_ratio_ci`), :func:`wilson`
  (0/1 values, Wilson 1927), :func:`no_interval`;
* :func:`headline_interval` applies the one rule every surface shares (run headline, ``compare``):
  below :data:`MIN_INTERVAL_N` units no interval, with the reason :func:`too_few_units` gives.

Why not the percentile bootstrap everywhere: on bounded values it covers far less than 95 % at
small n (0/1 values with p = 0.1: 40 % at n 5, 88 % at n 20; p = 0.05: 91 % at n 50; a sample
whose values are all equal gives a zero-width interval), so there is no size in the range runs
have where it holds for every bounded shape. :func:`bounded_score` covers at least 0.93 from
n = 5 on for every shape the suite simulates (``tests/metrics/test_interval_coverage.py``).

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
    ``bootstrap_resamples`` and ``seed``), and ``bounds``: the metric's ``range`` (low, high; None
    for an open end), which :func:`standard_interval` reads (set by
    :func:`~ideaharness.runs.scores.summarise` from the metric's spec)."""

    n_resamples: int = 2000
    confidence: float = 0.95
    seed: int = 0
    bounds: tuple[float | None, float | None] = (None, None)


OUT_OF_RANGE = "outside the metric's declared range"
"""The words of every ``ci_why`` (and run note) that says an interval was withheld because a unit's
value lies outside the metric's declared ``range`` (:class:`OutOfRange`)."""


class OutOfRange(ValueError):
    """A unit's value lies outside the ``range`` a metric declares (raised by :func:`bounded_score`;
    :func:`headline_interval` catches it: the value stands, the interval is withheld and the reason
    names the value and the range)."""


def too_few_units(n: int) -> str | None:
    """Why a headline value of ``n`` units has no interval: ``"n too small for an interval (n < 5)"``
    below :data:`MIN_INTERVAL_N`, else None. The text every surface shows in the interval's cell."""
    return f"n too small for an interval (n < {MIN_INTERVAL_N})" if n < MIN_INTERVAL_N else None


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


def bounded_score(table: np.ndarray, statistic: Statistic,
                  settings: IntervalSettings) -> tuple[float, float] | None:
    """Score interval of a mean (or pooled ratio) of values bounded by ``settings.bounds`` (a, b).

    The values are rescaled to u = (x - a) / (b - a) in [0, 1]. A variable on [0, 1] with mean mu
    has variance at most mu (1 - mu) (equality for 0/1 values); the interval is Wilson's score
    interval (Wilson 1927) with that variance scaled by the sample's dispersion and a Student-t
    quantile: the mu in [0, 1] with ``(m - mu)^2 <= q^2 k mu (1 - mu) / n_eff``, where

    * ``m`` = sum(w u) / sum(w) (weights w = 1 for a mean; the denominators for a pooled
      :data:`ratio`), ``n_eff`` = sum(w)^2 / sum(w^2) (Kish's effective n; n for a mean);
    * ``k`` the dispersion: k_hat = s^2 / (m (1 - m)), s^2 the linearised
      variance of the units, ``n / (n - 1) * sum(w^2 (u - m)^2) / sum(w^2)`` (Cochran 1977, §6.4;
      the unbiased sample variance for a mean), k_hat = 1 where m is 0 or 1; raised towards 1 by
      :data:`SHRINK_UNITS` = 4 units, k = max(k_hat, ((n - 1) k_hat + 4) / (n + 3)), so that a sample whose
      values are all equal or nearly equal still gets a width from the range (the mean of a bounded
      variable can differ from a value seen n times: a rare value far off moves it);
    * ``q`` the Student-t quantile with n - 1 degrees of freedom at ``settings.confidence``.

    Closed form: centre ``(m + c/2) / (1 + c)``, half-width ``sqrt(c m (1 - m) + c^2/4) / (1 + c)``
    with c = q^2 k / n_eff (Wilson's with z^2 / n replaced by c), mapped back to [a, b]. For 0/1
    values it is a Wilson interval slightly widened (t quantile, k = n / (n - 1)).

    Coverage: at least 0.93 for n >= 5 on every bounded shape simulated in
    ``tests/metrics/test_interval_coverage.py`` (values on {0, 1/3, 2/3, 1}, 0/1 values with p
    0.05 to 0.5, ratings 1..10 uniform, peaked, at the ceiling, nearly constant; n 5 to 50).

    Returns:
        ``(low, high)`` within [a, b]; None for fewer than 2 units, or bounds that are not both
        finite with a < b (use :func:`standard_interval` to fall back to the bootstrap).

    Raises:
        ValueError: a statistic other than :data:`mean` or :data:`ratio`.
        OutOfRange: a value outside [a, b] (:func:`headline_interval` turns it into no interval
            and a ``ci_why``, never an error in aggregation).
    """
    if statistic is not mean and statistic is not ratio:
        raise ValueError(f"bounded_score: a mean or pooled ratio, not {statistic.description!r}")
    low, high = settings.bounds
    if low is None or high is None or not np.isfinite([low, high]).all() or not high > low:
        return None
    table = as_table(table)
    x = table[:, 0]
    w = table[:, 1] if statistic is ratio and table.shape[1] > 1 else np.ones(len(table))
    keep = np.isfinite(x) & np.isfinite(w) & (w > 0)
    x, w = x[keep], w[keep]
    n = len(x)
    if n < 2:
        return None
    span = high - low
    outside = x[(x < low - 1e-9 * span) | (x > high + 1e-9 * span)]
    if outside.size:
        raise OutOfRange(f"value {outside[0]:g} {OUT_OF_RANGE} [{low:g}, {high:g}]")
    u = np.clip((x - low) / span, 0.0, 1.0)
    m = float((w * u).sum() / w.sum())
    s2 = n / (n - 1) * float((w * w * (u - m) ** 2).sum() / (w * w).sum())
    lo, hi = score_bounds(np.asarray([m]), np.asarray([s2]), n, float(w.sum() ** 2 / (w * w).sum()),
                          settings.confidence)
    return low + span * float(lo[0]), low + span * float(hi[0])


SHRINK_UNITS = 4.0
"""Units of Bernoulli dispersion the :func:`bounded_score` dispersion is shrunk with (z^2 ~ 4, as
Agresti & Coull 1998 add four pseudo-observations to a proportion): with 1, a rating that is 7 nine
times in ten and 1 otherwise is covered 0.88 of the time at n 20 (the samples without a 1 get an
interval too narrow to reach the mean); with 4, at least 0.95 (tests/metrics/test_interval_coverage.py)."""


def score_bounds(m: np.ndarray, s2: np.ndarray, n: int, n_eff: float | np.ndarray,
                 confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The :func:`bounded_score` interval on the [0, 1] scale, vectorised over samples.

    Args:
        m: shape (R,): each sample's (weighted) mean of values in [0, 1].
        s2: shape (R,): each sample's (linearised) variance, with the n / (n - 1) factor.
        n: units per sample (>= 2); n_eff: Kish's effective n (n for a mean), scalar or (R,).
        confidence: in (0, 1).

    Returns:
        ``(low, high)``, two (R,) arrays in [0, 1].
    """
    from scipy.stats import t as student_t

    bernoulli = m * (1.0 - m)
    k_hat = np.where(bernoulli > 1e-12, s2 / np.where(bernoulli > 1e-12, bernoulli, 1.0), 1.0)
    k = np.maximum(k_hat, ((n - 1) * k_hat + SHRINK_UNITS) / (n - 1 + SHRINK_UNITS))
    q = float(student_t.ppf((1 + confidence) / 2, n - 1))
    c = q * q * k / n_eff
    centre = (m + c / 2) / (1 + c)
    half = np.sqrt(c * bernoulli + c * c / 4) / (1 + c)
    return np.maximum(0.0, centre - half), np.minimum(1.0, centre + half)


def bounded_mean_intervals(samples: np.ndarray, bounds: tuple[float, float],
                           confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bounded_score` of the mean of each row of ``samples`` (shape (R, n), n >= 2, values
    in ``bounds``), vectorised: for coverage simulations. Returns ``(low, high)``, (R,) each, on
    the values' scale; row r equals ``bounded_score(samples[r], mean, ...)``."""
    low, high = bounds
    u = (np.asarray(samples, dtype=float) - low) / (high - low)
    n = u.shape[1]
    lo, hi = score_bounds(u.mean(axis=1), u.var(axis=1, ddof=1), n, float(n), confidence)
    return low + (high - low) * lo, low + (high - low) * hi


def standard_interval(table: np.ndarray, statistic: Statistic,
                      settings: IntervalSettings) -> tuple[float, float] | None:
    """The default interval of a metric: :func:`bounded_score` for a :data:`mean` or :data:`ratio`
    of a metric whose ``range`` has two finite ends (``settings.bounds``), else
    :func:`percentile_bootstrap` (percentiles such as p80, several-input statistics, unbounded
    metrics; their coverage at small n is not guaranteed, see docs/statistics.md)."""
    if bounded(settings.bounds) and (statistic is mean or statistic is ratio):
        return bounded_score(table, statistic, settings)
    return percentile_bootstrap(table, statistic, settings)


def bounded(bounds: tuple[float | None, float | None]) -> bool:
    """Whether ``bounds`` (a metric's ``range``) has two finite ends, low < high."""
    low, high = bounds
    return low is not None and high is not None and bool(np.isfinite([low, high]).all()) and high > low


def headline_interval(interval: Interval, table: np.ndarray, statistic: Statistic,
                      settings: IntervalSettings, n: int) -> tuple[tuple[float, float] | None, str | None]:
    """The one interval rule of every headline value (run, ``compare``, the judge–human agreement
    of the reliability block): below :data:`MIN_INTERVAL_N` units no interval and the reason
    (:func:`too_few_units`); from it on, ``interval(table, statistic, settings)``.

    Args:
        interval: the metric's interval (its spec's ``interval``).
        table, statistic, settings: as :data:`Interval` takes them.
        n: the units the value rests on (the headline's n).

    Returns:
        ``(ci, why)``: ``ci`` (low, high) or None, ``why`` the reason there is none when the rule
        withheld it (None otherwise). A unit value outside the metric's declared range
        (:class:`OutOfRange`) gives no interval and a ``why`` naming the value and the range (the
        declaration or the benchmark is wrong): never an exception, so a long run still writes
        its results.
    """
    why = too_few_units(n)
    if why is not None:
        return None, why
    try:
        ci = interval(table, statistic, settings)
    except OutOfRange as exc:
        return None, (f"{exc}: no interval (the range declaration or the benchmark's values are wrong; "
                      "the value itself is unchanged)")
    return (None if ci is None else (float(ci[0]), float(ci[1]))), None


def unit_interval(values: Any, *, statistic: Statistic | None = None,
                  bounds: tuple[float | None, float | None] = (None, None),
                  interval: Interval | None = None, n_resamples: int = 2000, confidence: float = 0.95,
                  seed: int = 0) -> tuple[tuple[float, float] | None, str | None]:
    """The interval a benchmark's own table shows for a quantity over units, under the same rule as
    the headline (:func:`headline_interval` with the metric's interval, default
    :func:`standard_interval`): below :data:`MIN_INTERVAL_N` units no interval and the reason; a
    bounded mean or ratio the :func:`bounded_score` interval, anything else the percentile bootstrap.

    Args:
        values: one value per unit (None or NaN: no value, not counted), or a unit table ``(n, k)``.
        statistic: the aggregate (default :data:`mean`; :func:`percentile` for a p80).
        bounds: the quantity's range (a metric's ``MetricSpec.range``), None for an open end.
        interval: the metric's interval (default :func:`standard_interval`).
        n_resamples, confidence, seed: the run's bootstrap settings (:class:`IntervalSettings`).

    Returns:
        ``(ci, why)`` as :func:`headline_interval`; n is the units with a value.
    """
    arr = np.asarray([np.nan if v is None else v for v in values] if not isinstance(values, np.ndarray)
                     else values, dtype=float)
    rows = as_table(arr) if arr.size else np.empty((0, 1))
    rows = rows[np.isfinite(rows[:, 0])]
    settings = IntervalSettings(n_resamples=n_resamples, confidence=confidence, seed=seed, bounds=bounds)
    return headline_interval(interval or standard_interval, rows, statistic or mean, settings, len(rows))


def spec_interval(spec: Any, values: Any, *, n_resamples: int = 2000, confidence: float = 0.95, seed: int = 0,
                  statistic: Statistic | None = None) -> tuple[tuple[float, float] | None, str | None]:
    """:func:`unit_interval` with a registered metric's ``aggregate``, ``interval`` and ``range``
    (a :class:`~ideaharness.runner.protocol.MetricSpec`; ``statistic`` overrides its aggregate, e.g.
    the mean of a metric whose headline is a p80)."""
    return unit_interval(values, statistic=statistic or spec.aggregate, bounds=tuple(spec.range),
                         interval=spec.interval, n_resamples=n_resamples, confidence=confidence, seed=seed)


def ci_cell(ci: Any, why: str | None) -> Any:
    """What a table's interval cell shows: the interval ``(low, high)``, else the reason it was
    withheld (``why``), else None."""
    return tuple(ci) if ci else why


def no_interval(table: np.ndarray, statistic: Statistic, settings: IntervalSettings) -> None:
    """No interval (the metric reports none)."""
    return None


INTERVAL_NAMES: dict[Any, str] = {
    bounded_score: "bounded-mean score interval (Wilson form, t quantile) over units",
    percentile_bootstrap: "percentile bootstrap over units",
    wilson: "Wilson",
    no_interval: "none",
}
"""The table description of the built-in intervals (a custom one shows its ``__doc__`` first line)."""


def interval_description(interval: Interval, statistic: Statistic | None = None,
                         bounds: tuple[float | None, float | None] = (None, None)) -> str:
    """What ``interval`` is, for tables: the built-in name, else its docstring's first line;
    :func:`standard_interval` names what it forms for ``statistic`` and ``bounds`` (a metric's
    aggregate and range): the bounded-mean score interval or the percentile bootstrap."""
    if interval is standard_interval:
        chosen = (bounded_score if bounded(bounds) and (statistic is mean or statistic is ratio)
                  else percentile_bootstrap)
        return INTERVAL_NAMES[chosen]
    if interval in INTERVAL_NAMES:
        return INTERVAL_NAMES[interval]
    doc = str(getattr(interval, "__doc__", None) or getattr(interval, "__name__", "custom")).strip()
    return doc.splitlines()[0]
