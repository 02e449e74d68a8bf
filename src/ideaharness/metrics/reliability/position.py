"""Position bias of one judge, tested at the level of judgments (exact tests, family-wise adjusted).

One judgment is one independent draw under the null hypothesis "the judge has no preference for
any shown position"; the points of one judgment (both sides of a pair, the ranks of one ranking)
are never pooled as if they were independent. Per kind:

* ``pairwise``: among the judgments that are not ties, the number won by the item shown first
  against Binomial(n, 1/2) — exact two-sided binomial test (the p-value of ``scipy.stats.binomtest``).
* ``ranking``: for each shown position k, the sum over judgments of the rank (1 = best) given to
  the item shown at k. Under the null that rank is uniform on 1..m in every judgment (m items
  shown), so the sum's exact distribution is the convolution of n discrete uniforms; the two-sided
  p-value sums the probabilities of every sum no more likely than the one observed (the rule
  ``binomtest`` uses). A judge that puts the last-shown idea first in 6 of 6 rankings of 4 has a
  rank sum of 6 at the last position, probability (1/4)^6 = 0.00024 (two-sided p 0.00049: a sum of
  24 is as unlikely).
* ``choice``: for each shown position k, the number of judgments that chose the option at k.
  Under the null a judgment choosing s of m options picks position k with probability s/m, so the
  count is Poisson-binomial (a Binomial(n, 1/m) for single choices among m), computed exactly by
  convolving the binomials of equal (s, m).

The family of per-position tests (m positions; one for pairs) is adjusted by the single-step
min-P method (Westfall & Young 1993, *Resampling-Based Multiple Testing*, Wiley): the adjusted p of
a position is the share of ``resamples`` seeded data sets drawn under the null whose smallest
per-position p is at most the observed one, ``(1 + b) / (1 + B)``. It controls the family-wise
error rate at ``alpha`` and, unlike Holm's bound (:func:`holm`, Holm 1979, kept for reference),
uses the dependence between positions (the ranks of one ranking sum to a constant), so the
false-alarm rate stays near ``alpha`` instead of well below it. Exact discrete tests stay
conservative at very small n (the null simulation in ``tests/metrics/test_reliability_position.py``
measures the rate). Ratings are single-item judgments: no position test (their re-ask changes the
order of calibration items only, see :mod:`.consistency`).

MT-Bench (Zheng et al. 2023, §3.3) and Arena-Hard measure the same bias by swapping positions;
this module tests it on every judgment, swapped or not.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel

from ideaharness.metrics.reliability.views import JudgmentView

PositionKind = Literal["pairwise", "ranking", "choice"]
_REL = 1 + 1e-7  # relative tolerance of "no more likely than observed" (as scipy's binomtest)
RESAMPLES = 1999
"""Null data sets of the min-P adjustment (smallest adjusted p: 1/2000)."""


class PositionTest(BaseModel):
    """One shown position's exact test.

    ``position``: 0-based shown position (-1: the last one, when judgments show different numbers
    of items); ``label`` e.g. "first", "3rd", "last"; ``n`` judgments tested; ``statistic`` what was
    counted (``first_wins``: non-tie pairs won by the first-shown item; ``rank_sum``: sum of the
    ranks given to the item shown there, 1 = best; ``times_chosen``); ``observed`` / ``expected``
    its value and null expectation; ``mean`` observed per judgment (win rate, mean rank, choice
    rate) and ``expected_mean``; ``p_value`` exact two-sided, ``p_adjusted`` Holm over the family.
    """

    position: int
    label: str
    n: int
    statistic: Literal["first_wins", "rank_sum", "times_chosen"]
    observed: float
    expected: float
    mean: float
    expected_mean: float
    p_value: float
    p_adjusted: float

    @property
    def favoured(self) -> bool:
        """The judge prefers this position (wins / chosen more, ranked better than chance)."""
        better = (
            self.observed < self.expected if self.statistic == "rank_sum" else self.observed > self.expected
        )
        return bool(better)


class PositionBias(BaseModel):
    """Position-bias tests of one judge on one metric (see the module docstring).

    ``n_judgments``: judgments tested (parsed, with shown positions; ties excluded for pairs);
    ``tests`` one per position; ``p_adjusted`` the smallest Holm-adjusted p (None without a test),
    ``p_value`` that test's unadjusted p; ``position`` / ``favours`` the label of that position and
    whether the judge favours or avoids it (None when no test).
    """

    kind: PositionKind
    n_judgments: int
    tests: list[PositionTest]
    p_value: float | None
    p_adjusted: float | None
    position: str | None
    favours: Literal["favours", "avoids"] | None
    method: str
    resamples: int | None = None
    seed: int | None = None

    def significant(self, alpha: float = 0.05) -> bool:
        return self.p_adjusted is not None and self.p_adjusted < alpha


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979, *Scand. J. Statist.* 6:65–70): sort
    ascending, p_adj(i) = max over j <= i of min(1, (m − j + 1)·p(j)); returned in input order.
    Rejecting where p_adj < alpha controls the family-wise error rate at alpha under any
    dependence."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.maximum.accumulate(stepped) if m else stepped
    return [float(v) for v in out]


@functools.lru_cache(maxsize=4096)
def _uniform_sum_pmf(m: int, n: int) -> np.ndarray:
    """pmf of the sum of n independent uniforms on 1..m, index 0 = sum n (exact, float64)."""
    out = np.ones(1)
    step = np.ones(m) / m
    base, k = step, n
    while k:  # exponentiation by squaring of the convolution power
        if k & 1:
            out = np.convolve(out, base)
        k >>= 1
        if k:
            base = np.convolve(base, base)
    return out


def _ordinal(k: int, m: int | None) -> str:
    if k == 0:
        return "first"
    if m is not None and k == m - 1:
        return "last"
    if k < 0:
        return "last"
    n = k + 1
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@functools.lru_cache(maxsize=1024)
def _half_binomial_p(n: int) -> np.ndarray:
    """Exact two-sided p of every win count 0..n under Binomial(n, 1/2) (``binomtest``'s rule)."""
    from scipy.stats import binom  # scipy.stats takes ~1 s to import

    return _p_table(binom.pmf(np.arange(n + 1), n, 0.5))


def pairwise_position_test(first_outcomes: Sequence[float] | np.ndarray) -> PositionBias:
    """First-position win rate against 1/2 (exact binomial), from the outcome for the item shown
    first in each judgment: 1.0 won, 0.0 lost, 0.5 tie (ties are left out: they favour no side).

    Args:
        first_outcomes: one value in {0, 0.5, 1} per parsed judgment, shape (n,).
    """
    x = np.asarray(first_outcomes, dtype=float)
    wins, n = int((x == 1.0).sum()), int(((x == 1.0) | (x == 0.0)).sum())
    method = "exact binomial test of the first-shown item's wins among non-tie judgments vs 1/2"
    if n == 0:
        return _empty("pairwise", method, None, None)
    p = float(_half_binomial_p(n)[wins])  # = scipy.stats.binomtest(wins, n, 0.5).pvalue
    test = PositionTest(
        position=0,
        label="first",
        n=n,
        statistic="first_wins",
        observed=wins,
        expected=n / 2,
        mean=wins / n,
        expected_mean=0.5,
        p_value=p,
        p_adjusted=p,
    )
    return _summarise("pairwise", n, [test], method, {0: "first", 1: "second"})


def _p_table(pmf: np.ndarray) -> np.ndarray:
    """Exact two-sided p-value of every outcome of ``pmf``: the total probability of the outcomes
    no more likely than it (the rule of ``scipy.stats.binomtest``)."""
    order = np.sort(pmf)
    cum = np.cumsum(order)
    idx = np.searchsorted(order, pmf * _REL, side="right") - 1
    p: np.ndarray = np.minimum(1.0, cum[idx])
    return p


@functools.lru_cache(maxsize=256)
def _null_min_p(
    kind: str,
    groups: tuple[tuple[int, int, int], ...],
    slots: tuple[int, ...],
    tables: tuple[tuple[float, ...], ...],
    lows: tuple[int, ...],
    resamples: int,
    seed: int,
) -> np.ndarray:
    """Sorted smallest per-position exact p over ``resamples`` seeded data sets drawn under the
    null (uniform rankings, or uniform choices of s of m), for the single-step min-P adjustment.

    ``groups``: (m items, s chosen — 0 for rankings, number of judgments) per group of rows.
    """
    rng = np.random.default_rng(seed)
    sums = np.zeros((resamples, len(slots)))
    block = max(1, 2_000_000 // max(1, sum(c * m for m, _, c in groups)))
    for start in range(0, resamples, block):
        b = min(block, resamples - start)
        for m, s, count in groups:
            perm = np.argsort(rng.random((b, count, m)), axis=2)  # a uniform permutation per row
            values = perm + 1 if kind == "ranking" else (perm < s)
            total = values.sum(axis=1)  # (b, m)
            sums[start : start + b] += total[:, list(slots)]
    p = np.ones((resamples, len(slots)))
    for i, (table, low) in enumerate(zip(tables, lows, strict=True)):
        p[:, i] = np.asarray(table)[sums[:, i].astype(int) - low]
    return np.sort(p.min(axis=1))


def _family(
    kind: PositionKind,
    groups: dict[tuple[int, int], int],
    slots: list[int],
    pmfs: list[np.ndarray],
    lows: list[int],
    observed: list[int],
    m_all: int | None,
    statistic: Literal["rank_sum", "times_chosen"],
    n: int,
    expected: list[float],
    resamples: int,
    seed: int,
    method: str,
) -> PositionBias:
    tables = [_p_table(pmf) for pmf in pmfs]
    raw = [float(t[o - low]) for t, o, low in zip(tables, observed, lows, strict=True)]
    null = _null_min_p(
        kind,
        tuple((m, s, c) for (m, s), c in sorted(groups.items())),
        tuple(slots),
        tuple(tuple(t.tolist()) for t in tables),
        tuple(lows),
        resamples,
        seed,
    )
    adjusted = [float((1 + np.searchsorted(null, p * _REL, side="right")) / (resamples + 1)) for p in raw]
    adjusted = [max(a, p) for a, p in zip(adjusted, raw, strict=True)]
    tests = [
        PositionTest(
            position=k,
            label=_ordinal(k, m_all),
            n=n,
            statistic=statistic,
            observed=obs,
            expected=exp,
            mean=obs / n,
            expected_mean=exp / n,
            p_value=p,
            p_adjusted=a,
        )
        for k, obs, exp, p, a in zip(slots, observed, expected, raw, adjusted, strict=True)
    ]
    return _summarise(kind, n, tests, method, {}, resamples=resamples, seed=seed)


def _column_sums(rows: np.ndarray | list[np.ndarray], slots: list[int]) -> list[int]:
    if isinstance(rows, np.ndarray):
        return [int(v) for v in rows.astype(int).sum(axis=0)[slots]]
    return [int(sum(int(r[k]) for r in rows)) for k in slots]


def _slots(lengths: list[int]) -> tuple[list[int], int | None]:
    fixed = len(lengths) == 1
    return list(range(lengths[0])) + ([] if fixed else [-1]), (lengths[0] if fixed else None)


def ranking_position_test(
    ranks: Sequence[Sequence[int]] | np.ndarray, *, resamples: int = RESAMPLES, seed: int = 0
) -> PositionBias:
    """Exact per-position rank-sum tests of rankings (module docstring), min-P adjusted.

    Args:
        ranks: per judgment, the rank (1 = best) given to the item shown at each position:
            ``ranks[j][k]`` for judgment j and shown position k; rows may differ in length (m items).
        resamples, seed: null data sets of the family-wise adjustment and their seed.
    """
    if isinstance(ranks, np.ndarray) and ranks.ndim == 2 and ranks.shape[1] >= 2:
        rows: np.ndarray | list[np.ndarray] = ranks.astype(int)  # one length: vectorised sums below
    else:
        rows = [r for r in (np.asarray(r, dtype=int) for r in ranks) if len(r) >= 2]
    method = (
        f"exact rank-sum test per shown position (uniform ranks under no preference); "
        f"family-wise single-step min-P adjustment over {resamples} seeded null data sets"
    )
    if len(rows) == 0:
        return _empty("ranking", method, resamples, seed)
    slots, m_all = _slots(sorted({len(r) for r in rows}))
    counts = Counter(len(r) for r in rows)
    pmf = np.ones(1)
    for m, c in sorted(counts.items()):
        pmf = np.convolve(pmf, _uniform_sum_pmf(m, c))
    n = len(rows)
    observed = _column_sums(rows, slots)
    expected = float(sum(c * (m + 1) / 2 for m, c in counts.items()))
    return _family(
        "ranking",
        {(m, 0): c for m, c in counts.items()},
        slots,
        [pmf] * len(slots),
        [n] * len(slots),
        observed,
        m_all,
        "rank_sum",
        n,
        [expected] * len(slots),
        resamples,
        seed,
        method,
    )


def choice_position_test(
    chosen: Sequence[Sequence[bool]] | np.ndarray, *, resamples: int = RESAMPLES, seed: int = 0
) -> PositionBias:
    """Exact per-position tests of how often each shown option was chosen (module docstring),
    min-P adjusted.

    Args:
        chosen: per judgment, one flag per shown option (True = chosen); rows may differ in length.
            Judgments that chose nothing or everything carry no position information and are
            left out.
        resamples, seed: null data sets of the family-wise adjustment and their seed.
    """
    if isinstance(chosen, np.ndarray) and chosen.ndim == 2 and chosen.shape[1] >= 2:
        picked = chosen.astype(bool).sum(axis=1)
        rows: np.ndarray | list[np.ndarray] = chosen.astype(bool)[(picked > 0) & (picked < chosen.shape[1])]
    else:
        rows = [
            r for r in (np.asarray(r, dtype=bool) for r in chosen) if len(r) >= 2 and 0 < r.sum() < len(r)
        ]
    method = (
        f"exact test of each shown position's choice count (Poisson-binomial, P = chosen/options "
        f"under no preference); family-wise single-step min-P adjustment over {resamples} seeded "
        "null data sets"
    )
    if len(rows) == 0:
        return _empty("choice", method, resamples, seed)
    slots, m_all = _slots(sorted({len(r) for r in rows}))
    if isinstance(rows, np.ndarray):
        groups = Counter(
            {
                (rows.shape[1], int(k)): int(c)
                for k, c in zip(*np.unique(rows.sum(axis=1), return_counts=True), strict=True)
            }
        )
    else:
        groups = Counter((len(r), int(r.sum())) for r in rows)
    from scipy.stats import binom

    pmf = np.ones(1)
    for (m, s), c in sorted(groups.items()):
        pmf = np.convolve(pmf, binom.pmf(np.arange(c + 1), c, s / m))
    observed = _column_sums(rows, slots)
    expected = float(sum(c * s / m for (m, s), c in groups.items()))
    return _family(
        "choice",
        dict(groups),
        slots,
        [pmf] * len(slots),
        [0] * len(slots),
        observed,
        m_all,
        "times_chosen",
        len(rows),
        [expected] * len(slots),
        resamples,
        seed,
        method,
    )


def _empty(kind: PositionKind, method: str, resamples: int | None, seed: int | None) -> PositionBias:
    return PositionBias(
        kind=kind,
        n_judgments=0,
        tests=[],
        p_value=None,
        p_adjusted=None,
        position=None,
        favours=None,
        method=method,
        resamples=resamples,
        seed=seed,
    )


def _summarise(
    kind: PositionKind,
    n: int,
    tests: list[PositionTest],
    method: str,
    names: dict[int, str],
    *,
    resamples: int | None = None,
    seed: int | None = None,
) -> PositionBias:
    # the most significant position; between equals, the one the judge favours (a judge that puts
    # the last item first also pushes the others down: say "favours last", not "avoids 3rd")
    best = min(tests, key=lambda t: (t.p_adjusted, not t.favoured, t.p_value)) if tests else None
    favours: Literal["favours", "avoids"] | None = None
    label = None
    if best is not None:
        favours = "favours" if best.favoured else "avoids"
        label = best.label
        if kind == "pairwise":  # one test: say which side is preferred
            label, favours = (names[0] if best.favoured else names[1]), "favours"
    return PositionBias(
        kind=kind,
        n_judgments=n,
        tests=tests,
        p_value=None if best is None else best.p_value,
        p_adjusted=None if best is None else best.p_adjusted,
        position=label,
        favours=favours,
        method=method,
        resamples=resamples,
        seed=seed,
    )


def position_bias(views: Sequence[JudgmentView]) -> PositionBias | None:
    """Position-bias tests of one judge on one metric from its parsed views with shown positions
    (re-asks included: each is one more judgment); None for ratings or when no view shows
    positions.

    Raises:
        ValueError: the views mix kinds.
    """
    kinds = {v.kind for v in views}
    if len(kinds) > 1:
        raise ValueError(f"views of several kinds: {sorted(kinds)}")
    if not kinds or "rating" in kinds:
        return None
    kind = kinds.pop()
    usable = [v for v in views if v.parse_ok and v.positions is not None and len(v.positions) >= 2]
    if not usable:
        return None
    if kind == "pairwise":
        return pairwise_position_test([float(v.value) for v in usable])
    if kind == "ranking":
        rows = []
        for v in usable:
            ranks = v.item_ranks() or {}
            if all(item in ranks for item in v.positions or ()):
                rows.append([ranks[item] for item in v.positions or ()])
        return ranking_position_test(rows)
    return choice_position_test([[p in set(v.value) for p in range(len(v.positions or ()))] for v in usable])
