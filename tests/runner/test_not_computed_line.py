"""The NOT COMPUTED line says a reason shared by several metrics once, naming them (MLR-Bench's
partial-run error repeated one reason per metric: over 1,000 characters)."""

from __future__ import annotations

from pathlib import Path

from ideaharness.runner.options import ExecutionOptions
from ideaharness.runner.protocol import BenchmarkConfig, RunContext
from ideaharness.runner.run import uncomputed_metrics
from ideaharness.runner.steps import StepRunner
from ideaharness.runs.store import RunStore

SHARED = "no proposal was reviewed (every review reply unparsed)"


def test_one_reason_of_several_metrics_is_said_once(tmp_path: Path) -> None:
    rubric = ["consistency", "clarity", "novelty", "feasibility"]
    values = [{"metric": f"mlrbench.{name}", "group": "proposal", "value": None, "n": 0, "why": SHARED}
              for name in rubric]
    values += [{"metric": "mlrbench.overall", "group": "idea", "value": None, "n": 0, "why": "no idea"},
               {"metric": "mlrbench.soundness", "group": "proposal", "value": 5.0, "n": 3}]
    with RunStore(tmp_path / "run", {"command": "test"}) as store:
        ctx = RunContext(config=BenchmarkConfig(), options=ExecutionOptions(), store=store,
                         steps=StepRunner(store, progress=False), models={})
        block = uncomputed_metrics(values, ctx, [])
    assert block is not None
    assert block["why"] == ["mlrbench.overall: no idea",
                            f"{SHARED} (metrics {', '.join(f'mlrbench.{n}' for n in rubric)})"]
    assert block["line"].count(SHARED) == 1
    assert [m["metric"] for m in block["metrics"]] == [*(f"mlrbench.{n}" for n in rubric), "mlrbench.overall"]
