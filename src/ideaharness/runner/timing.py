"""Where a run's wall time went: ``timing.json`` in the run directory.

The runner notes the wall-clock time (epoch seconds, :func:`time.time`) of the marks of one
process's run — ``started`` (the runner entered, after imports and option parsing), ``selected``
(data loaded, items selected), ``ready`` (models built, run directory opened, the benchmark's
``setup`` done), ``executed`` (every phase and the consistency re-asks done), ``results_written``
and ``report_written`` — and the start and end of every phase (:class:`TimedExecutor`: each phase
of ``run_phases`` is timed apart, whatever executes it). From those, ``spans_s``:

* ``before_execute``: ``ready - started``;
* ``model_phases``: the phases' wall time summed (the work ``run_phases`` streams: prompts, model
  calls, parsing, records);
* ``between_phases``: the rest of ``execute``, work a benchmark does across instances outside its
  phases (BERTScore batches, competitions, pools);
* ``after_execute``: ``report_written - executed`` (aggregation, scores, results and report).

The file describes the last process that worked on the run (a resume writes it anew); nothing in
it is a result, so results.json is unchanged by it and a comparison of runs never reads it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ideaharness.fileio import atomic_write_text
from ideaharness.runner.steps import Executor, Phase

TIMING_FILE = "timing.json"
MARKS = ("started", "selected", "ready", "executed", "results_written", "report_written")
"""The marks of a run, in the order they are reached (a run stopped early lacks the later ones)."""


class PhaseTime(BaseModel):
    """One phase of ``run_phases``: its name, items, start and end (epoch seconds), and whether it
    returned (False: it raised or was cancelled)."""

    name: str
    items: int = Field(ge=0)
    start: float
    end: float
    completed: bool = True

    @property
    def wall_s(self) -> float:
        """Seconds from start to end."""
        return self.end - self.start


class RunClock:
    """The marks and phase times of one process's run (see the module docstring)."""

    def __init__(self) -> None:
        self.marks: dict[str, float] = {"started": time.time()}
        self.phases: list[PhaseTime] = []

    def mark(self, name: str) -> None:
        """Note ``name`` (one of :data:`MARKS`) now.

        Raises:
            ValueError: ``name`` is not one of :data:`MARKS`.
        """
        if name not in MARKS:
            raise ValueError(f"unknown run mark {name!r}; one of {', '.join(MARKS)}")
        self.marks[name] = time.time()

    def spans(self) -> dict[str, float | None]:
        """``spans_s`` of the module docstring, seconds; None where a mark was not reached."""
        m = self.marks

        def between(a: str, b: str) -> float | None:
            return m[b] - m[a] if a in m and b in m else None

        phases = sum(p.wall_s for p in self.phases)
        execute = between("ready", "executed")
        return {"before_execute": between("started", "ready"), "model_phases": phases,
                "between_phases": None if execute is None else max(0.0, execute - phases),
                "after_execute": between("executed", "report_written")}

    def block(self) -> dict[str, Any]:
        """The content of ``timing.json``: ``clock``, ``pid``, the marks, ``phases`` (name, items,
        start, end, wall_s, completed) and ``spans_s``."""
        return {"clock": "epoch seconds (time.time) of the process that wrote this file", "pid": os.getpid(),
                **self.marks,
                "phases": [{**p.model_dump(), "wall_s": p.wall_s} for p in self.phases],
                "spans_s": self.spans()}

    def write(self, run_dir: Path) -> Path:
        """Write ``timing.json`` into ``run_dir`` (atomically); returns its path."""
        return atomic_write_text(Path(run_dir) / TIMING_FILE, json.dumps(self.block(), indent=2))


class TimedExecutor:
    """An :class:`~ideaharness.runner.steps.Executor` that runs each phase through ``inner`` on its
    own (``inner.run_phases(items, [phase])``, as every executor runs phases one after another)
    and notes its start and end on ``clock``. Other attributes (``summary`` of a batch executor,
    ``status`` of the local one) are ``inner``'s."""

    def __init__(self, inner: Executor, clock: RunClock) -> None:
        self.inner = inner
        self.clock = clock

    async def run_phases(self, items: Sequence[Any], phases: Sequence[Phase], *, progress: bool) -> None:
        """Run ``phases`` in order through ``inner``, timing each.

        Raises:
            whatever ``inner.run_phases`` raises (the phase is noted as not completed).
        """
        for name, fn in phases:
            start = time.time()
            completed = False
            try:
                await self.inner.run_phases(items, [(name, fn)], progress=progress)
                completed = True
            finally:
                self.clock.phases.append(PhaseTime(name=name, items=len(items), start=start, end=time.time(),
                                                   completed=completed))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
