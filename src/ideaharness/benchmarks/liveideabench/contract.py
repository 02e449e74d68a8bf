"""LiveIdeaBench's idea contract: what a system is asked and must answer (issue 20).

One task per (keyword, k), ``k < ideas_per_keyword``: step ``idea``, key ``str(k)``,
``sample_index`` k, the seed the built-in generator gets for that call
(``derive_seed(seed, keyword, k) % 2**31``). ``inputs`` are what the built-in idea prompt
(``prompts/liveideabench_idea.j2``) is rendered from: ``keyword`` and ``protocol`` (``v2``/``v1``).
The v2 fallback prompt is not sent to a system: an answer that is no idea is a parse failure.

The answer: ``idea``, one short paragraph (plus the envelope: ``instance_id`` = the keyword, optional
``title``, ``system``, ``provenance``, ``sample_index``, which must be the task's when given). It
passes the rule of a generated idea (:func:`~.parsers.parse_idea`: real prose of at least
:data:`~.parsers.IDEA_MIN_WORDS` words, no refusal, complete sentences), and ``to_parsed`` returns
what :func:`~.parsers.parse_idea` returns for a model's reply (``{"idea", "words"}``, cleaned).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ideaharness.benchmarks.liveideabench.parsers import parse_idea
from ideaharness.errors import ParseError
from ideaharness.systems.contract import (
    IdeaAnswer,
    IdeaContract,
    field_text,
    first_text,
    joined_text,
    register_contract,
)
from ideaharness.systems.task import GenerationTask

BENCHMARK = "liveideabench"
STEP = "idea"

TEXT_FIELDS = ("hypothesis", "abstract", "problem", "motivation", "method", "experiment_plan")
"""Row fields composed, in this order, into the idea when the row has neither ``idea`` nor ``text``."""


class LiveIdeaBenchAnswer(IdeaAnswer):
    """One idea for one LiveIdeaBench task (a keyword, the k-th idea)."""

    idea: str = Field(description="The scientific idea on the keyword: one short paragraph (the prompt asks "
                      "for at most 100 words) of complete sentences, at least 5 words.")


def to_parsed(answer: IdeaAnswer, task: GenerationTask) -> dict[str, object]:
    """The answer as :func:`~.parsers.parse_idea` parses a reply: ``{"idea", "words"}``.

    Raises:
        ParseError: a degenerate idea (naming the field ``idea``), or a ``sample_index`` other than
            the task's.
    """
    assert isinstance(answer, LiveIdeaBenchAnswer)
    if answer.sample_index is not None and answer.sample_index != task.sample_index:
        raise ParseError(f"field 'sample_index': {answer.sample_index}, but the task is idea "
                         f"{task.sample_index} of the keyword")
    try:
        return parse_idea(answer.idea)
    except ParseError as exc:
        raise ParseError(f"field 'idea': {exc}") from None


def idea_text(row: dict[str, Any]) -> str:
    """A row's idea as one text: ``idea``, else ``text``, else the row's :data:`TEXT_FIELDS`
    joined by blank lines, else its ``title`` (then too short an idea, a parse failure), else ``""``."""
    return (first_text(row, "idea", "text") or joined_text(row, *TEXT_FIELDS)
            or field_text(row.get("title")) or "")


def from_row(row: dict[str, Any], task: GenerationTask) -> dict[str, Any]:
    """A converted idea row (the common vocabulary of :mod:`ideaharness.systems.converters`) as this
    contract's answer fields: ``idea`` (:func:`idea_text`), and the row's ``title`` and ``system``."""
    out: dict[str, Any] = {"idea": idea_text(row)}
    for key in ("title", "system"):
        if text := field_text(row.get(key)):
            out[key] = text
    return out


CONTRACT = register_contract(IdeaContract(
    benchmark=BENCHMARK, version=1, answer=LiveIdeaBenchAnswer, to_parsed=to_parsed, from_row=from_row,
    group="one",
    description=("LiveIdeaBench: one short scientific idea per task; a task is the k-th of "
                 "ideas_per_keyword ideas on one keyword (the keyword is all the generator is given). "
                 "Scored by a judge panel on originality, feasibility and clarity (v2), fluency between "
                 "a keyword's ideas, and flexibility over keywords."),
))


def generation_task(keyword: str, k: int, *, protocol: str, seed: int) -> GenerationTask:
    """The task of the k-th idea on ``keyword`` (inputs: what the idea prompt is rendered from)."""
    return GenerationTask(benchmark=BENCHMARK, step=STEP, instance_id=keyword, key=str(k), sample_index=k,
                          inputs={"keyword": keyword, "protocol": protocol}, seed=seed)
