"""Percentile bootstrap intervals (scipy.stats.bootstrap) and summaries."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ideaharness.metrics.stats import (
    BOOTSTRAP_ORDER,
    bootstrap_ci,
    bootstrap_ratio_ci,
    bootstrap_settings,
    holm_adjust,
    p80,
    paired_permutation_test,
    summarize,
)


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
        "resampled_unit": "instance", "order": BOOTSTRAP_ORDER, "implementation": "scipy.stats.bootstrap",
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


def test_an_interval_does_not_depend_on_the_order_of_the_instances() -> None:
    """Data order, record order, any order: the same values and seed give the same interval
    (issue 18: one Insight interval was [., 0.278] in data order and [., 0.306] in record order)."""
    rng = np.random.default_rng(3)
    values = list(rng.integers(0, 4, 20) / 3)  # Insight summands (r - 1) / n with n = 3
    means, p80s = set(), set()
    for _ in range(20):
        shuffled = list(rng.permutation(values))
        means.add(bootstrap_ci(shuffled, seed=0))
        p80s.add(bootstrap_ci(shuffled, p80, seed=0))
    assert len(means) == 1 and len(p80s) == 1 and None not in means
    num, den = list(rng.integers(0, 5, 15)), list(rng.integers(5, 9, 15))
    ratios = set()
    for _ in range(10):
        order = rng.permutation(15)
        ratios.add(bootstrap_ratio_ci([num[i] for i in order], [den[i] for i in order], seed=0))
    assert len(ratios) == 1
    assert bootstrap_settings(100, 0)["order"] == BOOTSTRAP_ORDER


def test_paired_permutation_test_on_darwins_zea_mays() -> None:
    """Fisher (1935, *The Design of Experiments* §21): Darwin's 15 paired differences in height
    (eighths of an inch, crossed minus self-fertilised Zea mays); 1,726 of the 2^15 = 32,768 sign
    assignments are at least as extreme as the observed sum, two-sided p = 1726 / 32768 = 0.05267."""
    diffs = np.array([49, -67, 8, 16, 6, 23, 28, 41, 14, 29, 56, 24, 75, 60, -48], dtype=float)
    test = paired_permutation_test(diffs, np.zeros(15), n_resamples=2**15)
    assert test is not None and test.exact and test.n == 15
    assert test.p_value == pytest.approx(1726 / 32768, abs=1e-12)
    assert test.statistic == pytest.approx(diffs.mean())


def test_paired_permutation_test_cannot_call_three_instances_significant() -> None:
    """Issue 18: a difference of -1/3 on each of 3 shared instances had a bootstrap interval
    [-0.333, -0.333] and was marked significant; the exact test gives p = 2/8."""
    a, b = [0.0, 1 / 3, 1 / 3], [1 / 3, 2 / 3, 2 / 3]
    assert bootstrap_ci(np.subtract(a, b).tolist()) == pytest.approx((-1 / 3, -1 / 3))
    test = paired_permutation_test(a, b)
    assert test is not None and test.exact and test.p_value == pytest.approx(0.25)
    for n in range(2, 6):  # 2 / 2^n >= 0.0625: nothing below 6 pairs can reach 0.05
        assert paired_permutation_test(np.ones(n), np.zeros(n)).p_value == pytest.approx(2 / 2**n)  # type: ignore[union-attr]
    assert paired_permutation_test([1.0, 2.0], [1.0, 2.0]).p_value == 1.0  # type: ignore[union-attr]
    assert paired_permutation_test([1.0], [0.0]) is None
    with pytest.raises(ValueError, match="2 values in a but 3 in b"):
        paired_permutation_test([1.0, 2.0], [1.0, 2.0, 3.0])


def test_paired_permutation_test_has_its_size_under_the_null() -> None:
    """Exchangeable pairs (both systems drawn alike): rejections at 0.05 in [0.03, 0.07] of 400
    simulated comparisons of 12 instances each (exact test: 4096 sign flips)."""
    rng = np.random.default_rng(11)
    rejected = 0
    for _ in range(400):
        base = rng.normal(size=12)
        a, b = base + rng.normal(size=12), base + rng.normal(size=12)
        rejected += paired_permutation_test(a, b).p_value < 0.05  # type: ignore[union-attr]
    assert 0.03 <= rejected / 400 <= 0.07


def test_paired_permutation_test_of_a_table_statistic_is_order_free() -> None:
    """A statistic over rows (e.g. a percentile of row means): rows are swapped whole."""
    rng = np.random.default_rng(2)
    a, b = rng.random((8, 3)), rng.random((8, 3)) + 0.5

    def stat(t: np.ndarray) -> float:
        return float(np.percentile(t.mean(axis=1), 30))

    test = paired_permutation_test(a, b, stat)
    order = rng.permutation(8)
    again = paired_permutation_test(a[order], b[order], stat)
    assert test is not None and again is not None and test.exact
    assert test.p_value == again.p_value and test.statistic == pytest.approx(stat(a) - stat(b))
    assert test.p_value < 0.05


def test_holm_adjustment_on_the_textbook_example() -> None:
    """Holm (1979) step-down; the example of four hypotheses with p = 0.01, 0.04, 0.03, 0.005 at
    alpha 0.05 rejects H1 and H4 only (Wikipedia, Holm–Bonferroni method, Example)."""
    adjusted = holm_adjust([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert [p <= 0.05 for p in adjusted] == [True, False, False, True]
    assert holm_adjust([]) == [] and holm_adjust([0.5]) == [0.5] and holm_adjust([0.4, 0.4]) == [0.8, 0.8]
    with pytest.raises(ValueError):
        holm_adjust([1.5])
