"""IdeaBench's form-only baselines (``IdeaBench.form_baselines``; issue 32, Build (b)).

The Insight Score ranking (``rank/<scenario>/<indicator>``) has a gold answer: the target paper's
idea among the n generated ideas (Guo et al. 2024, Sec. 3.3). A judge that ranks the shown ideas
by form alone (:data:`~ideaharness.metrics.form_baseline.FORM_RULES`: shortest first, longest
first, fewest words first, ..., in the order shown, in reverse) is replayed on every recorded
ranking prompt (the ``<idea>`` texts in the order shown) and scored by
:func:`~ideaharness.benchmarks.ideabench.scores.ideabench_scores`, so each baseline is an
Insight Score on the headline's scale. Chance: 0.5, the expected ``(r - 1)/n`` of a target whose
rank is uniform over the n + 1 places (a form-blind judge under balanced positions).
The overlap rating has no gold answer (a 1-10 rating of similarity): no baseline applies.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ideaharness.benchmarks import _form
from ideaharness.benchmarks.ideabench.scores import ideabench_scores
from ideaharness.metrics.form_baseline import form_order, shown_items
from ideaharness.runs.scores import Record

METRIC = "ideabench.insight_score"
GOLD_STEPS = {"rank/": (METRIC,)}
NO_GOLD_STEPS = {"overlap/": "a 1-10 rating of how much the best idea overlaps the target: no answer "
                             "is right or wrong"}
CHANCE = 0.5


def form_baselines(records: Sequence[Record], results: dict[str, Any],
                   prompts: _form.Prompts) -> list[dict[str, Any]]:
    """The Insight Score of each form-only ranking rule, per scenario/indicator (module docstring)."""
    prompts = _form.cached(prompts)
    by_rule = {}
    for rule in _form.rules():
        def ranking(rec: Record, messages: list[dict[str, Any]], rule: Any = rule) -> list[str] | None:
            labels = list(rec[3].get("labels") or [])
            texts = shown_items(messages, "idea")
            if not labels or len(texts) != len(labels):
                return None
            return [labels[i] for i in form_order(rule, texts)]

        replayed = _form.replay(records, lambda step: step.startswith("rank/"), prompts, ranking)
        by_rule[rule.name] = [s for s in ideabench_scores(replayed, results) if s.metric == METRIC]
    out = _form.entries("rank/", by_rule, [METRIC], lambda metric, group: CHANCE)
    for entry in out:  # the group is "<scenario>/<indicator>": the step ranked
        entry["step"] = f"rank/{entry['group']}"
    return out
