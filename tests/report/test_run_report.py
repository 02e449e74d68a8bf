"""The runner's report.html embeds the per-instance viewer of its run directory, written after
results.json, also when the run stops on an error."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ideaharness.api import arun
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.runner import registry
from ideaharness.runner.options import ExecutionOptions
from tests.analysis.test_score_reader import LengthBench, LengthConfig


class Stops(LengthBench):
    """Answers every item, then stops with an error (as a full disk or a crash would)."""

    async def execute(self, ctx: Any, items: Any) -> None:
        await super().execute(ctx, items)
        raise RuntimeError("the disk went away")


def test_report_of_an_aborted_run_has_the_viewer_of_its_records(tmp_path: Path) -> None:
    registry.register_benchmark("stopsbench")(Stops)
    out = tmp_path / "run"
    try:
        with pytest.raises(RuntimeError, match="disk went away"):
            asyncio.run(arun("stopsbench", config=LengthConfig(generator="gen-s"),
                             options=ExecutionOptions(out=out, progress=False, max_attempts=1),
                             generator=ScriptedModel(lambda m: "a b " + m[-1]["content"], model="gen-s")))
    finally:
        registry._BENCHMARKS.pop("stopsbench", None)
    results = json.loads((out / "results.json").read_text())
    assert results["ended"].startswith("stopped by an error") and results["status"] == "partial"
    html = (out / "report.html").read_text()
    assert 'id="ih-data"' in html and "per-instance viewer not" not in html
    payload = html.split('id="ih-data"', 1)[1]
    assert all(f"a b q{i}" in payload for i in range(4))  # every recorded reply is in the viewer
    assert (out / "report.html").stat().st_mtime_ns >= (out / "results.json").stat().st_mtime_ns
