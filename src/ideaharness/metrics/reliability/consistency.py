"""Position consistency and position bias of one judge, from judgment views.

* Pairwise: two-order agreement, the share of pairs judged in both orders whose verdict names the
  same item (or tie) both times (the position swap of Arena-Hard, Li et al. 2024, and of MT-Bench,
  Zheng et al. 2023 §3.3 "position bias"). Chance = p_tie² + 2·p_first·p_second, the agreement of a
  content-blind judge with the same shares of "first", "tie" and "second" answers (Cohen's κ
  expected agreement, Cohen 1960, with "first" in one order matching "second" in the other): 0.5
  for a judge picking a side at random, 1.0 for one that always says "equal".
* Ranking: Kendall τ-b (Kendall 1945; ``scipy.stats.kendalltau``) between the item ranks of an
  original ranking and its re-ask with the items permuted, averaged over pairs. Chance = 0.
* Rating: exact and ±1 agreement of the two ratings. Chance of exact agreement = Σ_k p_k², p_k the
  share of rating k among the compared ratings (the expected agreement of Cohen's κ).
* Choice: share of re-asks choosing the same item(s). Chance = mean 1/k over questions of k options
  (single choices only; None for multi-item selections).

A *constant* judge — one position-level answer in every compared judgment ("equal" every time, the
same rating, option A, the shown order as its ranking) — has ``informative`` False: its agreement
with itself equals its chance value by construction (1.0 for "always equal", 0 for "always the
first") and says nothing about the items. Position bias is tested per judgment in
:mod:`.position`.

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

from ideaharness.metrics.reliability.views import JudgmentView


class Consistency(BaseModel):
    """Agreement of a judge with itself when only the order of the items changes.

    ``agreement``: two-order agreement (pairwise), exact agreement (rating, choice) or mean
    Kendall τ-b (ranking), None without any compared pair; ``within_one``: ratings only, share of
    pairs at most 1 apart; ``chance``: the value of a judge that ignores the content (see module);
    ``informative``: False for a constant judge (one position-level answer in every compared
    judgment), whose agreement carries no information.
    """

    measure: Literal["two_order_agreement", "kendall_tau_b", "exact_agreement"]
    n_pairs: int
    agreement: float | None
    within_one: float | None = None
    chance: float | None
    informative: bool = True

    @property
    def at_or_below_chance(self) -> bool:
        """Agreement at or below chance, for an informative (non-constant) judge only."""
        return (
            self.informative
            and self.agreement is not None
            and self.chance is not None
            and self.agreement <= self.chance + 1e-12
        )


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
    informative = len({x.position_answer() for pair in pairs for x in pair}) > 1 or not pairs
    if kind == "ranking":
        taus = [t for t in (_tau(a, b) for a, b in pairs) if t is not None]
        return Consistency(
            measure="kendall_tau_b",
            n_pairs=len(taus),
            agreement=sum(taus) / len(taus) if taus else None,
            chance=0.0,
            informative=informative,
        )
    same = [a.content_answer() == b.content_answer() for a, b in pairs]
    agreement = sum(same) / len(same) if same else None
    if kind == "pairwise":
        shares = Counter(x.position_answer() for pair in pairs for x in pair)
        total = sum(shares.values())
        chance = (
            (shares["tie"] / total) ** 2 + 2 * (shares["first"] / total) * (shares["second"] / total)
            if total
            else None
        )
        return Consistency(
            measure="two_order_agreement",
            n_pairs=len(pairs),
            agreement=agreement,
            chance=chance,
            informative=informative,
        )
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
            informative=informative,
        )
    single = all(len(x.value) == 1 and x.positions for pair in pairs for x in pair)
    chance = (sum(1 / len(a.positions or ()) for a, _ in pairs) / len(pairs)) if pairs and single else None
    return Consistency(
        measure="exact_agreement",
        n_pairs=len(pairs),
        agreement=agreement,
        chance=chance,
        informative=informative,
    )


def _tau(a: JudgmentView, b: JudgmentView) -> float | None:
    ra, rb = a.item_ranks() or {}, b.item_ranks() or {}
    items = sorted(set(ra) & set(rb))
    if len(items) < 2:
        return None
    from scipy.stats import kendalltau  # scipy.stats takes ~1 s to import

    tau = kendalltau([ra[i] for i in items], [rb[i] for i in items]).statistic  # τ-b by default
    return None if tau is None or math.isnan(tau) else float(tau)
