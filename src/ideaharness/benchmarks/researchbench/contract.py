"""ResearchBench's idea contract: what a system is asked and must answer (issue 20).

A system replaces hypothesis *composition*: given a research question, its background survey and
inspiration papers, it answers one hypothesis, scored by the judge's matched score (0-5) against
the paper's own. One task per (instance, condition), step ``researchbench_generate``, key = the
condition, the run seed; ``sample_index`` 0 for ``one_step`` and ``j + 1`` for ``negative<j>`` (an
ideas file answers the conditions of an instance by its rows' ``sample_index``, or its rows in
order: the first row is the one-step hypothesis, the next ones the negatives):

* ``one_step`` (task ``composition``): the paper's ground-truth inspirations, exactly as the
  built-in one-step prompt (``prompts/researchbench_compose.j2``) shows them;
* ``negative<j>`` (task ``ranking`` with generated negatives, ``--ranking-negatives generated`` or
  ``auto`` without released negatives): ``inspirations_per_negative`` *non*-gold candidates of the
  paper's pool (seeded draw, :func:`~ideaharness.benchmarks.researchbench.ranking.negative_inspiration_sets`);
  the hypothesis is a ranking negative the judge compares with the gold one.

``inputs``: ``discipline``, ``question`` (the research question, else the target paper's title),
``survey`` (the background survey or None), ``inspirations`` (``[{"title", "abstract"}]``, in the
prompt's order) and ``condition``. The instance ids are the data's (``tomato-chem/0`` ... for the
bundled papers, the release's ``Chemistry/101000chem0001`` ...); ``ideaharness tasks export
researchbench`` lists them.

The answer: ``hypothesis`` (plus the envelope: ``instance_id``, optional ``title``, ``system``,
``provenance``, ``sample_index``), checked by the rules of a generated hypothesis
(:func:`~ideaharness.benchmarks.researchbench.composition.checked_hypothesis`: one paragraph of real
prose, at least 8 words and the published scorer's character floor, no refusal); ``to_parsed``
returns what :func:`~ideaharness.benchmarks.researchbench.composition.parse_hypothesis` returns for a
model's reply.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ideaharness.benchmarks.researchbench.composition import STEP_GENERATE, checked_hypothesis
from ideaharness.systems.contract import (
    IdeaAnswer,
    IdeaContract,
    first_text,
    joined_text,
    register_contract,
    row_texts,
)
from ideaharness.systems.task import GenerationTask

BENCHMARK = "researchbench"


class ResearchBenchAnswer(IdeaAnswer):
    """One hypothesis for one ResearchBench composition task."""

    hypothesis: str = Field(description="The research hypothesis as one paragraph that answers the research "
                            "question, naming the materials, methods or mechanisms involved and how the "
                            "inspirations are used (at least 8 words).")


def to_parsed(answer: IdeaAnswer, task: GenerationTask) -> dict[str, Any]:
    """The answer as :func:`~ideaharness.benchmarks.researchbench.composition.parse_hypothesis`
    parses a reply: ``{"hypothesis": str, "labelled": True}``.

    Raises:
        ParseError: a degenerate hypothesis (names the field).
    """
    assert isinstance(answer, ResearchBenchAnswer)
    return {"hypothesis": checked_hypothesis(answer.hypothesis, "field 'hypothesis'"), "labelled": True}


def from_row(row: dict[str, Any], task: GenerationTask) -> dict[str, Any]:
    """A converted idea row as this contract's answer fields: ``hypothesis`` from the row's
    ``hypothesis``, else its ``text``, else ``motivation`` and ``method`` joined (either alone when
    the other is missing); a row with none of them gives no ``hypothesis`` (the answer then fails
    the contract naming the field)."""
    out: dict[str, Any] = {}
    hypothesis = first_text(row, "hypothesis", "text") or joined_text(row, "motivation", "method", sep=" ")
    if hypothesis:
        out["hypothesis"] = hypothesis
    out.update(row_texts(row, ("title", "system")))
    return out


CONTRACT = register_contract(IdeaContract(
    benchmark=BENCHMARK, version=1, answer=ResearchBenchAnswer, to_parsed=to_parsed, from_row=from_row,
    group="one",
    description=("ResearchBench: one research hypothesis per task, composed from a research question, its "
                 "background survey and inspiration papers (condition one_step: the paper's ground-truth "
                 "inspirations; negative<j>: non-gold candidates, for the ranking's negatives). Scored by "
                 "the judge's matched score (0-5) against the paper's hypothesis and its key points."),
))


def composition_task(instance_id: str, condition: str, index: int = 0, *, discipline: str, question: str,
                     survey: str | None, inspirations: list[dict[str, Any]], seed: int) -> GenerationTask:
    """The task of one composition condition of an instance (inputs: what the one-step prompt shows);
    ``index``: its ``sample_index`` (0 for ``one_step``, ``j + 1`` for ``negative<j>``)."""
    return GenerationTask(
        benchmark=BENCHMARK, step=STEP_GENERATE, instance_id=instance_id, key=condition, sample_index=index,
        inputs={"discipline": discipline, "question": question, "survey": survey,
                "inspirations": [{"title": i.get("title"), "abstract": i.get("abstract")}
                                 for i in inspirations],
                "condition": condition},
        seed=seed)
