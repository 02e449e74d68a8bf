"""LigBench's idea contract: what a system is asked and must answer (issue 20).

One task per (topic, sample k < ``ideas_per_topic``) and system, step ``ligbench/generate``,
``instance_id`` the topic's id ``t<NN>`` (``t00`` for the first topic of the run's list: our 11
:data:`~ideaharness.benchmarks.ligbench.config.DEFAULT_TOPICS` or the lines of ``--topics FILE``, in
order), ``key`` and ``sample_index`` k, the run seed. ``inputs``: ``{"topic": the topic text}``,
what the built-in generator's prompt (``prompts/ligbench_generate.j2``) shows. ``ideaharness tasks
export ligbench`` lists the tasks with their ids. The system's idea is recorded (and its scores
named) as ``<system name>::t<NN>::<k>``, the id form of a model's ideas, so runs pair on
``t<NN>::<k>``.

The answer: the three sections the generator's Markdown must have, ``problem``, ``method`` and
``experiment_design`` (plus the envelope: ``instance_id``, optional ``title``, ``system``,
``provenance``, ``sample_index``; and optional ``topic``, which when given must be the task's topic
text, so a file written for another topic list fails rather than scoring ideas under the wrong
topic). ``to_parsed`` writes them as that Markdown (``# title`` first when given) and returns what
:func:`~ideaharness.benchmarks.ligbench.config.parse_generated_idea` returns for a model's reply,
under the same rules (every section real prose of at least 3 words, the whole at least 20 words, no
refusal).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from ideaharness.benchmarks.ligbench.config import parse_generated_idea, topic_id
from ideaharness.errors import ParseError
from ideaharness.llm.parsing import check_text
from ideaharness.systems.contract import (
    IdeaAnswer,
    IdeaContract,
    field_text,
    first_text,
    register_contract,
    row_texts,
)
from ideaharness.systems.task import GenerationTask

BENCHMARK = "ligbench"
STEP = "ligbench/generate"
SECTIONS = (("problem", "Problem"), ("method", "Method"), ("experiment_design", "Experiment Design"))
"""(answer field, Markdown heading) of the generated idea's sections, in order."""


class LigBenchAnswer(IdeaAnswer):
    """One idea for one LigBench topic."""

    problem: str = Field(description="The problem and why current approaches fall short (at least 3 words).")
    method: str = Field(description="The proposed approach and what is new about it (at least 3 words).")
    experiment_design: str = Field(description="Datasets, baselines, metrics and the experiments that would "
                                   "test it (at least 3 words).")
    topic: str | None = Field(None, description="The task's topic text (optional; checked when given).")



def idea_markdown(problem: str, method: str, experiment_design: str, title: str | None = None) -> str:
    """The sections as the Markdown the generation prompt asks for."""
    head = f"# {title.strip()}\n\n" if title and title.strip() else ""
    return head + "\n\n".join(f"## {heading}\n{text.strip()}" for (_, heading), text in
                              zip(SECTIONS, (problem, method, experiment_design), strict=True))


def to_parsed(answer: IdeaAnswer, task: GenerationTask) -> str:
    """The answer as :func:`~ideaharness.benchmarks.ligbench.config.parse_generated_idea` parses a
    reply (the cleaned Markdown idea).

    Raises:
        ParseError: a degenerate section (names the field), the whole too short, or ``topic``
            not the task's topic.
    """
    assert isinstance(answer, LigBenchAnswer)
    expected = task.inputs.get("topic")
    if answer.topic is not None and expected is not None and answer.topic.split() != str(expected).split():
        raise ParseError(f"field 'topic': {answer.topic[:60]!r} is not the task's topic "
                         f"{str(expected)[:60]!r}")
    for field, _ in SECTIONS:
        check_text(getattr(answer, field), f"field {field!r}", min_words=3)
    return parse_generated_idea(idea_markdown(answer.problem, answer.method, answer.experiment_design,
                                              answer.title))


_HEADING = re.compile(r"^[ \t]*(?:#{1,4}[ \t]*|\*\*)?[ \t]*(problem|method|experiment(?:al)?[ \t]+design)\b"
                      r"[ \t:*]*$", re.IGNORECASE | re.MULTILINE)


def sections_of(text: str) -> dict[str, str]:
    """The ``## Problem`` / ``## Method`` / ``## Experiment Design`` sections of a Markdown idea
    (the headings :func:`~ideaharness.benchmarks.ligbench.config.parse_generated_idea` reads), by
    answer field; a section not found is left out."""
    found = list(_HEADING.finditer(text))
    out: dict[str, str] = {}
    for i, m in enumerate(found):
        word = m.group(1).lower()
        field = "experiment_design" if word.startswith("experiment") else word
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        body = text[m.end():end].strip()
        if body:
            out.setdefault(field, body)
    return out


ROW_KEYS: dict[str, tuple[str, ...]] = {
    "problem": ("problem", "motivation", "hypothesis"),
    "method": ("method",),
    "experiment_design": ("experiment_design", "experiment_plan", "experiments", "experiment"),
}
"""Row fields read for each answer field, first non-empty wins; a row with a Markdown ``text``
holding the sections fills the fields it lacks from them."""


def from_row(row: dict[str, Any], task: GenerationTask) -> dict[str, Any]:
    """A converted idea row (the common vocabulary of :mod:`ideaharness.systems.converters`) as
    this contract's answer fields; a field the row cannot fill is left out (the answer then fails
    the contract naming it)."""
    out: dict[str, Any] = {}
    for field, keys in ROW_KEYS.items():
        text = first_text(row, *keys)
        if text:
            out[field] = text
    free = field_text(row.get("text"))
    if free:
        for field, body in sections_of(free).items():
            out.setdefault(field, body)
    out.update(row_texts(row, ("title", "system", "topic")))
    return out


CONTRACT = register_contract(IdeaContract(
    benchmark=BENCHMARK, version=1, answer=LigBenchAnswer, to_parsed=to_parsed, from_row=from_row,
    group="one",
    description=("LigBench: one research idea (problem, method, experiment design) per task; a task is the "
                 "k-th idea for one research topic (instance id t00, t01, ... in the order of the run's "
                 "topics). The idea is formalised and scored by the judge: rating, contribution and "
                 "soundness by one-sided Elo against venue-debiased reference papers, novelty blended with "
                 "literature similarity."),
))


def generation_task(index: int, k: int, *, topic: str, seed: int) -> GenerationTask:
    """The task of the k-th idea for the ``index``-th topic (inputs: what the generation prompt shows)."""
    return GenerationTask(benchmark=BENCHMARK, step=STEP, instance_id=topic_id(index), key=str(k),
                          sample_index=k, inputs={"topic": topic}, seed=seed)
