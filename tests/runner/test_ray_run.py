"""``--runner ray`` through the one runner: a local Ray run (2 CPUs) of two benchmarks writes the
results.json of the single-process run (ignoring timings and usage counters)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ideaharness import arun
from ideaharness.errors import UserError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.runner.options import ExecutionOptions
from tests.llm.test_batch import RUNS, SECRET, VOLATILE, _server_for

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray


@pytest.fixture(scope="module")
def local_ray():
    from ideaharness.runs.ray_runner import ray_init

    ray_init(None, num_cpus=2)
    yield
    ray.shutdown()


def _saved(out: Path) -> dict:
    results = json.loads((out / "results.json").read_text())
    return {k: v for k, v in results.items() if k not in VOLATILE}


def _records(out: Path) -> list[dict]:
    rows = []
    for path in sorted((out / "records").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            row.pop("created")  # a timing
            rows.append(row)
    return sorted(rows, key=lambda r: (r["step"], r["instance_id"], r["key"]))


@pytest.mark.parametrize("name", sorted(RUNS))
def test_a_ray_run_writes_the_results_of_a_local_run(name: str, tmp_path: Path, local_ray,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    outs = {}
    with _server_for(name) as server:
        for runner in ("local", "ray"):
            out = outs[runner] = tmp_path / runner
            options = ExecutionOptions(out=out, progress=False, base_url=server.base_url, limit=2,
                                       cache_path=tmp_path / f"{runner}.sqlite", runner=runner)
            results = asyncio.run(arun(name, config=RUNS[name][0](), options=options))
            assert results["status"] == "complete", results["failed_units"]
            calls = max(s["calls"] for s in results["llm_stats"].values() if s)
            assert calls > 0  # the workers' calls are counted in the driver's usage
    assert _records(outs["ray"]) == _records(outs["local"])
    assert _saved(outs["ray"]) == _saved(outs["local"])
    saved = json.loads((outs["ray"] / "results.json").read_text())
    assert saved["settings"]["execution"]["runner"] == "ray"


def test_ray_refuses_clients_given_in_python(tmp_path: Path) -> None:
    model = ScriptedModel(["x"])
    options = ExecutionOptions(out=tmp_path / "run", progress=False, runner="ray")
    with pytest.raises(UserError, match="runner ray"):
        asyncio.run(arun("ideabench", options=options, generator=model, judge=model))
