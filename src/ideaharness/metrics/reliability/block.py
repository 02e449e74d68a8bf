"""The reliability block of every LLM-judged metric: counts, consistency, bias, warnings, panel.

:func:`reliability_blocks` turns judgment views (any benchmark, see
:mod:`ideaharness.metrics.reliability.adapters`) into one :class:`MetricReliability` per judged
metric, ready for ``results.json`` (``model_dump(mode="json")``), the console and the report.

Degenerate-judge rules (each gives a :class:`JudgeWarning` with a sentence a user can act on):

* ``constant_judge``: one position-level answer (e.g. "tie", "first", rating 7, option A, the
  shown order as ranking) in every one of at least 2 parsed judgments. Its consistency is not
  informative (an always-"equal" judge agrees with itself perfectly, and so would any constant
  judge: its chance level is its agreement), so ``one_answer`` and ``consistency_at_chance`` do
  not fire beside it;
* ``one_answer``: one position-level answer in at least ``modal_threshold`` (0.9), but not all,
  of at least ``min_judgments`` parsed judgments;
* ``consistency_at_chance``: position consistency of a non-constant judge at or below its chance
  value over at least ``min_pairs`` compared pairs (see
  :mod:`~ideaharness.metrics.reliability.consistency`);
* ``position_bias``: a shown position favoured or avoided, family-wise adjusted p below ``alpha``
  (0.05) in the exact per-judgment tests of :mod:`~ideaharness.metrics.reliability.position`;
* ``truncated_reasoning``: at least one parse failure whose reply ran out of tokens while reasoning
  and gave no answer (``Judgment.truncated_reasoning``): the judge's reasoning budget is too small
  for it, not its answers unreadable. Counted apart (``truncated_reasoning``, included in
  ``parse_failures``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from ideaharness.metrics.reliability.consistency import Consistency, consistency
from ideaharness.metrics.reliability.panel import (
    HumanAgreement,
    PanelAgreement,
    human_agreement,
    panel_agreement,
)
from ideaharness.metrics.reliability.position import PositionBias, position_bias
from ideaharness.metrics.reliability.views import JudgmentView, Kind


class JudgeWarning(BaseModel):
    """A degenerate-judge finding: which rule fired and a human-readable message."""

    rule: Literal["constant_judge", "one_answer", "consistency_at_chance", "position_bias",
                  "truncated_reasoning"]
    judge_model: str
    message: str


class JudgeReliability(BaseModel):
    """Reliability of one judge on one metric.

    Rates are shares in [0, 1] of ``judgments`` (parse failures and retries) or of parsed
    judgments (tie rate, modal share); None when their denominator is 0.
    ``reask_judgments``: consistency re-asks among ``judgments`` (extra calls, not scored).
    ``self_judged``: judgments whose judged idea (or the reference rewritten among them) came from
    the judge's own model.
    ``constant``: one position-level answer in every parsed judgment (at least 2): a constant judge.
    ``truncated_reasoning``: parse failures whose last reply ran out of tokens while reasoning, with
    no answer (among ``parse_failures``; ``truncated_reasoning_rate`` is their share of ``judgments``).
    ``human``: agreement with human labels, only where the benchmark's data carries them.
    """

    judge_model: str
    kind: Kind
    judgments: int
    reask_judgments: int
    parsed: int
    parse_failures: int
    parse_failure_rate: float | None
    retries: int
    retry_rate: float | None
    extra_calls: int
    tie_rate: float | None
    modal_answer: str | None
    modal_share: float | None
    consistency: Consistency | None
    position: PositionBias | None
    self_judged: int
    self_preference: bool
    constant: bool = False
    truncated_reasoning: int = 0
    truncated_reasoning_rate: float | None = None
    human: HumanAgreement | None = None
    warnings: list[JudgeWarning] = Field(default_factory=list)


class MetricReliability(BaseModel):
    """Reliability block of one judged metric: per judge, the panel, and every warning."""

    metric: str
    kind: Kind
    judges: dict[str, JudgeReliability]
    panel: PanelAgreement | None
    warnings: list[JudgeWarning]

    @property
    def degenerate(self) -> bool:
        return bool(self.warnings)


def _answer_text(answer: Any, kind: str) -> str:
    if kind == "ranking" and isinstance(answer, tuple):
        return " > ".join(chr(ord("A") + p) for p in answer)
    if kind == "choice" and isinstance(answer, tuple):
        return ", ".join(chr(ord("A") + p) if p < 26 else str(p) for p in answer)
    return str(answer)


def _constant_message(
    metric: str, judge: str, kind: str, answer: Any, n: int, cons: Consistency | None
) -> str:
    head = f"{metric}: judge {judge} is a constant judge: "
    agreement = (
        f"; its consistency ({cons.agreement:.2f} over {cons.n_pairs} pairs) is not informative"
        if cons is not None and cons.agreement is not None
        else ""
    )
    if kind == "pairwise" and answer == "tie":
        what = f'it answered "equal" in all {n} parsed judgments'
        tail = ", and its verdicts carry no information about the items"
    elif kind == "pairwise":
        what = f"it preferred the item shown {answer} in all {n} parsed judgments"
        tail = ": its verdicts follow positions, not content"
    elif kind == "rating":
        what = f"it gave the rating {_answer_text(answer, kind)} in all {n} parsed judgments"
        tail = ", and its ratings carry no information about the items"
    elif kind == "choice":
        what = f"it chose option(s) {_answer_text(answer, kind)} by position in all {n} parsed judgments"
        tail = ": its choices follow positions, not content"
    else:
        what = f"it gave the positional ranking {_answer_text(answer, kind)} in all {n} parsed judgments"
        tail = ": its rankings follow positions, not content"
    return head + what + agreement + tail


def _position_message(metric: str, judge: str, pos: PositionBias) -> str:
    best = min(pos.tests, key=lambda t: (t.p_adjusted, not t.favoured, t.p_value))
    p = f"exact p = {best.p_value:.2g}"
    if len(pos.tests) > 1:
        p += f", family-wise adjusted p = {best.p_adjusted:.2g} over {len(pos.tests)} positions"
    if pos.kind == "pairwise":
        return (
            f"{metric}: judge {judge} favours the item shown {pos.position}: the first-shown item won "
            f"{best.observed:.0f} of {best.n} non-tie judgments ({best.mean:.0%}, no preference: 50%; {p})"
        )
    verb = "favours" if best.favoured else "avoids"
    if pos.kind == "ranking":
        return (
            f"{metric}: judge {judge} {verb} the item shown {best.label}: mean rank {best.mean:.2f} "
            f"(no preference: {best.expected_mean:.2f}, 1 = best) over {best.n} rankings ({p})"
        )
    return (
        f"{metric}: judge {judge} {verb} the option shown {best.label}: chosen in {best.observed:.0f} of "
        f"{best.n} judgments ({best.mean:.0%}, no preference: {best.expected_mean:.0%}; {p})"
    )


def judge_reliability(
    views: Sequence[JudgmentView],
    *,
    labels: Mapping[str, Any] | None = None,
    modal_threshold: float = 0.9,
    min_judgments: int = 5,
    min_pairs: int = 3,
    alpha: float = 0.05,
) -> JudgeReliability:
    """Reliability figures of one judge on one metric (all ``views`` share judge and kind).

    Raises:
        ValueError: ``views`` is empty or mixes judges or kinds.
    """
    if not views:
        raise ValueError("no judgments")
    judges = {v.judge_model for v in views}
    kinds = {v.kind for v in views}
    if len(judges) > 1 or len(kinds) > 1:
        raise ValueError(f"one judge and kind expected, got {sorted(judges)} / {sorted(kinds)}")
    judge, kind = judges.pop(), kinds.pop()
    metric = views[0].metric
    n = len(views)
    parsed = [v for v in views if v.parse_ok]
    failures = n - len(parsed)
    truncated = sum(1 for v in views if v.truncated_reasoning)
    retries = sum(1 for v in views if v.attempts > 1)
    answers = Counter(v.position_answer() for v in parsed)
    modal, modal_n = answers.most_common(1)[0] if answers else (None, 0)
    ties = sum(1 for v in parsed if float(v.value) == 0.5) if kind == "pairwise" else None
    self_judged = sum(1 for v in views if judge in (v.generator_model, v.reference_model))
    cons = consistency(views)
    pos = position_bias(views)
    warnings: list[JudgeWarning] = []
    modal_share = modal_n / len(parsed) if parsed else None
    constant = len(answers) == 1 and len(parsed) >= 2
    if constant:
        warnings.append(
            JudgeWarning(
                rule="constant_judge",
                judge_model=judge,
                message=_constant_message(metric, judge, kind, modal, len(parsed), cons),
            )
        )
    elif modal_share is not None and len(parsed) >= min_judgments and modal_share >= modal_threshold:
        warnings.append(
            JudgeWarning(
                rule="one_answer",
                judge_model=judge,
                message=(
                    f"{metric}: judge {judge} gave the same answer ({_answer_text(modal, kind)}) in "
                    f"{modal_n} of {len(parsed)} parsed judgments ({modal_share:.0%}); a near-constant "
                    "judge, its scores say little about the ideas"
                ),
            )
        )
    if not constant and cons is not None and cons.n_pairs >= min_pairs and cons.at_or_below_chance:
        warnings.append(
            JudgeWarning(
                rule="consistency_at_chance",
                judge_model=judge,
                message=(
                    f"{metric}: judge {judge} agrees with itself, when only the order of the items "
                    f"changes, no more than a content-blind judge with the same answer shares would "
                    f"({cons.measure.replace('_', ' ')} {cons.agreement:.2f} vs chance {cons.chance:.2f} "
                    f"over {cons.n_pairs} pairs); its verdicts do not follow the items' content"
                ),
            )
        )
    if truncated:
        warnings.append(
            JudgeWarning(
                rule="truncated_reasoning",
                judge_model=judge,
                message=(
                    f"{metric}: judge {judge} ran out of tokens while reasoning in {truncated} of {n} "
                    "judgments and gave no answer (parse failures): raise its reasoning budget "
                    "(--reasoning-budget ROLE=N) or lower its --reasoning-effort"
                ),
            )
        )
    if pos is not None and pos.significant(alpha):
        warnings.append(
            JudgeWarning(
                rule="position_bias", judge_model=judge, message=_position_message(metric, judge, pos)
            )
        )
    return JudgeReliability(
        judge_model=judge,
        kind=kind,
        judgments=n,
        reask_judgments=sum(v.reask for v in views),
        parsed=len(parsed),
        parse_failures=failures,
        parse_failure_rate=failures / n,
        retries=retries,
        retry_rate=retries / n,
        extra_calls=sum(v.attempts for v in views) - n,
        tie_rate=(ties / len(parsed) if parsed else None) if ties is not None else None,
        modal_answer=None if modal is None else _answer_text(modal, kind),
        modal_share=modal_share,
        consistency=cons,
        position=pos,
        self_judged=self_judged,
        self_preference=self_judged > 0,
        constant=constant,
        truncated_reasoning=truncated,
        truncated_reasoning_rate=truncated / n,
        human=human_agreement(views, labels),
        warnings=warnings,
    )


def reliability_blocks(
    views: Sequence[JudgmentView],
    *,
    human_labels: Mapping[str, Mapping[str, Any]] | None = None,
    **rules: Any,
) -> dict[str, MetricReliability]:
    """One reliability block per judged metric in ``views`` (in first-seen order).

    Args:
        views: judgment views of any number of metrics, judges and benchmarks.
        human_labels: metric -> unit id -> human label (see
            :func:`~ideaharness.metrics.reliability.panel.human_agreement`).
        rules: thresholds of the warning rules (``modal_threshold``, ``min_judgments``,
            ``min_pairs``, ``alpha``) passed to :func:`judge_reliability`.

    Returns:
        metric -> :class:`MetricReliability`; ``panel`` is set when several judges answered.

    Raises:
        ValueError: one metric's views mix kinds.
    """
    by_metric: dict[str, list[JudgmentView]] = defaultdict(list)
    for v in views:
        by_metric[v.metric].append(v)
    out: dict[str, MetricReliability] = {}
    for metric, members in by_metric.items():
        kinds = {v.kind for v in members}
        if len(kinds) > 1:
            raise ValueError(f"metric {metric!r} mixes kinds {sorted(kinds)}")
        by_judge: dict[str, list[JudgmentView]] = defaultdict(list)
        for v in members:
            by_judge[v.judge_model].append(v)
        labels = (human_labels or {}).get(metric)
        judges = {j: judge_reliability(vs, labels=labels, **rules) for j, vs in by_judge.items()}
        out[metric] = MetricReliability(
            metric=metric,
            kind=members[0].kind,
            judges=judges,
            panel=panel_agreement([v for v in members if not v.reask]),
            warnings=[w for jr in judges.values() for w in jr.warnings],
        )
    return out


def reliability_results(blocks: Mapping[str, MetricReliability]) -> dict[str, Any]:
    """The ``results.json`` form of :func:`reliability_blocks`: metric -> JSON object."""
    return {metric: block.model_dump(mode="json") for metric, block in blocks.items()}
