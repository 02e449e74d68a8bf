"""MLR-Bench's idea contract: the two generation stages a system answers (issue 20).

One contract, the stage in the task: per workshop task (instance id = the task id, e.g.
``iclr2023_bands``), step ``idea`` (key ``""``) with ``inputs = {"stage": "idea", "task": <the
workshop call, Markdown, unchanged>}``, then (``--stage proposal``) step ``proposal`` with
``inputs = {"stage": "proposal", "task": ..., "idea": <the idea the proposal develops: the same
system's parsed idea>}``; seed ``derive_seed(run seed, task id, stage) % 2**31`` as for a model.

The answer holds the stage's text in ``text`` (idea stage: title, motivation, main idea, at most
200 words asked; proposal stage: about 2,000 words asked), plus the envelope
(``instance_id``, ``title``, ``system``, ``provenance``; ``provenance.model``, when given, names the
model that wrote it, for the self-preference check). An ideas file's rows of an instance answer
its two tasks (:func:`stage_row`: a row's ``stage``, MLR-Bench's own ``idea`` / ``proposal``
fields, or the order idea then proposal). It is checked by the same rules as a
generated text (:func:`~.parsers.parse_idea`, :func:`~.parsers.parse_proposal`: real prose, 30-1200
words for an idea, 100-8000 for a proposal); ``to_parsed`` returns what those parsers return.
A ``title`` given beside a text without a ``Title:`` line is put at its head, as the prompt asks.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ideaharness.benchmarks.mlrbench.parsers import (
    IDEA_MAX_WORDS,
    IDEA_MIN_WORDS,
    PROPOSAL_MAX_WORDS,
    PROPOSAL_MIN_WORDS,
    title_of,
)
from ideaharness.errors import ParseError
from ideaharness.llm.parsing import check_text
from ideaharness.systems.contract import IdeaAnswer, IdeaContract, first_text, register_contract
from ideaharness.systems.task import GenerationTask

BENCHMARK = "mlrbench"
_BOUNDS = {"idea": (IDEA_MIN_WORDS, IDEA_MAX_WORDS), "proposal": (PROPOSAL_MIN_WORDS, PROPOSAL_MAX_WORDS)}


class MLRBenchAnswer(IdeaAnswer):
    """The text of one MLR-Bench stage for one workshop task (the stage ``inputs.stage`` names)."""

    text: str = Field(description="The stage's text, at least 100 words for a proposal, 30 for an idea. "
                      "Stage 'idea': one research idea for the workshop call (inputs.task) in three "
                      "labelled parts, Title, Motivation, Main Idea (at most 200 words asked, 1200 "
                      "accepted). Stage 'proposal': the idea in inputs.idea developed into a proposal of "
                      "about 2,000 words: Title, Introduction, Methodology, Expected Outcomes & Impact "
                      "(8000 words accepted).")


def stage_of(task: GenerationTask) -> str:
    """The task's stage, ``"idea"`` or ``"proposal"`` (``inputs.stage``, else the step)."""
    stage = str(task.inputs.get("stage") or task.step)
    if stage not in _BOUNDS:
        raise ParseError(f"task {task.task_id}: unknown MLR-Bench stage {stage!r}")
    return stage


def to_parsed(answer: IdeaAnswer, task: GenerationTask) -> dict[str, Any]:
    """The answer as :func:`~.parsers.parse_idea` / :func:`~.parsers.parse_proposal` parse a reply:
    ``{<stage>: text, "title": str | None, "words": int}``.

    Raises:
        ParseError: ``text`` is not prose of the stage's length (names the field).
    """
    assert isinstance(answer, MLRBenchAnswer)
    stage = stage_of(task)
    low, high = _BOUNDS[stage]
    checked = check_text(answer.text, f"field 'text' ({stage})", min_words=low, max_words=high)
    title = title_of(checked)
    if title is None and answer.title and answer.title.strip():
        title = answer.title.strip()
        checked = f"Title: {title}\n{checked}"
    return {stage: checked, "title": title, "words": len(checked.split())}


def from_row(row: dict[str, Any], task: GenerationTask) -> dict[str, Any]:
    """A converted row as this contract's answer (``text``): the stage's own field (``idea`` /
    ``proposal``, as MLR-Bench's ``--ideas`` files hold them), else ``text``; else, for the idea
    stage, the common vocabulary in the prompt's three parts (Title; Motivation: ``motivation`` or
    ``problem``; Main Idea: ``method``, ``hypothesis``, ``experiment_plan`` or ``abstract``). A
    row without the stage's text leaves it out (that task is then a parse failure naming the
    field). A row's ``model`` (who wrote it) goes into ``provenance``."""
    stage = stage_of(task)
    out: dict[str, Any] = {}
    title = first_text(row, "title")
    other_stage = first_text(row, *(set(_BOUNDS) - {stage}))
    text = first_text(row, stage) or (None if other_stage else first_text(row, "text"))
    if text is None and stage == "idea":
        motivation = first_text(row, "motivation", "problem")
        main = first_text(row, "method", "hypothesis", "experiment_plan", "abstract")
        parts = [f"Title: {title}" if title else "", f"Motivation: {motivation}" if motivation else "",
                 f"Main Idea: {main}" if main else ""]
        text = "\n".join(p for p in parts if p) if motivation or main else None
    if text is not None:
        out["text"] = text
    if title:
        out["title"] = title
    if first_text(row, "system"):
        out["system"] = first_text(row, "system")
    model = row.get("model")
    if isinstance(model, str) and model.strip():
        out["provenance"] = {**(row.get("provenance") or {}), "model": model.strip()}
    return out


STAGE_ROW = {"idea": 0, "proposal": 1}
"""Position of a stage's row among an instance's rows that name no stage (``tasks export``'s order:
the idea task, then the proposal task)."""


def stage_row(rows: list[dict[str, Any]], stage: str) -> dict[str, Any] | None:
    """The row of an instance that answers ``stage``: one whose ``stage`` is it; else one holding
    the stage's own field (``idea`` / ``proposal``: MLR-Bench's own format, one row for both
    stages); else, among rows with neither, the first for the idea and the second for the
    proposal (answers to ``tasks export``'s idea tasks, then its proposal tasks)."""
    marked = [r for r in rows if r.get("stage") == stage]
    if marked:
        return marked[0]
    own = [r for r in rows if "stage" not in r and first_text(r, stage)]
    if own:
        return own[0]
    plain = [r for r in rows if "stage" not in r and not first_text(r, "idea", "proposal")]
    index = STAGE_ROW[stage]
    return plain[index] if len(plain) > index else None


def from_rows(rows: list[dict[str, Any]], task: GenerationTask) -> dict[str, Any]:
    """The answer of a task from its instance's rows: :func:`from_row` of :func:`stage_row`
    (nothing when no row answers the stage: the answer then lacks ``text``, named)."""
    row = stage_row(rows, stage_of(task))
    return from_row(row, task) if row is not None else {}


def answer_keys(rows: list[dict[str, Any]]) -> list[tuple[tuple[Any, ...], ...]]:
    """Per row of one instance (file order), the stages it answers, for the ideas file's duplicate
    check (:func:`stage_row`'s rule): its ``stage``; else each stage whose own field (``idea`` /
    ``proposal``) it holds; else the stage of its position among the rows with neither
    (:data:`STAGE_ROW`: idea, proposal, then idea again for a third row: a second run appended)."""
    stages = list(STAGE_ROW)
    out: list[tuple[tuple[Any, ...], ...]] = []
    plain = 0
    for row in rows:
        if isinstance(row.get("stage"), str):
            out.append((("stage", row["stage"]),))
        elif own := tuple(("stage", stage) for stage in stages if first_text(row, stage)):
            out.append(own)
        else:
            out.append((("stage", stages[plain % len(stages)]),))
            plain += 1
    return out


CONTRACT = register_contract(IdeaContract(
    benchmark=BENCHMARK, version=1, answer=MLRBenchAnswer, to_parsed=to_parsed, from_row=from_row,
    group="all", from_rows=from_rows, row_fields=frozenset({"idea", "proposal", "stage"}),
    answer_keys=answer_keys,
    description=("MLR-Bench (idea and proposal stages): per workshop call (inputs.task), a research idea "
                 "(inputs.stage 'idea'), then a proposal developing that idea (inputs.stage 'proposal', "
                 "inputs.idea the idea); the answer's 'text' is the stage's text. Each is reviewed by LLM "
                 "judges on the published 1-10 rubric."),
))


def generation_task(task_id: str, stage: str, *, call: str, idea: str | None, seed: int) -> GenerationTask:
    """The task of one stage of one workshop task (inputs: what the stage's prompt shows)."""
    inputs: dict[str, Any] = {"stage": stage, "task": call}
    if stage == "proposal":
        inputs["idea"] = idea
    return GenerationTask(benchmark=BENCHMARK, step=stage, instance_id=task_id, key="", sample_index=0,
                          inputs=inputs, seed=seed)
