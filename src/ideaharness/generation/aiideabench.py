"""AI Idea Bench 2025 baseline generator: ideas as motivation + experiment plan.

Qiu et al. 2025 (arXiv 2504.14191), Sec. 3: a system sees the (anonymised) topic and digests of the
target's inspiration papers and proposes ideas, each a motivation and an experiment plan. The
published baseline is AI-Scientist's idea prompt (with 3 reflection rounds); this baseline asks for
one idea per call as JSON (``title``, ``motivation``, ``experiment_plan``; template
``prompts/aiideabench_generate.j2``), n calls per instance distinguished by ``sample_index``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ideaharness.llm.judge import judge
from ideaharness.llm.parsing import check_text, extract_json_object
from ideaharness.llm.types import ChatModel
from ideaharness.prompts import render
from ideaharness.schema import Idea, Instance, Judgment, Provenance
from ideaharness.systems.contract import first_text, row_texts

GENERATOR_NAME = "aiideabench-baseline"
IDEA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "motivation": {"type": "string"},
        "experiment_plan": {"type": "string"},
    },
    "required": ["title", "motivation", "experiment_plan"],
}


def idea_text(motivation: str, experiment_plan: str, title: str | None = None) -> str:
    """Free-text rendering of an idea (``Idea.text``)."""
    head = f"Title: {title}\n" if title else ""
    return f"{head}Motivation: {motivation}\nExperiment plan: {experiment_plan}"


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(str(v) for v in value)
    return value if isinstance(value, str) else ""


MOTIVATION_MIN_WORDS = 8
"""The motivation is "the gap or problem you address and why your approach should work (2-4 sentences)"."""
PLAN_MIN_WORDS = 6
"""The experiment plan is "the concrete experiments, one step per line"."""


def parse_idea(text: str) -> dict[str, str]:
    """Parse one generated idea: JSON with ``motivation`` and ``experiment_plan`` that are real
    prose (:func:`~ideaharness.llm.parsing.check_text`: at least :data:`MOTIVATION_MIN_WORDS` /
    :data:`PLAN_MIN_WORDS` words, not whitespace, zero-width characters, punctuation, a refusal
    or a hedge).

    ``title`` is optional. AI-Scientist key names (``Motivation``, ``Experiment``) are accepted.

    Raises:
        ParseError: no JSON object, or a missing or degenerate motivation or experiment plan.
    """
    obj = extract_json_object(text)
    lowered = {str(k).lower().replace(" ", "_"): v for k, v in obj.items()}
    return idea_fields(lowered.get("motivation"), lowered.get("experiment_plan", lowered.get("experiment")),
                       lowered.get("title"))


def idea_fields(
    motivation: Any, experiment_plan: Any, title: Any = None, *,
    what: tuple[str, str] = ("the idea's motivation", "the idea's experiment plan"),
) -> dict[str, str]:
    """``{"title", "motivation", "experiment_plan"}`` with the degeneracy rules of :func:`parse_idea`
    (shared by a system's answer: :mod:`ideaharness.benchmarks.aiideabench.contract`); a list is
    joined one item a line. ``what``: the names the errors give the two fields.

    Raises:
        ParseError: a missing or degenerate motivation or experiment plan.
    """
    checked = check_text(_text(motivation), what[0], min_words=MOTIVATION_MIN_WORDS)
    plan = check_text(_text(experiment_plan), what[1], min_words=PLAN_MIN_WORDS)
    return {"title": _text(title).strip(), "motivation": checked, "experiment_plan": plan}


MOTIVATION_KEYS = ("motivation", "problem", "hypothesis", "abstract", "text")
"""Row fields read for ``motivation``, first non-empty wins; a row with both a ``problem`` and a
``motivation`` (ResearchAgent: the problem and its rationale) gives both, the problem first."""
PLAN_KEYS = ("experiment_plan", "experiments", "experiment", "method", "text")
"""Row fields read for ``experiment_plan``, first non-empty wins."""


def fields_from_row(row: dict[str, Any]) -> dict[str, Any]:
    """A converted idea row (the common vocabulary of :mod:`ideaharness.systems.converters`) as
    ``motivation``, ``experiment_plan``, ``title`` and ``system`` (AI Idea Bench's idea contract):
    each from the first non-empty of :data:`MOTIVATION_KEYS` / :data:`PLAN_KEYS`; a field the row
    cannot fill is left out."""
    out: dict[str, Any] = {}
    motivation = first_text(row, *MOTIVATION_KEYS)
    problem = first_text(row, "problem")
    if problem and motivation and problem != motivation and problem not in motivation:
        motivation = f"{problem}\n{motivation}"
    plan = first_text(row, *PLAN_KEYS)
    if motivation:
        out["motivation"] = motivation
    if plan:
        out["experiment_plan"] = plan
    out.update(row_texts(row, ("title", "system")))
    return out


def generation_messages(
    instance: Instance, inspirations: Sequence[str], *, topic: str | None = None
) -> list[dict[str, str]]:
    """Rendered generation prompt for an instance and its inspiration digests.

    ``topic``: the topic to show (the benchmark passes the anonymised one); default the instance's.
    """
    shown = topic if topic is not None else (instance.topic or instance.research_question or "")
    return render("aiideabench_generate", topic=shown, inspirations=list(inspirations))


async def generate_idea(
    model: ChatModel,
    instance: Instance,
    inspirations: Sequence[str],
    *,
    sample_index: int = 0,
    temperature: float = 0.7,
    max_tokens: int | None = 768,
    seed: int = 0,
) -> tuple[Idea | None, Judgment]:
    """Generate one idea for ``instance`` (the ``sample_index``-th of n).

    ``max_tokens``: the answer cap, tokens (AI Idea Bench's ``generation_max_tokens`` default; the
    model adds its reasoning budget); None sends no cap.

    Returns:
        (idea, judgment): idea is None when the reply never parsed (the judgment says why).
    """
    messages = generation_messages(instance, inspirations)
    result = await judge(
        model, messages, parse_idea, temperature=temperature, max_tokens=max_tokens, seed=seed,
        json_schema=IDEA_SCHEMA, sample_index=sample_index,
    )
    if not result.parse_ok:
        return None, result
    idea = idea_from_parsed(instance, result.parsed, model=model.model, prompt_hash=result.prompt_hash,
                            seed=seed, sample_index=sample_index)
    return idea, result


def idea_from_parsed(
    instance: Instance, parsed: dict[str, str], *, model: str | None, prompt_hash: str | None, seed: int,
    sample_index: int,
) -> Idea:
    """The :class:`Idea` of a parsed generation reply (:func:`parse_idea`); id ``<instance>#<k>``."""
    title = parsed.get("title") or None
    return Idea(
        id=f"{instance.id}#{sample_index}",
        instance_id=instance.id,
        title=title,
        text=idea_text(parsed["motivation"], parsed["experiment_plan"], title),
        motivation=parsed["motivation"],
        experiment_plan=parsed["experiment_plan"],
        provenance=Provenance(
            generator=GENERATOR_NAME, model=model, prompt_hash=prompt_hash, seed=seed,
            sample_index=sample_index,
        ),
    )
