"""Stated training-data cutoffs of known models, each with the page that states it.

The leakage check (:mod:`ideaharness.runner.leakage`) compares a model's training cutoff with the
instances' knowledge cutoffs: an instance whose cutoff is before the model's training cutoff has a
target the model may have seen in training. Only a provider's own statement counts here; a model
with none is ``unknown`` (never guessed). ``--model-cutoff ROLE=YYYY-MM-DD`` (or ``=unknown``)
overrides the table for one role of a run, ``--model-cutoff YYYY-MM-DD`` for every role.

A month-precision statement ("Mar 2025") is read as the month's last day (the model may have seen
that whole month); a day-precision one as that day. Rows were checked against the cited pages in
2025; providers revise these pages, so cite the page, not this table, in a paper.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from ideaharness.schema import read_date
from ideaharness.systems.spec import system_kind


@dataclass(frozen=True)
class ModelCutoff:
    """One row: the model names it covers, its training cutoff, the statement's source.

    Attributes:
        pattern: regular expression the bare model name (provider prefix removed) must match in
            full; a dated snapshot suffix (``-2024-08-06``, ``-20250514``) is allowed after it.
        cutoff: the last day of training data the provider states.
        stated: the statement as the source words it (``"Oct 01, 2023"``, ``"Mar 2025"``).
        source: URL of the page stating it.
        note: what the statement covers when it is not the whole training data.
    """

    pattern: str
    cutoff: dt.date
    stated: str
    source: str
    note: str = ""

    def matches(self, name: str) -> bool:
        return re.fullmatch(rf"(?:{self.pattern})(?:-\d{{4}}-?\d{{2}}-?\d{{2}})?", name) is not None


_OPENAI = "https://platform.openai.com/docs/models/"
_ANTHROPIC = "https://docs.anthropic.com/en/docs/about-claude/models/overview"

MODEL_CUTOFFS: tuple[ModelCutoff, ...] = (
    ModelCutoff("gpt-3\\.5-turbo", dt.date(2021, 9, 1), "Sep 01, 2021", _OPENAI + "gpt-3.5-turbo"),
    ModelCutoff("gpt-4-turbo", dt.date(2023, 12, 1), "Dec 01, 2023", _OPENAI + "gpt-4-turbo"),
    ModelCutoff("gpt-4o", dt.date(2023, 10, 1), "Oct 01, 2023", _OPENAI + "gpt-4o"),
    ModelCutoff("gpt-4o-mini", dt.date(2023, 10, 1), "Oct 01, 2023", _OPENAI + "gpt-4o-mini"),
    ModelCutoff("gpt-4\\.1", dt.date(2024, 6, 1), "Jun 01, 2024", _OPENAI + "gpt-4.1"),
    ModelCutoff("gpt-4\\.1-mini", dt.date(2024, 6, 1), "Jun 01, 2024", _OPENAI + "gpt-4.1-mini"),
    ModelCutoff("gpt-4\\.1-nano", dt.date(2024, 6, 1), "Jun 01, 2024", _OPENAI + "gpt-4.1-nano"),
    ModelCutoff("o1", dt.date(2023, 10, 1), "Oct 01, 2023", _OPENAI + "o1"),
    ModelCutoff("o3-mini", dt.date(2023, 10, 1), "Oct 01, 2023", _OPENAI + "o3-mini"),
    ModelCutoff("o3", dt.date(2024, 6, 1), "Jun 01, 2024", _OPENAI + "o3"),
    ModelCutoff("o4-mini", dt.date(2024, 6, 1), "Jun 01, 2024", _OPENAI + "o4-mini"),
    ModelCutoff("gpt-5", dt.date(2024, 9, 30), "Sep 30, 2024", _OPENAI + "gpt-5"),
    ModelCutoff("gpt-5-mini", dt.date(2024, 5, 31), "May 31, 2024", _OPENAI + "gpt-5-mini"),
    ModelCutoff("gpt-5-nano", dt.date(2024, 5, 31), "May 31, 2024", _OPENAI + "gpt-5-nano"),
    ModelCutoff("claude-3-haiku", dt.date(2023, 8, 31), "Aug 2023 (training data cut-off)", _ANTHROPIC),
    ModelCutoff("claude-3-5-haiku", dt.date(2024, 7, 31), "July 2024 (training data cut-off)", _ANTHROPIC),
    ModelCutoff("claude-3-7-sonnet", dt.date(2024, 11, 30), "Nov 2024 (training data cut-off)", _ANTHROPIC),
    ModelCutoff("claude-sonnet-4", dt.date(2025, 3, 31), "Mar 2025 (training data cut-off)", _ANTHROPIC),
    ModelCutoff("claude-opus-4", dt.date(2025, 3, 31), "Mar 2025 (training data cut-off)", _ANTHROPIC),
    ModelCutoff("qwen2\\.5-coder-(?:0\\.5b|1\\.5b|3b|7b|14b|32b)(?:-instruct)?", dt.date(2024, 1, 31),
                "GitHub repositories created before February 2024", "https://arxiv.org/abs/2409.12186",
                note="Qwen2.5-Coder Technical Report §3.1.1 states the date of its source-code data only; "
                "no cutoff of its text data is published, so the model may have seen later text"),
)
"""The known rows; a name matching two rows takes the longest pattern (``gpt-4o-mini`` over ``gpt-4o``)."""


@dataclass(frozen=True)
class TrainingCutoff:
    """What the leakage block says of one model: its cutoff (None: unknown), where it comes from."""

    model: str
    cutoff: dt.date | None
    source: str
    stated: str = ""
    note: str = ""


def bare_name(model: str) -> str:
    """The model name without its provider prefix (``openai/gpt-4o`` -> ``gpt-4o``), lower-case."""
    return model.split("/", 1)[1].lower() if "/" in model else model.lower()


def training_cutoff(model: str, override: str | None = None) -> TrainingCutoff:
    """The training cutoff of ``model``: the user's override, else the table's row, else unknown.

    Args:
        model: a run's model string (``openai/gpt-4o-2024-08-06``, ``local/qwen2.5-coder-1.5b``) or
            a system spec (``cmd:...``, ``ideas:...``, ``http://...``: unknown, a system has no
            training cutoff of its own).
        override: ``YYYY-MM-DD`` or ``unknown`` (``--model-cutoff``).

    Raises:
        ValueError: an override that is neither a date nor ``unknown``.
    """
    if override is not None:
        if override.strip().lower() == "unknown":
            return TrainingCutoff(model, None, "--model-cutoff", "unknown")
        try:
            return TrainingCutoff(model, read_date(override), "--model-cutoff", override)
        except ValueError as exc:
            raise ValueError(f"--model-cutoff: {exc} or 'unknown'") from None
    if system_kind(model) != "model":
        return TrainingCutoff(model, None, f"unknown: a system ({system_kind(model)}), not a model")
    name = bare_name(model)
    rows = [r for r in MODEL_CUTOFFS if r.matches(name)]
    if not rows:
        return TrainingCutoff(model, None, "unknown: no stated cutoff in the table (give --model-cutoff)")
    row = max(rows, key=lambda r: len(r.pattern))
    return TrainingCutoff(model, row.cutoff, row.source, row.stated, row.note)


def parse_model_cutoff(value: str) -> str:
    """One ``--model-cutoff`` value checked: ``YYYY-MM-DD`` or ``unknown``.

    Raises:
        ValueError: anything else.
    """
    training_cutoff("", value)
    return value.strip()
