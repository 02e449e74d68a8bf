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
    """Agreement of a judge with human labels, counted per labelled unit (the question the humans
    labelled: a pair, an item), never per judgment.

    A unit's judgments (both orders of a pair, several sampled answers) are first combined into the
    unit's one verdict, as the benchmark's own headline combines them (LigBench §5 judge accuracy):
    pairwise, the mean over the unit's judgments of the preference for one item (1 / 0.5 / 0),
    the verdict the item preferred on average (0.5: a tie); choice, the most common answer (a
    tied majority: no verdict). Consistency re-asks are left out (they measure the judge and are
    not part of any score), and so is a unit one of whose judgments did not parse (as the headline
    leaves out a pair one of whose orders did not parse).

    ``measure``: ``accuracy`` (pairwise, choice: share of labelled units whose verdict is the
    human answer; a verdict of tie or none is wrong, units the humans tie are left out, as
    LigBench §5) with the headline's interval (:func:`~ideaharness.metrics.aggregate.headline_interval`
    with the default bounded-mean interval on [0, 1]: none below ``MIN_INTERVAL_N`` units, then
    ``interval_why`` says so); ``spearman`` (rating: Spearman rho over units of the unit's mean
    rating; ranking: mean over units of the per-unit rho of the mean ranks). ``n`` counts the
    labelled units. ``quartile_agreement`` (ratings of at least 8 units): Si et al.'s (2024)
    top/bottom-quartile agreement with the judge as one "half" (see
    :func:`ideaharness.metrics.reliability.human.quartile_agreement`), the statistic their
    human–human ceiling is stated in; None otherwise. ``source`` says where the labels came from.
    """

    measure: Literal["accuracy", "spearman"]
    n: int
    value: float | None
    interval: tuple[float, float] | None = None
    interval_why: str | None = None
    p_value: float | None = None
    quartile_agreement: float | None = None
    source: str | None = None


def _pairwise_verdict(members: Sequence[JudgmentView]) -> Any:
    """One unit's verdict from its pairwise judgments: the item preferred on average, "tie" at 0.5."""
    items = sorted({item for m in members for item in (m.positions or ())})
    if len(items) != 2:
        return members[0].content_answer() if len(members) == 1 else None
    ref, other = items
    mean_ref = float(np.mean([float(m.value) if (m.positions or ())[0] == ref else 1.0 - float(m.value)
                              for m in members]))
    return ref if mean_ref > 0.5 else other if mean_ref < 0.5 else "tie"


def human_agreement(
    views: Sequence[JudgmentView], labels: Mapping[str, Any] | None = None, *, source: str | None = None
) -> HumanAgreement | None:
    """Agreement with human labels per labelled unit (see :class:`HumanAgreement`): labels keyed by
    unit id (:attr:`JudgmentView.unit_id`) in ``labels``, else each view's own
    :attr:`JudgmentView.human_label`.

    Label per kind: pairwise, the preferred item id or "tie"; choice, the tuple of correct item
    ids; rating, the human score; ranking, the human ranking (item ids, best first).
    Returns None when no unit has a parsed judgment and a label.
    """
    from scipy.stats import spearmanr  # scipy.stats takes ~1 s to import

    from ideaharness.metrics.aggregate import IntervalSettings, headline_interval, mean, standard_interval

    def label_of(v: JudgmentView) -> Any:
        return labels.get(v.unit_id) if labels else v.human_label

    unparsed = {v.unit_id for v in views if not v.reask and not v.parse_ok}
    by_unit: dict[str, list[JudgmentView]] = defaultdict(list)
    for v in views:
        if v.parse_ok and not v.reask and v.unit_id not in unparsed and label_of(v) is not None:
            by_unit[v.unit_id].append(v)
    if by_unit and next(iter(by_unit.values()))[0].kind == "pairwise":
        by_unit = {u: vs for u, vs in by_unit.items() if label_of(vs[0]) != "tie"}  # the humans do not choose
    if not by_unit:
        return None
    units = sorted(by_unit)
    kind = by_unit[units[0]][0].kind
    if kind in ("pairwise", "choice"):
        hits = []
        for u in units:
            members = by_unit[u]
            if kind == "pairwise":
                verdict = _pairwise_verdict(members)
            else:
                top = Counter(m.content_answer() for m in members).most_common(2)
                verdict = None if len(top) > 1 and top[0][1] == top[1][1] else top[0][0]
            hits.append(float(verdict is not None and verdict != "tie" and verdict == label_of(members[0])))
        ci, why = headline_interval(standard_interval, np.asarray(hits), mean,
                                    IntervalSettings(bounds=(0.0, 1.0)), len(hits))
        return HumanAgreement(measure="accuracy", n=len(hits), value=float(np.mean(hits)), interval=ci,
                              interval_why=why, source=source)
    if kind == "rating":
        from ideaharness.metrics.reliability.human import quartile_agreement

        xs = [float(np.mean([float(m.value) for m in by_unit[u]])) for u in units]
        ys = [float(label_of(by_unit[u][0])) for u in units]
        quartile = quartile_agreement(xs, ys) if len(units) >= 8 else None
        if len(set(xs)) < 2 or len(set(ys)) < 2:
            return HumanAgreement(
                measure="spearman", n=len(units), value=None, quartile_agreement=quartile, source=source
            )
        res = spearmanr(xs, ys)
        return HumanAgreement(
            measure="spearman",
            n=len(units),
            value=float(res.statistic),
            p_value=float(res.pvalue),
            quartile_agreement=quartile,
            source=source,
        )
    rhos = []
    for u in units:
        ranks: dict[str, list[int]] = defaultdict(list)
        for m in by_unit[u]:
            for item, r in (m.item_ranks() or {}).items():
                ranks[item].append(r)
        human_ranks = {item: r for r, item in enumerate(label_of(by_unit[u][0]), start=1)}
        items = sorted(set(ranks) & set(human_ranks))
        if len(items) >= 2:
            judge = [float(np.mean(ranks[i])) for i in items]
            truth = [human_ranks[i] for i in items]
            if len(set(judge)) > 1:
                rhos.append(float(spearmanr(judge, truth).statistic))
    return HumanAgreement(
        measure="spearman", n=len(units), value=float(np.mean(rhos)) if rhos else None, source=source
    )
