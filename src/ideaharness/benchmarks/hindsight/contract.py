"""HindSight's idea contract: what a system is asked and must answer (issue 20).

One task per (topic, k), ``k < ideas_per_topic``: step ``generate``, key ``str(k)``,
``sample_index`` k, the seed the built-in generator gets for that call
(``derive_seed(seed, topic id, k) % 2**31``). ``inputs`` are what the built-in prompt
(``prompts/hindsight_generate.j2``) is rendered from: ``topic``, ``cutoff`` (T, YYYY-MM-DD: the
system must use no literature published after it) and ``literature`` (the topic's papers up to T,
``{"title", "abstract", "year", "publication_date"}`` each; empty under ``--grounding none``).

The answer: ``idea`` (one paragraph: the research question, the approach and how it would be
tested) and optionally ``key_phrases`` (the phrases a literature search for the idea would use;
without them the run derives queries from the title and the text), plus the envelope
(``instance_id`` = the topic id, ``title``, ``system``, ``provenance``, ``sample_index``, which
must be the task's when given). ``to_parsed`` returns what :func:`~.parsers.parse_idea` returns for
a model's reply (``{"title", "idea", "key_phrases"}``), so a system's idea is matched and judged by
the same code.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ideaharness.benchmarks.hindsight.parsers import idea_fields
from ideaharness.errors import ParseError
from ideaharness.systems.contract import (
    IdeaAnswer,
    IdeaContract,
    first_text,
    joined_text,
    register_contract,
    row_texts,
)
from ideaharness.systems.task import GenerationTask

BENCHMARK = "hindsight"
STEP = "generate"
TEXT_FIELDS = ("idea", "text", "abstract", "hypothesis", "problem", "motivation", "method", "experiment_plan")
"""Row fields composed, in this order, into the idea (the first of ``idea``/``text`` alone when set)."""


class HindsightAnswer(IdeaAnswer):
    """One research idea for one HindSight task (a topic, the k-th idea)."""

    idea: str = Field(description="The research idea in one paragraph: the research question, the approach "
                      "and how it would be tested (at least 20 words; the built-in prompt asks for 60 to "
                      "200).")
    key_phrases: list[str] | None = Field(None, description="Optional: 1 to 5 short phrases (at most 8 words "
                                          "each) a literature search for this idea would use.")


def to_parsed(answer: IdeaAnswer, task: GenerationTask) -> dict[str, Any]:
    """The answer as :func:`~.parsers.parse_idea` parses a reply: ``{"title", "idea", "key_phrases"}``.

    Raises:
        ParseError: a degenerate idea or key phrases (naming the field), or a ``sample_index``
            other than the task's.
    """
    assert isinstance(answer, HindsightAnswer)
    if answer.sample_index is not None and answer.sample_index != task.sample_index:
        raise ParseError(f"field 'sample_index': {answer.sample_index}, but the task is idea "
                         f"{task.sample_index} of the topic")
    return idea_fields(answer.title, answer.idea, answer.key_phrases)


def from_row(row: dict[str, Any], task: GenerationTask) -> dict[str, Any]:
    """A converted idea row (:mod:`ideaharness.systems.converters` vocabulary) as this contract's
    answer fields: ``idea`` (the row's ``idea`` or ``text``, else its :data:`TEXT_FIELDS` joined by
    blank lines, else ``""``), its ``key_phrases`` or ``keywords`` when a list, ``title`` and ``system``."""
    idea = first_text(row, "idea", "text") or joined_text(row, *TEXT_FIELDS[2:])
    out: dict[str, Any] = {"idea": idea, **row_texts(row, ("title", "system"))}
    phrases = row.get("key_phrases", row.get("keywords"))
    if isinstance(phrases, list) and phrases:
        out["key_phrases"] = [str(p) for p in phrases]
    return out


CONTRACT = register_contract(IdeaContract(
    benchmark=BENCHMARK, version=1, answer=HindsightAnswer, to_parsed=to_parsed, from_row=from_row,
    group="one",
    description=("HindSight: one research idea per task; a task is the k-th of ideas_per_topic ideas on one "
                 "topic, with the topic's literature published up to its knowledge cutoff T (inputs.cutoff). "
                 "Scored by what happened next: whether a paper published in the 30 months after T carries "
                 "the idea out (embedding similarity, then an LLM match judgment), and that paper's realised "
                 "impact (citations normalised by field and age)."),
))


def generation_task(topic_id: str, k: int, *, inputs: dict[str, Any], seed: int) -> GenerationTask:
    """The task of the k-th idea on a topic (``inputs``: what the built-in prompt is rendered from)."""
    return GenerationTask(benchmark=BENCHMARK, step=STEP, instance_id=topic_id, key=str(k), sample_index=k,
                          inputs=inputs, seed=seed)
