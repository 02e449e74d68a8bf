"""AI Idea Bench 2025: the LLM decomposition of a target paper and the digest of its inspirations.

Qiu et al. 2025 (arXiv 2504.14191). Where a data set gives no ground-truth motivation and experiment plan
(TOMATO-Chem), the judge model decomposes the target (research question/topic, background survey,
hypothesis) into an anonymised topic, a motivation and an experiment plan (template
``prompts/aiideabench_decompose.j2``); with ``digest_inspirations`` each inspiration paper's title and
abstract become an idea + experiment steps (``prompts/aiideabench_digest.j2``). The benchmark runs both as
recorded judge steps (:mod:`ideaharness.benchmarks.aiideabench.run`); the loader
(:mod:`ideaharness.data.aiideabench`) stays free of model calls.
"""

from __future__ import annotations

from typing import Any

from ideaharness.errors import ParseError
from ideaharness.llm.parsing import extract_json_object
from ideaharness.prompts import render
from ideaharness.schema import Instance, Reference

DECOMPOSITION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "topic": {"type": "string"},
        "motivation": {"type": "string"},
        "experiment_plan": {"type": "string"},
    },
    "required": ["topic", "motivation", "experiment_plan"],
}
DIGEST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"idea": {"type": "string"}, "experiment_steps": {"type": "string"}},
    "required": ["idea", "experiment_steps"],
}



def parse_decomposition(text: str) -> dict[str, str]:
    """Parse the decomposition reply: a JSON object with non-empty topic, motivation, experiment_plan."""
    obj = extract_json_object(text, required=("topic", "motivation", "experiment_plan"))
    out = {}
    for key in ("topic", "motivation", "experiment_plan"):
        value = obj[key]
        if isinstance(value, list):
            value = "\n".join(str(v) for v in value)
        if not isinstance(value, str) or not value.strip():
            raise ParseError(f"field {key!r} is empty or not text")
        out[key] = value.strip()
    return out


def parse_digest(text: str) -> dict[str, str]:
    """Parse an inspiration digest: JSON with non-empty ``idea`` and ``experiment_steps``."""
    obj = extract_json_object(text, required=("idea", "experiment_steps"))
    out = {}
    for key in ("idea", "experiment_steps"):
        value = obj[key]
        if isinstance(value, list):
            value = "\n".join(str(v) for v in value)
        if not isinstance(value, str) or not value.strip():
            raise ParseError(f"field {key!r} is empty or not text")
        out[key] = value.strip()
    return out


def decomposition_messages(instance: Instance) -> list[dict[str, str]]:
    """Rendered ``aiideabench_decompose`` prompt: title, question/topic, background, hypothesis."""
    gt = instance.ground_truth
    return render(
        "aiideabench_decompose",
        title=instance.target.title,
        question=instance.research_question or instance.topic or "",
        background=instance.background_survey or instance.target.abstract or "",
        hypothesis=gt.hypothesis or gt.idea or gt.fine_grained_hypothesis or "",
    )


def digest_messages(reference: Reference, topic: str) -> list[dict[str, str]]:
    """Rendered ``aiideabench_digest`` prompt for one inspiration paper (title + abstract)."""
    return render(
        "aiideabench_digest", topic=topic, title=reference.title, abstract=reference.abstract or ""
    )


def apply_decomposition(instance: Instance, parsed: dict[str, str], *, keep_topic: bool = True) -> Instance:
    """A copy of ``instance`` with the decomposed motivation and plan as ground truth.

    ``keep_topic`` keeps the dataset's own topic (TOMATO-Chem: the background question) and stores the
    LLM's anonymised topic in ``extra["decomposed_topic"]``.
    """
    gt = instance.ground_truth.model_copy(
        update={"motivation": parsed["motivation"], "experiment_plan": parsed["experiment_plan"]}
    )
    topic = (instance.topic or instance.research_question) if keep_topic else parsed["topic"]
    extra = {**instance.extra, "decomposed_topic": parsed["topic"]}
    return instance.model_copy(update={"ground_truth": gt, "topic": topic, "extra": extra})
