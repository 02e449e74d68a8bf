"""Judgment views: the one normalised shape every reliability figure is computed from.

A *view* reads one recorded LLM judgment (``records/<step>.jsonl``, see
:mod:`ideaharness.runs.store`) as what a reliability analysis needs: who judged, what kind of
answer it is, the answer in a benchmark-independent form, the order in which the items were shown,
and which judgments ask the same question (two orders, a permuted re-ask, other judges).
Adapters (:mod:`ideaharness.metrics.reliability.adapters`) build views; nothing here writes.

Normalised ``value`` per ``kind`` (None whenever ``parse_ok`` is False):

* ``pairwise``: the outcome for the item shown first, 1.0 (first better), 0.5 (tie / "equal") or
  0.0 (second better); ``positions`` has the two items in the order shown.
* ``ranking``: tuple of item ids, best first (a permutation of ``positions``).
* ``rating``: a float on the step's scale.
* ``choice``: tuple of the chosen 0-based positions (one for a multiple-choice question, several
  for a selection such as ResearchBench's screening window).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["pairwise", "ranking", "rating", "choice"]
KINDS: tuple[Kind, ...] = ("pairwise", "ranking", "rating", "choice")

REASK_SUFFIX = "#reask"
"""Key suffix of a consistency re-ask (:func:`ideaharness.metrics.reliability.reask.reask_key`)."""


@dataclass(frozen=True)
class JudgmentView:
    """One judgment, as the reliability metrics read it.

    Attributes:
        metric: the judged metric this judgment counts for (a step name, with ``[dimension]`` when
            one reply scores several dimensions, e.g. ``ligbench/compare[rating]``).
        instance_id, key: the record's identity in the run (``key`` "" when the step has none).
        judge_model: model string of the judge.
        kind: ``pairwise``, ``ranking``, ``rating`` or ``choice``.
        value: the normalised answer (module docstring), None on a parse failure.
        parse_ok: False when every attempt failed to parse.
        attempts: model calls made (1 = first reply parsed); >= 1.
        positions: item ids in the order shown, None when the prompt showed a single item.
        gold_position: 0-based position of the target/gold item, None when the step has none.
        group: judgments sharing a group ask the same question (both orders of a pair, an original
            and its permuted re-ask); None when the judgment has no partner.
        unit: the question across judges (panel agreement); defaults to ``instance_id|group or key``.
        generator_model: model that produced the judged idea(s), when known (self-preference).
        reference_model: model that wrote the reference text shown among them (a rewritten target
            idea), when known; a judge ranking its own rewrite counts as self-judged too.
        reask: True for a consistency re-ask (counted apart from the judgments that make the score).
        truncated_reasoning: a parse failure whose last reply ran out of tokens while reasoning,
            with no answer left (``Judgment.truncated_reasoning``); False for a parsed judgment.
        human_label: the human answer to the same question, where the benchmark's data carries one
            (LigBench judge accuracy: the paper with the higher venue-debiased reviewer score), in
            content terms: pairwise, the preferred item id or "tie"; rating, the human score;
            choice, the tuple of correct item ids; ranking, item ids best first. None otherwise.
    """

    metric: str
    instance_id: str
    key: str
    judge_model: str
    kind: Kind
    value: Any
    parse_ok: bool
    attempts: int = 1
    positions: tuple[str, ...] | None = None
    gold_position: int | None = None
    group: str | None = None
    unit: str | None = None
    generator_model: str | None = None
    reference_model: str | None = None
    reask: bool = False
    human_label: Any = None
    truncated_reasoning: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind {self.kind!r} is not one of {KINDS}")
        if self.attempts < 1:
            raise ValueError(f"attempts must be >= 1, got {self.attempts}")
        if not self.parse_ok and self.value is not None:
            raise ValueError("a parse failure carries no value (value must be None)")
        if self.parse_ok and self.truncated_reasoning:
            raise ValueError("a parsed judgment has an answer (truncated_reasoning must be False)")

    @property
    def unit_id(self) -> str:
        """The panel unit: ``unit`` if set, else ``instance_id|group`` (or ``|key``)."""
        if self.unit is not None:
            return self.unit
        return f"{self.instance_id}|{self.group if self.group is not None else self.key}"

    def position_answer(self) -> Any:
        """The answer in terms of positions only (what a content-blind judge would repeat).

        pairwise: "first" / "tie" / "second"; ranking: the tuple of positions best first;
        choice: the tuple of chosen positions; rating: the value. None on a parse failure.
        """
        if self.value is None:
            return None
        if self.kind == "pairwise":
            return {1.0: "first", 0.5: "tie", 0.0: "second"}.get(float(self.value), self.value)
        if self.kind == "ranking" and self.positions is not None:
            index = {item: i for i, item in enumerate(self.positions)}
            return tuple(index[item] for item in self.value)
        return self.value

    def content_answer(self) -> Any:
        """The answer in terms of items (what stays put when only the order changes).

        pairwise: the preferred item id or "tie"; ranking: the tuple of item ids best first;
        choice: the sorted tuple of chosen item ids; rating: the value. None on a parse failure.
        """
        if self.value is None:
            return None
        if self.kind == "pairwise":
            if self.positions is None or float(self.value) == 0.5:
                return "tie" if float(self.value) == 0.5 else self.value
            return self.positions[0] if float(self.value) == 1.0 else self.positions[1]
        if self.kind == "choice" and self.positions is not None:
            return tuple(sorted(self.positions[p] for p in self.value))
        return self.value

    def item_ranks(self) -> dict[str, int] | None:
        """ranking: item id -> 1-based rank; None for other kinds or a parse failure."""
        if self.kind != "ranking" or self.value is None:
            return None
        return {item: r for r, item in enumerate(self.value, start=1)}
