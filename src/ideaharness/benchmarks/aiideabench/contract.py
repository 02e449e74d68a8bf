"""AI Idea Bench 2025's idea contract: what a system is asked and must answer (issue 20).

One task per (instance, k), ``k < n_ideas``, step ``generate``, key ``str(k)``, ``sample_index`` k,
the run seed. ``inputs`` are exactly what the built-in generator's prompt
(``prompts/aiideabench_generate.j2``, :func:`~ideaharness.generation.aiideabench.generation_messages`)
is rendered from: ``topic`` (the anonymised topic: the decomposition's, or the data's own topic
under ``parity`` or for data with their own ground truth; :mod:`.blinding`) and ``inspirations``
(the inspiration papers' digests with ``digest_inspirations``, else their title and abstract).

The answer: ``motivation`` and ``experiment_plan`` (plus the envelope: ``instance_id``, optional
``title``, ``system``, ``provenance``, ``sample_index``). It is checked by the same rules as a
generated idea (:func:`~ideaharness.generation.aiideabench.idea_fields`: at least 8 words of
motivation and 6 of plan, real prose, no refusal); ``to_parsed`` returns what
:func:`~ideaharness.generation.aiideabench.parse_idea` returns for a model's reply.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ideaharness.generation.aiideabench import fields_from_row, idea_fields
from ideaharness.systems.contract import IdeaAnswer, IdeaContract, register_contract
from ideaharness.systems.task import GenerationTask

BENCHMARK = "aiideabench"
STEP = "generate"


class AIIdeaBenchAnswer(IdeaAnswer):
    """One idea for one AI Idea Bench task."""

    motivation: str = Field(description="The gap or problem the idea addresses and why the approach "
                            "should work (2-4 sentences, at least 8 words).")
    experiment_plan: str = Field(description="The concrete experiments, one step per line (at least "
                                 "6 words).")


def to_parsed(answer: IdeaAnswer, task: GenerationTask) -> dict[str, str]:
    """The answer as :func:`~ideaharness.generation.aiideabench.parse_idea` parses a reply.

    Raises:
        ParseError: a degenerate motivation or experiment plan (names the field).
    """
    assert isinstance(answer, AIIdeaBenchAnswer)
    return idea_fields(answer.motivation, answer.experiment_plan, answer.title,
                       what=("field 'motivation'", "field 'experiment_plan'"))


def from_row(row: dict[str, Any], task: GenerationTask) -> dict[str, Any]:
    """A converted idea row (the common vocabulary of :mod:`ideaharness.systems.converters`) as
    this contract's answer fields (:func:`~ideaharness.generation.aiideabench.fields_from_row`);
    a field the row cannot fill is left out (the answer then fails the contract naming it)."""
    return fields_from_row(row)


CONTRACT = register_contract(IdeaContract(
    benchmark=BENCHMARK, version=1, answer=AIIdeaBenchAnswer, to_parsed=to_parsed, from_row=from_row,
    group="one",
    description=("AI Idea Bench 2025: one idea (motivation and experiment plan) per task; a task is the "
                 "k-th of n_ideas ideas for one instance, given the anonymised topic and the inspiration "
                 "papers' digests. Scored by IMCQ, I2I, I2T against the target paper, literature novelty "
                 "and feasibility, and the competition between systems."),
))


def generation_task(
    instance_id: str, k: int, *, topic: str, inspirations: list[str], seed: int
) -> GenerationTask:
    """The task of the k-th idea of an instance (inputs: what the generation prompt shows)."""
    return GenerationTask(benchmark=BENCHMARK, step=STEP, instance_id=instance_id, key=str(k), sample_index=k,
                          inputs={"topic": topic, "inspirations": list(inspirations)}, seed=seed)
