"""Percentile bootstrap intervals (scipy.stats.bootstrap) and summaries."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ideaharness.metrics.stats import bootstrap_ci, bootstrap_settings, p80, summarize


def test_mean_interval_matches_the_normal_theory_interval_on_a_large_sample() -> None:
    """For n = 400 normal values the percentile interval of the mean is close to mean ± 1.96 s/√n."""
    x = np.random.default_rng(1).normal(5.0, 2.0, 400)
    half = 1.96 * x.std(ddof=1) / np.sqrt(x.size)
    low, high = bootstrap_ci(x, n_resamples=4000, seed=0)
    assert abs(low - (x.mean() - half)) < 0.03 and abs(high - (x.mean() + half)) < 0.03


def test_seeded_degenerate_and_too_small_inputs() -> None:
    x = list(np.random.default_rng(5).random(30))
    assert bootstrap_ci(x, seed=3) == bootstrap_ci(x, seed=3)
    assert bootstrap_ci(x, seed=3) != bootstrap_ci(x, seed=4)
    assert bootstrap_ci([2.0, 2.0, 2.0]) == (2.0, 2.0)
    assert bootstrap_ci([1.0]) is None and bootstrap_ci([None, 1.0]) is None  # type: ignore[list-item]
    assert bootstrap_ci([1.0, 2.0], n_resamples=2000) == (1.0, 2.0)  # two points: min and max means


def test_p80_vectorised_equals_per_row_and_any_statistic_works() -> None:
    x = np.random.default_rng(0).random((3, 7))
    assert np.allclose(p80(x, axis=-1), [p80(row) for row in x])
    values = list(np.random.default_rng(2).random(30))
    low, high = bootstrap_ci(values, lambda v: float(np.median(v)), n_resamples=500)
    assert low <= float(np.median(values)) <= high


def test_settings_state_method_and_resamples() -> None:
    assert bootstrap_settings(2000, 7) == {
        "method": "percentile", "n_resamples": 2000, "confidence": 0.95, "seed": 7,
        "resampled_unit": "instance", "implementation": "scipy.stats.bootstrap",
    }


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=2, max_size=40))
def test_interval_is_ordered_within_the_data_and_holds_the_statistic(values: list[float]) -> None:
    low, high = bootstrap_ci(values, n_resamples=300, seed=0)
    arr = np.asarray(values)
    eps = 1e-6 * (1 + np.abs(arr).max())
    assert arr.min() - eps <= low <= high <= arr.max() + eps
    low80, high80 = bootstrap_ci(values, p80, n_resamples=300, seed=0)
    assert arr.min() - eps <= low80 <= high80 <= arr.max() + eps
    assert summarize(values)["n"] == len(values)


def test_ratio_interval_resamples_units_not_judgments() -> None:
    """Pooled share over instances: the interval is the paired (cluster) bootstrap over instances.
    200 instances of 10 judgments each, half all-gold, half none: a judgment-level bootstrap would
    give ~ +-0.02, the instance-level one ~ +-0.07."""
    from ideaharness.metrics.stats import bootstrap_ratio_ci

    num = [10] * 100 + [0] * 100
    den = [10] * 200
    low, high = bootstrap_ratio_ci(num, den, seed=1)
    assert low < 0.5 < high and high - low > 0.1
    assert bootstrap_ratio_ci([1, 3], [2, 6]) == (0.5, 0.5)
    assert bootstrap_ratio_ci([1, 5], [2, 0]) is None  # one informative unit
    with np.testing.assert_raises(ValueError):
        bootstrap_ratio_ci([1], [1, 2])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10), st.integers(1, 10)), min_size=2, max_size=30))
def test_ratio_interval_holds_the_pooled_ratio(units: list[tuple[int, int]]) -> None:
    from ideaharness.metrics.stats import bootstrap_ratio_ci

    num = [min(a, b) for a, b in units]
    den = [b for _, b in units]
    low, high = bootstrap_ratio_ci(num, den, n_resamples=200)
    point = sum(num) / sum(den)
    assert 0.0 <= low <= point + 1e-9 and point - 1e-9 <= high <= 1.0
