"""Position consistency and position bias of one judge, from judgment views.

* Pairwise: two-order agreement, the share of pairs judged in both orders whose verdict names the
  same item (or tie) both times (the position swap of Arena-Hard, Li et al. 2024, and of MT-Bench,
  Zheng et al. 2023 §3.3 "position bias"). Chance = 0.5: a judge picking a side at random.
* Ranking: Kendall τ-b (Kendall 1945; ``scipy.stats.kendalltau``) between the item ranks of an
  original ranking and its re-ask with the items permuted, averaged over pairs. Chance = 0.
* Rating: exact and ±1 agreement of the two ratings. Chance of exact agreement = Σ_k p_k², p_k the
  share of rating k among the compared ratings (the expected agreement of Cohen's κ).
* Choice: share of re-asks choosing the same item(s). Chance = mean 1/k over questions of k options
  (single choices only; None for multi-item selections).
* Rank-by-position: Spearman ρ (``scipy.stats.spearmanr``) between the position an item was shown in
  (0-based) and the rank it was given (rankings) or whether it was chosen (pairwise, choice; a tie
  counts 0.5), over all (judgment, position) points. Points of one ranking are not independent, so
  the p-value is a screening figure, not an exact test (Zheng et al. 2023 measure the same bias by
  swapping positions).

Only pairs of judgments by the same judge, in the same ``group`` and shown in different orders (or
both without positions) are compared.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel
from scipy.stats import kendalltau, spearmanr

from ideaharness.metrics.reliability.views import JudgmentView


class Consistency(BaseModel):
    """Agreement of a judge with itself when only the order of the items changes.

    ``agreement``: two-order agreement (pairwise), exact agreement (rating, choice) or mean
    Kendall τ-b (ranking), None without any compared pair; ``within_one``: ratings only, share of
    pairs at most 1 apart; ``chance``: the value of a judge that ignores the content (see module).
    """

    measure: Literal["two_order_agreement", "kendall_tau_b", "exact_agreement"]
    n_pairs: int
    agreement: float | None
    within_one: float | None = None
    chance: float | None

    @property
    def at_or_below_chance(self) -> bool:
        return (
            self.agreement is not None and self.chance is not None and self.agreement <= self.chance + 1e-12
        )


class PositionCorrelation(BaseModel):
    """Spearman ρ between shown position and assigned rank (rankings) or chosen flag (choices).

    ``favours``: "early" / "late" when ρ says which positions the judge prefers, None when ρ is
    None or 0; ``p_value`` two-sided (scipy), None when ρ is undefined (a constant series).
    """

    against: Literal["rank", "chosen"]
    n_points: int
    rho: float | None
    p_value: float | None
    favours: Literal["early", "late"] | None


def compared_pairs(views: Sequence[JudgmentView]) -> list[tuple[JudgmentView, JudgmentView]]:
    """Pairs of parsed views by one judge in one group, shown in different orders (or both unordered)."""
    groups: dict[tuple[str, str, str], list[JudgmentView]] = defaultdict(list)
    for v in views:
        if v.group is not None and v.parse_ok:
            groups[(v.judge_model, v.instance_id, v.group)].append(v)
    pairs = []
    for members in groups.values():
        for a, b in itertools.combinations(members, 2):
            if a.positions != b.positions or a.positions is None:
                pairs.append((a, b))
    return pairs


def consistency(views: Sequence[JudgmentView]) -> Consistency | None:
    """Position consistency of one judge on one metric (all views of one kind).

    Returns None when the views have no groups at all (nothing was asked twice).

    Raises:
        ValueError: the views mix kinds.
    """
    kinds = {v.kind for v in views}
    if len(kinds) > 1:
        raise ValueError(f"views of several kinds: {sorted(kinds)}")
    if not kinds or all(v.group is None for v in views):
        return None
    kind = kinds.pop()
    pairs = compared_pairs(views)
    if kind == "ranking":
        taus = [_tau(a, b) for a, b in pairs]
        taus = [t for t in taus if t is not None]
        return Consistency(
            measure="kendall_tau_b",
            n_pairs=len(taus),
            agreement=sum(taus) / len(taus) if taus else None,
            chance=0.0,
        )
    same = [a.content_answer() == b.content_answer() for a, b in pairs]
    agreement = sum(same) / len(same) if same else None
    if kind == "pairwise":
        return Consistency(measure="two_order_agreement", n_pairs=len(pairs), agreement=agreement, chance=0.5)
    if kind == "rating":
        values = [float(x.value) for pair in pairs for x in pair]
        counts = Counter(values)
        chance = sum((c / len(values)) ** 2 for c in counts.values()) if values else None
        near = [abs(float(a.value) - float(b.value)) <= 1 for a, b in pairs]
        return Consistency(
            measure="exact_agreement",
            n_pairs=len(pairs),
            agreement=agreement,
            within_one=sum(near) / len(near) if near else None,
            chance=chance,
        )
    single = all(len(x.value) == 1 and x.positions for pair in pairs for x in pair)
    chance = (sum(1 / len(a.positions or ()) for a, _ in pairs) / len(pairs)) if pairs and single else None
    return Consistency(measure="exact_agreement", n_pairs=len(pairs), agreement=agreement, chance=chance)


def _tau(a: JudgmentView, b: JudgmentView) -> float | None:
    ra, rb = a.item_ranks() or {}, b.item_ranks() or {}
    items = sorted(set(ra) & set(rb))
    if len(items) < 2:
        return None
    tau = kendalltau([ra[i] for i in items], [rb[i] for i in items]).statistic  # τ-b by default
    return None if tau is None or math.isnan(tau) else float(tau)


def position_correlation(views: Sequence[JudgmentView]) -> PositionCorrelation | None:
    """Rank-by-position correlation of one judge on one metric; None for ratings or no positions."""
    points: list[tuple[int, float]] = []
    against: Literal["rank", "chosen"] = "chosen"
    for v in views:
        if v.value is None or v.positions is None or v.kind == "rating":
            continue
        if v.kind == "ranking":
            against = "rank"
            ranks = v.item_ranks() or {}
            points += [(p, float(ranks[item])) for p, item in enumerate(v.positions) if item in ranks]
        elif v.kind == "pairwise":
            first = float(v.value)
            points += [(0, first), (1, 1.0 - first)]
        else:
            chosen = set(v.value)
            points += [(p, 1.0 if p in chosen else 0.0) for p in range(len(v.positions))]
    if not points:
        return None
    xs, ys = zip(*points, strict=True)
    rho: float | None = None
    p_value: float | None = None
    if len(set(xs)) > 1 and len(set(ys)) > 1:
        result = spearmanr(xs, ys)
        rho, p_value = float(result.statistic), float(result.pvalue)
        if math.isnan(rho):
            rho = p_value = None
    favours: Literal["early", "late"] | None = None
    if rho:
        prefers_early = rho > 0 if against == "rank" else rho < 0
        favours = "early" if prefers_early else "late"
    return PositionCorrelation(
        against=against, n_points=len(points), rho=rho, p_value=p_value, favours=favours
    )
