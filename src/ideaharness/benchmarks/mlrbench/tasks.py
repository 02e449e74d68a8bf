"""MLR-Bench's 201 workshop tasks, bundled in ``data/tasks/<task id>.md`` (data/SOURCE.md).

A task is one workshop call for papers (ICLR, ICML and NeurIPS 2023-2025) in Markdown, as the
upstream ``tasks/`` folder holds it; its id is the file name without ``.md`` (``iclr2023_bands``).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ideaharness.cutoff import CutoffEntry, filter_access
from ideaharness.errors import DataError, UserError
from ideaharness.textio import read_text

TASK_COUNT = 201
"""Tasks in the upstream release (README: 73 from 2023, 91 from 2024, 37 from 2025)."""


@dataclass(frozen=True)
class Task:
    """One workshop task: ``id`` (file stem, e.g. ``iclr2023_bands``), ``title`` (its first
    Markdown heading, else its first line) and ``text`` (the whole file, unchanged)."""

    id: str
    title: str
    text: str

    @property
    def venue(self) -> str:
        """The venue and year prefix of the id (``iclr2023``)."""
        return self.id.split("_", 1)[0]

    @property
    def year(self) -> int | None:
        """The conference year of the call (``iclr2023`` -> 2023), None when the id has none."""
        found = re.search(r"(19|20)\d\d", self.venue)
        return int(found.group(0)) if found else None

    @property
    def publication_date(self) -> dt.date | None:
        """Unknown: a call is dated by its conference year only."""
        return None


def tasks_dir() -> Path:
    """The folder of the bundled task files (package data)."""
    return Path(str(resources.files(__package__) / "data" / "tasks"))


def task_files() -> list[Path]:
    """Every bundled task file, sorted by id."""
    return sorted(tasks_dir().glob("*.md"))


def _title(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return lines[0][:120] if lines else ""


def read_task(path: Path) -> Task:
    """The task in ``path``.

    Raises:
        DataError: the file is unreadable or holds no text.
    """
    text = read_text(path)
    if not text.strip():
        raise DataError(path, "the task file is empty")
    return Task(id=path.stem, title=_title(text), text=text)


def bundled_tasks() -> list[Task]:
    """All bundled tasks, sorted by id (:data:`TASK_COUNT` of them)."""
    return [read_task(p) for p in task_files()]


def select_tasks(ids: list[str]) -> list[Task]:
    """The bundled tasks named in ``ids`` (in bundled order), or all when ``ids`` is empty.

    Raises:
        UserError: an id that names no bundled task (with a close match when there is one).
    """
    tasks = bundled_tasks()
    if not ids:
        return tasks
    known = {t.id: t for t in tasks}
    wanted = list(dict.fromkeys(i.strip() for i in ids if i.strip()))
    for task_id in wanted:
        if task_id not in known:
            import difflib

            close = difflib.get_close_matches(task_id, known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (ids look like {tasks[0].id!r})"
            raise UserError(f"--task: no MLR-Bench task {task_id!r}{hint}")
    chosen = set(wanted)
    return [t for t in tasks if t.id in chosen]


CALLS_SOURCE = "workshop_calls"
"""The ledger source of the workshop calls a run shows (dated by conference year)."""


def tasks_before(tasks: list[Task], cutoff: dt.date | None) -> tuple[list[Task], list[CutoffEntry]]:
    """The tasks whose call is not dated after ``cutoff`` (a call of the cutoff's own year cannot be
    placed and is kept, counted undated) and one ``cutoff`` record per task (``item_excluded`` for
    a task left out). No cutoff: every task, no records.
    """
    if cutoff is None:
        return list(tasks), []
    kept: list[Task] = []
    entries: list[CutoffEntry] = []
    for task in tasks:
        shown, record = filter_access([task], cutoff, source=CALLS_SOURCE)
        data: dict[str, Any] = {**record, "item_excluded": not shown}
        entries.append((task.id, CALLS_SOURCE, data))
        kept.extend(shown)
    return kept, entries
