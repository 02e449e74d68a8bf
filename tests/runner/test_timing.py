"""``timing.json``: the marks of a run and the start and end of each phase, written by the runner
beside results.json (runner.timing). Structure only: nothing here depends on how fast it ran."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ideaharness import arun
from ideaharness.benchmarks.ideabench.config import IdeaBenchConfig
from ideaharness.runner.options import ExecutionOptions
from ideaharness.runner.steps import LocalExecutor
from ideaharness.runner.timing import MARKS, TIMING_FILE, RunClock, TimedExecutor
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.ideabench.conftest import ideabench_responder

IDEABENCH_PHASES = ["target ideas", "generate (low)", "rewrite targets (low)", "overlap (low)",
                    "rank novelty (low)", "rank feasibility (low)", "consistency re-asks"]


def test_a_run_writes_its_marks_and_every_phase(tmp_path: Path) -> None:
    respond = ideabench_responder()
    with OpenAICompatServer(lambda body: respond(body["messages"])) as server:
        options = ExecutionOptions(out=tmp_path / "run", progress=False, base_url=server.base_url,
                                   cache_path=tmp_path / "c.sqlite", limit=2)
        config = IdeaBenchConfig(generator="openai/g", judge="openai/j")
        results = asyncio.run(arun("ideabench", config=config, options=options))
    assert results["status"] == "complete"
    assert "timing" not in results  # not a result: its own file
    timing = json.loads((tmp_path / "run" / TIMING_FILE).read_text())
    marks = [timing[m] for m in MARKS]
    assert marks == sorted(marks)
    phases = timing["phases"]
    assert [p["name"] for p in phases] == IDEABENCH_PHASES
    assert all(p["completed"] for p in phases)
    assert all(p["items"] == 2 for p in phases[:-1])  # the instances (the re-asks phase: its re-asks)
    bounds = [timing["ready"]] + [t for p in phases for t in (p["start"], p["end"])] + [timing["executed"]]
    assert bounds == sorted(bounds)  # phases one after another, inside execute
    spans = timing["spans_s"]
    assert spans["model_phases"] == pytest.approx(sum(p["end"] - p["start"] for p in phases))
    assert spans["before_execute"] == pytest.approx(timing["ready"] - timing["started"])
    assert spans["between_phases"] == pytest.approx(
        timing["executed"] - timing["ready"] - spans["model_phases"])  # BERTScore, between two phases
    assert spans["after_execute"] == pytest.approx(timing["report_written"] - timing["executed"])
    cpu = timing["cpu_s"]
    assert [cpu[m] for m in MARKS] == sorted(cpu[m] for m in MARKS)  # process CPU only grows
    assert timing["spans_cpu_s"]["before_runner"] == cpu["started"] > 0  # imports, option parsing
    assert timing["spans_cpu_s"]["model_phases"] == pytest.approx(sum(p["cpu_s"] for p in phases))


def test_a_phase_that_raises_is_noted_as_not_completed_and_the_error_passes() -> None:
    clock = RunClock()
    executor = TimedExecutor(LocalExecutor(), clock)

    async def ok(item: int) -> None:
        return None

    async def fails(item: int) -> None:
        raise RuntimeError(f"item {item}")

    with pytest.raises(RuntimeError, match="item"):
        asyncio.run(executor.run_phases([1, 2, 3], [("ok", ok), ("fails", fails), ("never", ok)],
                                        progress=False))
    assert [(p.name, p.completed, p.items) for p in clock.phases] == [("ok", True, 3), ("fails", False, 3)]
    assert clock.spans()["before_execute"] is None  # no "ready" mark yet


def test_the_inner_executors_attributes_stay_reachable() -> None:
    inner = LocalExecutor(max_in_flight=7)
    executor = TimedExecutor(inner, RunClock())
    assert executor.max_in_flight == 7
    assert getattr(executor, "summary", None) is None  # as the runner asks a batch executor's summary


def test_an_unknown_mark_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown run mark"):
        RunClock().mark("halfway")
