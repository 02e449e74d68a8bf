"""AI Idea Bench 2025's form-only baselines (``AIIdeaBench.form_baselines``; issue 32, Build (b)).

IMCQ (``imcq``) has a gold answer: the ground-truth option among four (Qiu et al. 2025, Eq. 2).
A judge that picks an option by form alone (:data:`~ideaharness.metrics.form_baseline.FORM_RULES`
over the ``<option_a>`` ... ``<option_d>`` texts in the order shown: the shortest, the fewest
words, the longest mean word length, the first, ...) is replayed on every recorded IMCQ prompt and
scored by :func:`~ideaharness.benchmarks.aiideabench.scores.aiideabench_scores`, so each baseline
is S_M on the headline's scale. Chance: 1/4, the hit rate of a content-blind deterministic judge
(it gives every idea of a question the same answer, so best-of-n does not raise it; the printed
``1 - (3/4)^n`` is an independent guesser's). I2I and I2T are ratings and the competition compares
systems: no gold answer, no baseline.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ideaharness.benchmarks import _form
from ideaharness.benchmarks.aiideabench.scores import aiideabench_scores
from ideaharness.metrics.choice import LETTERS
from ideaharness.metrics.form_baseline import form_choice, shown_items
from ideaharness.runs.scores import Record

METRIC = "aiideabench.imcq"
GOLD_STEPS = {"imcq": (METRIC,)}
NO_GOLD_STEPS = {
    "i2i": "a 1-5 rating of an idea against the ground-truth idea: no answer is right or wrong",
    "i2t": "a 1-5 rating of an idea against the topic: no answer is right or wrong",
    "compete": "a comparison between two systems' ideas: no gold answer",
}


def _option(name: str) -> bool:
    return name.startswith("option_")


def form_baselines(records: Sequence[Record], results: dict[str, Any],
                   prompts: _form.Prompts) -> list[dict[str, Any]]:
    """S_M of each form-only choice rule, per component (module docstring); none when the run did
    not compute IMCQ."""
    if not results.get("imcq"):
        return []
    prompts = _form.cached(prompts)
    by_rule = {}
    for rule in _form.rules():
        def choose(rec: Record, messages: list[dict[str, Any]], rule: Any = rule) -> str | None:
            texts = shown_items(messages, _option)
            return LETTERS[form_choice(rule, texts)] if 0 < len(texts) <= len(LETTERS) else None

        replayed = _form.replay(records, lambda step: step == "imcq", prompts, choose)
        scores = aiideabench_scores(replayed, results, ("imcq",))
        by_rule[rule.name] = [s for s in scores if s.metric == METRIC]
    return _form.entries("imcq", by_rule, [METRIC], lambda metric, group: 1 / len(LETTERS))
