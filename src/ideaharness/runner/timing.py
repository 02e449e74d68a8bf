"""Where a run's wall time and CPU time went: ``timing.json`` in the run directory.

The runner notes the wall-clock time (epoch seconds, :func:`time.time`) and the process's CPU time
(user + system seconds of all its threads since the process started, :func:`time.process_time`) at
the marks of one process's run — ``started`` (the runner entered, after imports and option
parsing), ``selected`` (data loaded, items selected), ``ready`` (models built, run directory
opened, the benchmark's ``setup`` done), ``executed`` (every phase and the consistency re-asks
done), ``results_written`` and ``report_written`` — and at the start and end of every phase
(:class:`TimedExecutor`: each phase of ``run_phases`` is timed apart, whatever executes it).
From those, ``spans_s`` (wall) and ``spans_cpu_s`` (CPU) of:

* ``before_runner``: CPU only, ``cpu_s["started"]`` (imports, option parsing: the start-up);
* ``before_execute``: ``started`` to ``ready``;
* ``model_phases``: the phases summed (the work ``run_phases`` streams: prompts, model calls,
  parsing, records);
* ``between_phases``: the rest of ``ready`` to ``executed``, work a benchmark does across
  instances outside its phases (BERTScore batches, competitions, pools);
* ``after_execute``: ``executed`` to ``report_written`` (aggregation, scores, results, report).

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
    """One phase of ``run_phases``: its name, items, start and end (epoch seconds), the process's
    CPU seconds during it, and whether it returned (False: it raised or was cancelled)."""

    name: str
    items: int = Field(ge=0)
    start: float
    end: float
    cpu_s: float = Field(ge=0)
    completed: bool = True

    @property
    def wall_s(self) -> float:
        """Seconds from start to end."""
        return self.end - self.start


class RunClock:
    """The marks and phase times of one process's run (see the module docstring)."""

    def __init__(self) -> None:
        self.marks: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.phases: list[PhaseTime] = []
        self.mark("started")

    def mark(self, name: str) -> None:
        """Note ``name`` (one of :data:`MARKS`) now.

        Raises:
            ValueError: ``name`` is not one of :data:`MARKS`.
        """
        if name not in MARKS:
            raise ValueError(f"unknown run mark {name!r}; one of {', '.join(MARKS)}")
        self.marks[name] = time.time()
        self.cpu[name] = time.process_time()

    def spans(self, clock: dict[str, float] | None = None) -> dict[str, float | None]:
        """``spans_s`` of the module docstring (``clock`` None: the wall marks), or ``spans_cpu_s``
        (``clock=self.cpu``); seconds, None where a mark was not reached."""
        m = self.marks if clock is None else clock
        cpu = clock is not None

        def between(a: str, b: str) -> float | None:
            return m[b] - m[a] if a in m and b in m else None

        phases = sum(p.cpu_s if cpu else p.wall_s for p in self.phases)
        execute = between("ready", "executed")
        spans: dict[str, float | None] = {"before_runner": m["started"]} if cpu else {}
        return {**spans, "before_execute": between("started", "ready"), "model_phases": phases,
                "between_phases": None if execute is None else max(0.0, execute - phases),
                "after_execute": between("executed", "report_written")}

    def block(self) -> dict[str, Any]:
        """The content of ``timing.json``: ``clock``, ``pid``, the wall marks, ``cpu_s`` (the CPU
        marks), ``phases`` (name, items, start, end, wall_s, cpu_s, completed), ``spans_s`` and
        ``spans_cpu_s``."""
        return {"clock": "epoch seconds (time.time); cpu_s: process CPU seconds (time.process_time)",
                "pid": os.getpid(), **self.marks, "cpu_s": dict(self.cpu),
                "phases": [{**p.model_dump(), "wall_s": p.wall_s} for p in self.phases],
                "spans_s": self.spans(), "spans_cpu_s": self.spans(self.cpu)}

    def write(self, run_dir: Path) -> Path:
        """Write ``timing.json`` into ``run_dir`` (atomically); returns its path.

        Raises:
            StorageError: the file cannot be written.
        """
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
            start, cpu = time.time(), time.process_time()
            completed = False
            try:
                await self.inner.run_phases(items, [(name, fn)], progress=progress)
                completed = True
            finally:
                self.clock.phases.append(PhaseTime(name=name, items=len(items), start=start, end=time.time(),
                                                   cpu_s=time.process_time() - cpu, completed=completed))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)
