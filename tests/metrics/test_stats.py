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
