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
from ideaharness.llm.parsing import check_text, extract_json_object
from ideaharness.prompts import render
from ideaharness.schema import Instance, Paper, Reference

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



_TEXT_MIN_WORDS = {"topic": 5, "motivation": 8, "experiment_plan": 6, "idea": 8, "experiment_steps": 6}


def _text_fields(text: str, keys: tuple[str, ...]) -> dict[str, str]:
    obj = extract_json_object(text, required=keys)
    out = {}
    for key in keys:
        value = obj[key]
        if isinstance(value, list):
            value = "\n".join(str(v) for v in value)
        if not isinstance(value, str):
            raise ParseError(f"field {key!r} is not text")
        out[key] = check_text(value, f"field {key!r}", min_words=_TEXT_MIN_WORDS[key])
    return out


def parse_decomposition(text: str) -> dict[str, str]:
    """Parse the decomposition reply: a JSON object whose topic, motivation and experiment_plan
    are real prose (:func:`~ideaharness.llm.parsing.check_text`).

    Raises:
        ParseError: a field missing, not text, or degenerate (empty, punctuation, refusal ...).
    """
    return _text_fields(text, ("topic", "motivation", "experiment_plan"))


def parse_digest(text: str) -> dict[str, str]:
    """Parse an inspiration digest: JSON whose ``idea`` and ``experiment_steps`` are real prose.

    Raises:
        ParseError: a field missing, not text, or degenerate.
    """
    return _text_fields(text, ("idea", "experiment_steps"))


def decomposition_messages(instance: Instance) -> list[dict[str, str]]:
    """Rendered ``aiideabench_decompose`` prompt: title, question/topic, background, hypothesis."""
    gt = instance.ground_truth
    return render(
        "aiideabench_decompose",
        title=instance.target.title,
        question=instance.research_question or instance.topic or "",
        background=instance.background_survey or instance.target.abstract or "",
        hypothesis=gt.hypothesis or gt.idea or gt.fine_grained_hypothesis or "",
        abstract="",
    )


def paper_decomposition_messages(paper: Paper) -> list[dict[str, str]]:
    """The same ``aiideabench_decompose`` prompt for any paper known by title and abstract (an
    IMCQ distractor), so that its motivation and plan take the ground truth's form."""
    return render("aiideabench_decompose", title=paper.title, question="", background="", hypothesis="",
                  abstract=paper.abstract or "")


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
