"""Issue 32, items 1-3: a generation whose reply does not parse is a failed unit of its system for
every benchmark (status partial, exit 3, listed in ``failed_units``), like a failed call; a
registered headline metric with no value at all is NOT COMPUTED; and results.json's ``coverage``
block says, per system, how many of the asked instances it answered."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ideaharness.errors import PartialRunError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.results import parse_results
from ideaharness.runner.run import finish_run, retry_advice
from ideaharness.runner.steps import FILE_FIX, GENERATION_UNPARSED
from tests.runner.coverage_support import LOW, TASKS, mlrbench_pair


def test_a_system_unparsable_on_the_low_tasks_makes_its_run_partial(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 2's shape (3 of 6 ideas unparsed): was status complete, exit 0, the headline on the
    3 easy tasks with no warning. Now: partial, exit 3, each unparsed idea a failed unit, the
    coverage block 3/6, and the closing line advises re-asking (a model generator), not a file fix."""
    pair = mlrbench_pair(tmp_path, capsys, monkeypatch)
    assert pair.e_code == 0, pair.e_text
    assert pair.d_code == 3, pair.d_text
    d = json.loads((pair.d / "results.json").read_text())
    assert d["status"] == "partial"
    failed = {u["instance_id"]: u for u in d["failed_units"]}
    assert sorted(failed) == sorted(LOW)
    assert all(u["step"] == "idea" and u["error"].startswith(GENERATION_UNPARSED) for u in failed.values())
    assert {u["instance_id"] for u in d["unparsed_units"] if u["generation"]} == set(LOW)
    [coverage] = d["coverage"]
    assert coverage["asked"] == len(TASKS) and coverage["answered"] == len(TASKS) - len(LOW)
    assert sorted(coverage["failed"]) == sorted(LOW) and coverage["rate"] == pytest.approx(0.5)
    assert sorted(d["idea_sources"][0]["answers"]["failed"]) == sorted(LOW)
    assert parse_results(d).coverage is not None  # the typed block validates
    last = pair.d_text.strip().splitlines()[-1]
    assert "re-ask them with new samples" in last and FILE_FIX not in last, last
    assert "generation(s) did not parse" in pair.d_text
    e = json.loads((pair.e / "results.json").read_text())
    assert e["status"] == "complete" and e["failed_units"] == []
    assert e["coverage"][0]["rate"] == 1.0 and e["coverage"][0]["failed"] == []


def test_ligbench_with_every_generation_unparsed_is_not_computed(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 2: LigBench whose every generation did not parse ended exit 0, ``status: complete``,
    ``metrics: []``, ``not_computed: null``. Now its registered headline metric is NOT COMPUTED
    (named, with why) and the run partial (exit 3)."""
    from ideaharness.api import arun
    from ideaharness.benchmarks.ligbench import LigBenchConfig
    from ideaharness.runner.options import ExecutionOptions
    from tests.ligbench.test_cli import _scripted_judge
    from tests.runner.test_one_number import _corpus

    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    config = LigBenchConfig(generators=["scripted/gen"], judge="scripted/judge", corpus=str(_corpus(out)),
                            topics=["graphs"], ideas_per_topic=2)
    results = asyncio.run(arun(
        "ligbench", config=config, options=ExecutionOptions(out=out, progress=False),
        generators={"scripted/gen": ScriptedModel(lambda m: "", model="scripted/gen")},
        judge=ScriptedModel(_scripted_judge, model="scripted/judge")))
    assert results["status"] == "partial" and results["metrics"] == []
    assert results["not_computed"] is not None
    assert [m["metric"] for m in results["not_computed"]["metrics"]] == ["ligbench.score"]
    line = results["not_computed"]["line"]
    assert line.startswith("NOT COMPUTED: ligbench.score") and "generations unparsed" in line, line
    assert results["coverage"][0]["answered"] == 0 and results["coverage"][0]["rate"] == 0.0
    with pytest.raises(PartialRunError) as raised:
        finish_run(results, out)
    assert raised.value.exit_code == 3 and "NOT COMPUTED: ligbench.score" in str(raised.value)


def test_ligbench_judge_has_no_coverage_and_stays_complete(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A run without generation (``ligbench-judge``) has ``coverage: []``; its one expected metric
    (not named by the benchmark's name) is computed, so the run is complete."""
    from tests.runner.test_one_number import _ligbench_judge

    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    _ligbench_judge(tmp_path / "run")
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["coverage"] == [] and results["status"] == "complete" and results["not_computed"] is None


def test_the_closing_advice_names_what_to_do_for_each_kind_of_failure() -> None:
    """Failed calls: run again; unparsed model replies with rounds left: re-ask; spent: another
    generator; an ideas file's answer: fix the file (never "run again", which gives it again)."""
    model = {"step": "idea", "instance_id": "t1", "key": "", "source": "model", "final": False,
             "generation": True}
    spent = {**model, "final": True, "rounds": 3}
    from_file = {**model, "source": "file"}
    call = {"step": "review/idea", "instance_id": "t2", "key": "j", "status": "failed"}
    as_failed = {"step": "idea", "instance_id": "t1", "key": "", "status": "failed"}
    reask = "run the same command again to re-ask them with new samples"
    assert retry_advice([as_failed], [model], None, []) == reask
    assert "try another generator" in retry_advice([as_failed], [spent], None, [])
    assert retry_advice([as_failed], [from_file], None, []).endswith(FILE_FIX)
    assert "retry them" not in retry_advice([as_failed], [from_file], None, [])
    both = retry_advice([call, as_failed], [model], None, [])
    assert both.startswith("run the same command again to retry them") and "1 repl(ies)" in both


def test_researchbench_pipeline_generations_outside_generate_step_are_failed_units(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ResearchBench's mutate-refine-recombine pipeline asks the generator outside
    ``generate_step``: a refinement whose reply never parses was an unparsed *judgment* (the run
    complete); now it is a generation (``note_generation``): a failed unit, the run partial, the
    instance failed in the coverage block."""
    from ideaharness.api import arun
    from ideaharness.benchmarks.researchbench import ResearchBenchConfig
    from ideaharness.runner.options import ExecutionOptions
    from tests.researchbench.test_rb_run import RELEASE, scripted

    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    base = scripted("**Analysis**: x\n**Selection of research hypothesis candidate**: candidate 1")

    def reply(messages: list[dict[str, str]]) -> str:
        if "improves research hypotheses" in messages[0]["content"]:  # every refinement
            return "no"
        if "Matched score:" in messages[-1]["content"]:
            return "Matched score: 3\nReason: r."
        return base._responder(messages)  # type: ignore[operator]

    model = ScriptedModel(reply, model="scripted/gen")
    config = ResearchBenchConfig(data=str(RELEASE), generator="scripted/gen", judge="scripted/judge",
                                 n_mutations=1, n_refine=1, bootstrap_resamples=100)
    results = asyncio.run(arun("researchbench", config=config,
                               options=ExecutionOptions(out=tmp_path / "run", progress=False),
                               generator=model, judge=model))
    refined = [u for u in results["failed_units"] if "/ref" in u["key"]]
    assert refined and all(u["error"].startswith(GENERATION_UNPARSED) for u in refined)
    assert results["status"] == "partial"
    [coverage] = results["coverage"]
    assert sorted(coverage["failed"]) == sorted({u["instance_id"] for u in refined})
    assert coverage["answered"] == coverage["asked"] - len(coverage["failed"])
