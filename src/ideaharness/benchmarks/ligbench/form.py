"""LigBench's form-only baselines and gold-step declarations (issue 32, Build (b)).

``ligbench-judge`` (``JudgeAccuracy.form_baselines``): each held-out pair of papers
(``ligbench/judge_pair``) has a gold answer, the paper with the higher venue-debiased reviewer
score per dimension (LigBench §5). A judge that prefers Idea A or Idea B by form alone
(:data:`~ideaharness.metrics.form_baseline.FORM_RULES` over the ``<idea_a>`` and ``<idea_b>``
texts of each recorded prompt) answers 1 (A better) or 0 on every dimension; its answers are
combined over the orders shown and scored as the run scores its judge (:func:`per_pair`, the
rule of ``JudgeAccuracy.aggregate``: a pair counts when every order parsed, its outcome is the mean
over the orders in A-first terms, a tie 0.5 is wrong). Chance: 0.5 (a coin per pair). A
position-only judge answers A in both orders, which averages to a tie: accuracy 0.

The LigBench run's own judged steps have no gold answer: ``ligbench/compare`` sets an idea
against a reference paper for its Elo score and ``ligbench/initial_score`` rates it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ideaharness.benchmarks import _form
from ideaharness.benchmarks.ligbench.steps import COMPARE_KEYS
from ideaharness.metrics.form_baseline import FormRule, form_choice, shown_items
from ideaharness.runs.scores import Record, Score

METRIC = "ligbench.judge_accuracy"
STEP_PAIR = "ligbench/judge_pair"
NOT_RECORDED = "recorded by the other LigBench run type only (the two share their judgment adapters)"
JUDGE_GOLD_STEPS = {STEP_PAIR: (METRIC,)}
JUDGE_NO_GOLD_STEPS = {"ligbench/compare": NOT_RECORDED, "ligbench/initial_score": NOT_RECORDED}
RUN_NO_GOLD_STEPS = {
    "ligbench/compare": "an idea against a reference paper: the outcomes move the idea's Elo score, no "
                        "answer is right or wrong",
    "ligbench/initial_score": "a 0-5 rating of an idea given calibration papers: no gold answer",
    STEP_PAIR: NOT_RECORDED,
}
CHANCE = 0.5


def _sides(name: str) -> bool:
    return name in ("idea_a", "idea_b")


def per_pair(answers: dict[str, dict[str, dict[str, float] | None]], labels: dict[str, dict[str, float]],
             orders: Sequence[str]) -> dict[str, dict[str, float]]:
    """Pair -> dimension -> 1 (correct) or 0, as ``JudgeAccuracy.aggregate`` counts a judge.

    Args:
        answers: pair -> order ("ab", "ba") -> the parsed answer ``{dimension: 1, 0.5 or 0}`` in
            the shown order's terms (None: unparsed).
        labels: pair -> dimension -> the human label in "ab" terms (1: the first paper is better,
            0: the second, 0.5: a tie, left out).
        orders: the orders the run shows (a pair counts only when each parsed).
    """
    out: dict[str, dict[str, float]] = {}
    for pair, got in answers.items():
        parsed = [p for o in orders if (p := got.get(o)) is not None]
        if pair not in labels or len(parsed) < len(orders):
            continue
        flipped = [p if o == "ab" else {d: 1.0 - v for d, v in p.items()}
                   for o, p in zip(orders, parsed, strict=True)]
        for dim in COMPARE_KEYS:
            label = labels[pair].get(dim)
            if label is None or label == 0.5:
                continue
            mean = sum(f[dim] for f in flipped) / len(flipped)
            out.setdefault(pair, {})[dim] = float(mean != 0.5 and (mean > 0.5) == (label == 1.0))
    return out


def judge_form_baselines(records: Sequence[Record], results: dict[str, Any], prompts: _form.Prompts,
                         orders: Sequence[str]) -> list[dict[str, Any]]:
    """Judge accuracy of each form-only rule, per dimension (module docstring)."""
    selected = set(map(str, (results.get("selection") or {}).get("ids") or []))
    pairs = [(iid, key, data) for step, iid, key, data in records
             if step == STEP_PAIR and (not selected or iid in selected)]
    labels = {iid: dict(data.get("human_preference") or {}) for iid, key, data in pairs if key == "ab"}
    prompts = _form.cached(prompts)
    by_rule: dict[str, list[Score]] = {}
    for rule in _form.rules():
        answers: dict[str, dict[str, dict[str, float] | None]] = {}
        for iid, key, data in pairs:
            texts = shown_items(_form.prompt_of(data, prompts), _sides)
            answers.setdefault(iid, {})[key] = _answer(rule, texts)
        by_rule[rule.name] = [Score(metric=METRIC, group=dim, instance_id=pair, value=value)
                              for pair, dims in sorted(per_pair(answers, labels, orders).items())
                              for dim, value in sorted(dims.items())]
    return _form.entries(STEP_PAIR, by_rule, [METRIC], lambda metric, group: CHANCE)


def _answer(rule: FormRule, texts: list[str]) -> dict[str, float] | None:
    if len(texts) != 2:
        return None
    first = form_choice(rule, texts) == 0
    return {dim: 1.0 if first else 0.0 for dim in COMPARE_KEYS}
