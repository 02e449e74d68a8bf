"""Several judges on the same questions: Krippendorff's α, the panel verdict, agreement with humans.

Krippendorff's α (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"; PyPI
``krippendorff``): α = 1 − D_o / D_e over units judged by at least two judges, with the level of
measurement per kind: nominal for choices, ordinal for ratings, ranks and pairwise verdicts
(first better > tie > second better, coded on the two items in sorted id order). A judge that
answered one unit several times (both orders, a re-ask) contributes its mean (ordinal) or its
most common answer (nominal).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel
from scipy.stats import spearmanr

from ideaharness.metrics.reliability.views import JudgmentView

Level = Literal["nominal", "ordinal"]
LEVEL_OF_KIND: dict[str, Level] = {
    "choice": "nominal",
    "rating": "ordinal",
    "ranking": "ordinal",
    "pairwise": "ordinal",
}


class PanelAgreement(BaseModel):
    """Inter-judge agreement of a panel on one metric (``alpha`` None when undefined)."""

    judges: list[str]
    n_units: int
    level: Level
    alpha: float | None


def _unit_scores(v: JudgmentView) -> dict[str, Any]:
    """(sub)unit -> value of one parsed view, in the coding used for α and aggregation."""
    if v.kind == "ranking":
        return {f"{v.unit_id}|{item}": float(r) for item, r in (v.item_ranks() or {}).items()}
    if v.kind == "pairwise":
        answer = v.content_answer()
        if answer == "tie" or v.positions is None:
            return {v.unit_id: 0.5}
        return {v.unit_id: 1.0 if answer == min(v.positions) else 0.0}
    if v.kind == "choice":
        return {v.unit_id: v.content_answer()}
    return {v.unit_id: float(v.value)}


def _per_judge(views: Sequence[JudgmentView]) -> tuple[dict[str, dict[str, Any]], str]:
    kinds = {v.kind for v in views}
    if len(kinds) != 1:
        raise ValueError(f"views must be of one kind, got {sorted(kinds)}")
    kind = kinds.pop()
    raw: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for v in views:
        if v.parse_ok:
            for unit, value in _unit_scores(v).items():
                raw[v.judge_model][unit].append(value)
    out: dict[str, dict[str, Any]] = {}
    for judge, units in raw.items():
        if kind == "choice":
            out[judge] = {u: Counter(vals).most_common(1)[0][0] for u, vals in units.items()}
        else:
            out[judge] = {u: float(np.mean(vals)) for u, vals in units.items()}
    return out, kind


def panel_agreement(views: Sequence[JudgmentView]) -> PanelAgreement | None:
    """Krippendorff's α of the judges in ``views`` (one metric, one kind).

    Returns None with fewer than two judges; ``alpha`` None when no unit has two judges' answers
    or every answer is the same (α undefined).

    Raises:
        ValueError: the views mix kinds.
    """
    import krippendorff

    per_judge, kind = _per_judge(views)
    if len(per_judge) < 2:
        return None
    judges = sorted(per_judge)
    units = sorted({u for answers in per_judge.values() for u in answers})
    shared = [u for u in units if sum(u in per_judge[j] for j in judges) >= 2]
    level = LEVEL_OF_KIND[kind]
    codes: dict[Any, int] = {}
    matrix = np.full((len(judges), len(shared)), np.nan)
    for r, j in enumerate(judges):
        for c, u in enumerate(shared):
            if u in per_judge[j]:
                value = per_judge[j][u]
                matrix[r, c] = codes.setdefault(value, len(codes)) if kind == "choice" else value
    alpha: float | None = None
    if shared and len(set(matrix[~np.isnan(matrix)].tolist())) > 1:
        alpha = float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))
    return PanelAgreement(judges=judges, n_units=len(shared), level=level, alpha=alpha)


def panel_aggregate(views: Sequence[JudgmentView]) -> dict[str, Any]:
    """The panel's verdict per unit: majority for pairwise/choice, mean for ratings, mean rank for rankings.

    Returns:
        unit id -> verdict. pairwise: the preferred item id or "tie"; choice: the chosen item
        id(s) tuple; rating: mean rating (float); ranking: tuple of item ids ordered by mean rank
        (ties broken by item id). A unit whose majority is tied gets None (no verdict is invented).

    Raises:
        ValueError: the views mix kinds.
    """
    kinds = {v.kind for v in views}
    if len(kinds) > 1:
        raise ValueError(f"views must be of one kind, got {sorted(kinds)}")
    answers: dict[str, list[Any]] = defaultdict(list)
    for v in views:
        if v.parse_ok:
            answers[v.unit_id].append(v)
    out: dict[str, Any] = {}
    for unit, members in answers.items():
        kind = members[0].kind
        if kind == "rating":
            out[unit] = float(np.mean([float(m.value) for m in members]))
        elif kind == "ranking":
            ranks: dict[str, list[int]] = defaultdict(list)
            for m in members:
                for item, r in (m.item_ranks() or {}).items():
                    ranks[item].append(r)
            out[unit] = tuple(sorted(ranks, key=lambda i: (float(np.mean(ranks[i])), i)))
        else:
            top = Counter(m.content_answer() for m in members).most_common(2)
            out[unit] = None if len(top) > 1 and top[0][1] == top[1][1] else top[0][0]
    return out


class HumanAgreement(BaseModel):
    """Agreement of a judge with human labels: accuracy (pairwise, choice) or Spearman ρ (rating,
    ranking: per unit, averaged). ``n`` counts parsed judgments with a label."""

    measure: Literal["accuracy", "spearman"]
    n: int
    value: float | None
    p_value: float | None = None


def human_agreement(views: Sequence[JudgmentView], labels: Mapping[str, Any]) -> HumanAgreement | None:
    """Agreement with human labels keyed by unit id (:attr:`JudgmentView.unit_id`).

    Label per kind: pairwise, the preferred item id or "tie"; choice, the tuple of correct item
    ids; rating, the human score; ranking, the human ranking (item ids, best first).
    Returns None when no parsed view has a label.
    """
    labelled = [v for v in views if v.parse_ok and v.unit_id in labels]
    if not labelled:
        return None
    kind = labelled[0].kind
    if kind in ("pairwise", "choice"):
        hits = [v.content_answer() == labels[v.unit_id] for v in labelled]
        return HumanAgreement(measure="accuracy", n=len(hits), value=sum(hits) / len(hits))
    if kind == "rating":
        xs = [float(v.value) for v in labelled]
        ys = [float(labels[v.unit_id]) for v in labelled]
        if len(set(xs)) < 2 or len(set(ys)) < 2:
            return HumanAgreement(measure="spearman", n=len(xs), value=None)
        res = spearmanr(xs, ys)
        return HumanAgreement(
            measure="spearman", n=len(xs), value=float(res.statistic), p_value=float(res.pvalue)
        )
    rhos = []
    for v in labelled:
        ranks = v.item_ranks() or {}
        human = {item: r for r, item in enumerate(labels[v.unit_id], start=1)}
        items = sorted(set(ranks) & set(human))
        if len(items) >= 2:
            rhos.append(float(spearmanr([ranks[i] for i in items], [human[i] for i in items]).statistic))
    return HumanAgreement(measure="spearman", n=len(labelled), value=float(np.mean(rhos)) if rhos else None)
