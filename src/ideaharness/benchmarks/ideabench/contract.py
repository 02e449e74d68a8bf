"""IdeaBench's idea contract: what a system is asked and must answer (issue 20).

One task per (target paper, scenario): step ``generate/<scenario>``, key ``""``, ``sample_index``
0, the run seed. ``inputs`` are exactly what the built-in generation prompt
(``prompts/ideabench_generate.j2``) is rendered from: ``domain`` (the instance's field, else
``"scientific"``), ``references`` (``id``, ``title``, ``abstract`` of the references shown, after the
scenario's selection, :func:`~.run.select_references`, the budget's
:func:`~.run.truncate_references` and the prompt budget's cut of over-long texts, which ends a cut
text with the prompt's truncation mark), ``n_ideas`` and ``scenario``.

The answer: ``ideas``, exactly ``n_ideas`` items ``{"title", "idea"}`` (plus the envelope:
``instance_id``, optional ``title``, ``system``, ``provenance``; optional ``scenario``, which must be
the task's). Each idea passes the rule of a generated idea (:func:`~.parsers.checked_idea`: real
prose of at least :data:`~.parsers.IDEA_MIN_WORDS` words, no refusal), and ``to_parsed`` returns
what :func:`~.parsers.parse_ideas` returns for a model's reply. A file holds the ideas of an
instance as one contract row (``ideas``) or one row per idea (``group="all"``: every row of the
instance whose ``scenario`` is the task's or unset, in file order).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ideaharness.benchmarks.ideabench.parsers import check_idea_count, checked_idea
from ideaharness.errors import ParseError
from ideaharness.systems.contract import IdeaAnswer, IdeaContract, field_text, joined_text, register_contract
from ideaharness.systems.task import GenerationTask

BENCHMARK = "ideabench"

TEXT_FIELDS = ("hypothesis", "abstract", "problem", "motivation", "method", "experiment_plan")
"""Row fields composed, in this order, into an idea's text when the row has no ``text``."""


class IdeaBenchIdea(BaseModel):
    """One idea of an IdeaBench answer."""

    model_config = ConfigDict(extra="forbid")

    title: str | None = Field(None, description="A short title.")
    idea: str = Field(description="The idea: a brief paragraph stating a hypothesis and how it could be "
                      "tested (at least 8 words).")
    provenance: dict[str, Any] | None = Field(None, description="Free-form: where this idea came from "
                                              "(the file adapter adds the row's source and line).")


class IdeaBenchAnswer(IdeaAnswer):
    """The ideas of one IdeaBench task (one target paper, one scenario)."""

    ideas: list[IdeaBenchIdea] = Field(description="Exactly n_ideas (the task's inputs) distinct ideas.")
    scenario: Literal["low", "high"] | None = Field(None, description="The task's scenario (optional; "
                                                     "when given it must be the task's).")


def _place(provenance: dict[str, Any] | None) -> str | None:
    """An idea's place in its file (``"line 3"``, ``"item 2"``, ``"key 'x', idea 2"``), if known."""
    prov = provenance or {}
    if prov.get("where"):
        return str(prov["where"])
    return None if prov.get("line") is None else f"line {prov['line']}"


def to_parsed(answer: IdeaAnswer, task: GenerationTask) -> list[dict[str, str]]:
    """The answer as :func:`~.parsers.parse_ideas` parses a reply: ``[{"title", "idea"}]``.

    Raises:
        ParseError: another scenario than the task's, a degenerate idea (naming ``ideas[i].idea``
            and, for a file of one row per idea, that idea's place) or not exactly ``n_ideas`` ideas.
    """
    assert isinstance(answer, IdeaBenchAnswer)
    scenario = task.inputs.get("scenario")
    if answer.scenario is not None and answer.scenario != scenario:
        raise ParseError(f"field 'scenario': {answer.scenario!r}, but the task is the {scenario!r} scenario")
    ideas = []
    for i, item in enumerate(answer.ideas):
        place = _place(item.provenance)
        at = f" ({place})" if place and place != _place(answer.provenance) else ""
        ideas.append(checked_idea(item.title or "", item.idea, f"field 'ideas[{i}].idea'{at}: idea {i + 1}"))
    try:
        check_idea_count(ideas, int(task.inputs["n_ideas"]))
    except ParseError as exc:
        raise ParseError(f"field 'ideas': {exc}") from None
    return ideas


def idea_text(row: dict[str, Any]) -> str:
    """A row's idea as one text: ``text``, else the row's :data:`TEXT_FIELDS` joined by blank lines,
    else its ``title`` (then too short an idea, a parse failure naming it), else ``""``."""
    return field_text(row.get("text")) or joined_text(row, *TEXT_FIELDS) or field_text(row.get("title")) or ""


def _where(row: dict[str, Any]) -> dict[str, Any] | None:
    """A row's place as an idea's provenance: ``source``, ``line`` and ``where`` (the converters'
    ``_where``: ``"line 3"``, ``"item 2"``, ``"key 'x', idea 2"``)."""
    if row.get("_line") is None and not row.get("_where"):
        return None
    out = {"source": row.get("_source"), "line": row.get("_line")}
    return {**out, "where": row["_where"]} if row.get("_where") else out


def from_rows(rows: list[dict[str, Any]], task: GenerationTask) -> dict[str, Any]:
    """Every converted row of an instance (the common vocabulary of
    :mod:`ideaharness.systems.converters`) as one answer: the rows whose ``scenario`` is the task's
    or unset, in order; a row with ``ideas`` (a contract row) gives its ideas, any other row one
    idea (:func:`idea_text`, its ``title``). Each idea keeps its row's place in ``provenance``."""
    scenario = task.inputs.get("scenario")
    ideas: list[Any] = []
    for row in rows:
        if row.get("scenario") not in (None, scenario):
            continue
        where = _where(row)
        if "ideas" in row:
            items = row["ideas"]
            if not isinstance(items, list):
                return {"ideas": items}  # fails the answer model, naming the field
            for item in items:
                item = {"idea": item} if isinstance(item, str) else item
                if isinstance(item, dict) and where and not item.get("provenance"):
                    item = {**item, "provenance": where}
                ideas.append(item)
        else:
            idea: dict[str, Any] = {"idea": idea_text(row)}
            if title := field_text(row.get("title")):
                idea["title"] = title
            if where:
                idea["provenance"] = where
            ideas.append(idea)
    out: dict[str, Any] = {"ideas": ideas}
    systems = {str(r["system"]) for r in rows if isinstance(r.get("system"), str) and r["system"].strip()}
    if len(systems) == 1:
        out["system"] = systems.pop()
    return out


def from_row(row: dict[str, Any], task: GenerationTask) -> dict[str, Any]:
    """One row as an answer (:func:`from_rows` of that row alone)."""
    return from_rows([row], task)


SCENARIOS = ("low", "high")


def row_keys(row: dict[str, Any]) -> tuple[tuple[Any, ...], ...]:
    """The tasks a row answers, for the ideas file's duplicate check: a contract row (``ideas``)
    answers its ``scenario``'s task, or every scenario's when it names none; a row of one idea is
    one idea among the instance's (no key: only an identical repeat of it is a duplicate)."""
    if "ideas" not in row:
        return ()
    scenario = row.get("scenario")
    return tuple(("ideas", s) for s in ((scenario,) if scenario in SCENARIOS else SCENARIOS))


def answer_keys(rows: list[dict[str, Any]]) -> list[tuple[tuple[Any, ...], ...]]:
    """:func:`row_keys` of each of an instance's rows."""
    return [row_keys(row) for row in rows]


CONTRACT = register_contract(IdeaContract(
    benchmark=BENCHMARK, version=1, answer=IdeaBenchAnswer, to_parsed=to_parsed, from_row=from_row,
    group="all", from_rows=from_rows, row_fields=frozenset({"idea", "text"}),
    answer_keys=answer_keys,
    description=("IdeaBench: n_ideas research ideas per task; a task is one target paper in one scenario "
                 "(low resource: k selected references; high: all of them), given the field and the "
                 "references' titles and abstracts (the target paper is not shown). Scored against the "
                 "target paper by BERTScore, the judge's overlap rating and the Insight Score ranking."),
))


def generation_task(instance_id: str, scenario: str, *, domain: str, references: list[dict[str, Any]],
                    n_ideas: int, seed: int) -> GenerationTask:
    """The task of one instance and scenario (inputs: what the generation prompt is rendered from)."""
    return GenerationTask(benchmark=BENCHMARK, step=f"generate/{scenario}", instance_id=instance_id, key="",
                          sample_index=0, inputs={"domain": domain, "references": references,
                                                  "n_ideas": n_ideas, "scenario": scenario}, seed=seed)
