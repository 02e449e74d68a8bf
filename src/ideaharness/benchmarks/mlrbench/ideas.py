"""Given ideas and proposals (``--ideas FILE``): score another system's texts instead of generating.

The file is JSON Lines, one line per task::

    {"task_id": "iclr2023_bands", "idea": "Title: ...", "proposal": "...", "model": "ministral-8b"}

``task_id`` names a bundled task; ``idea`` is required; ``proposal`` is required when the run's
stage is ``proposal`` (the proposal is scored with the idea it was written from); ``model``
(optional) is the model that wrote them, for the reliability block's self-preference check. Texts
are taken as given (only empty or whitespace text is refused): the judge, not the reader, grades
them.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ideaharness.data.jsonl import iter_jsonl
from ideaharness.errors import DataError


@dataclass(frozen=True)
class GivenTexts:
    """One task's given texts: ``idea``, ``proposal`` (None when the file has none) and the
    ``model`` that wrote them (None when not said)."""

    task_id: str
    idea: str
    proposal: str | None = None
    model: str | None = None


def _text(row: dict[str, Any], field: str, path: Path, where: str, *, required: bool) -> str | None:
    value = row.get(field)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        got = "missing" if value is None else "empty" if isinstance(value, str) else type(value).__name__
        raise DataError(path, f"{where}, field {field!r}: expected text, got {got}")
    return value.strip()


def load_given(path: str | Path, *, task_ids: Collection[str], need_proposal: bool) -> dict[str, GivenTexts]:
    """``{task_id: GivenTexts}`` from a ``--ideas`` JSON Lines file (format in the module docstring).

    Raises:
        DataError: an unreadable file or line, a line that is not an object, an unknown or
            repeated ``task_id``, a missing or empty ``idea`` (or ``proposal`` when
            ``need_proposal``), a ``model`` that is not text, or no line at all (names the line
            and field).
    """
    path = Path(path)
    known = set(task_ids)
    out: dict[str, GivenTexts] = {}
    for lineno, row in iter_jsonl(path):
        where = f"line {lineno}"
        if not isinstance(row, dict):
            raise DataError(path, f"{where}: expected an object, got {type(row).__name__}")
        task = row.get("task_id")
        if not isinstance(task, str) or not task.strip():
            raise DataError(path, f"{where}, field 'task_id': missing or not text")
        task = task.strip()
        if task not in known:
            raise DataError(path, f"{where}, field 'task_id': no bundled MLR-Bench task {task!r} "
                            f"(ids look like {min(known)!r})" if known else f"{where}: no tasks")
        if task in out:
            raise DataError(path, f"{where}, field 'task_id': {task!r} was given on an earlier line")
        model = row.get("model")
        if model is not None and not isinstance(model, str):
            raise DataError(path, f"{where}, field 'model': expected text, got {type(model).__name__}")
        out[task] = GivenTexts(
            task_id=task, idea=str(_text(row, "idea", path, where, required=True)),
            proposal=_text(row, "proposal", path, where, required=need_proposal),
            model=model.strip() or None if model else None)
    if not out:
        raise DataError(path, "no ideas in the file (empty, or only blank lines)")
    return out
