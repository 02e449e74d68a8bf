"""A benchmark added from outside the project declares its per-instance score reader on its class:
``load_run``, ``compare`` and the viewer read its runs without any edit to ``ideaharness.analysis``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from ideaharness.analysis import load_run
from ideaharness.analysis.compare import compare_runs, settings_mismatch
from ideaharness.analysis.scores import SCORE_READERS, Record, ScoreReader, reported_value, score_reader
from ideaharness.api import arun
from ideaharness.errors import UserError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.report.viewer import viewer_payload
from ideaharness.runner import Benchmark, BenchmarkConfig, registry
from ideaharness.runner.options import ExecutionOptions

NAME = "lengthbench"


class LengthConfig(BenchmarkConfig):
    generator: str = Field("scripted/gen", description="The model that answers.")
    label: str = Field("", description="A note that never changes a score.")


class LengthReader(ScoreReader):
    """Score = the parsed reply length in words; the run reports its mean."""

    free_settings = frozenset({"label"})

    def scores(
        self, records: list[Record], results: dict[str, Any], config: dict[str, Any], system: str
    ) -> list[dict[str, Any]]:
        return [
            {"system": system, "instance_id": inst, "pair_key": inst, "metric": "words",
             "value": float(data["judgment"]["parsed"])}
            for _step, inst, _key, data in records
            if data["judgment"]["parse_ok"]
        ]

    def reported(self, results: dict[str, Any], metric: str, system: str) -> float | None:
        if metric != "words":
            raise KeyError(metric)
        return results["mean_words"]


class LengthBench(Benchmark):
    config_class = LengthConfig
    score_reader = LengthReader()

    def load(self) -> list[Any]:
        from pydantic import BaseModel

        class Item(BaseModel):
            id: str

        return [Item(id=f"q{i}") for i in range(4)]

    async def execute(self, ctx: Any, items: Any) -> None:
        model = ctx.model("generator")

        def parse(text: str) -> int:
            if "?" in text:
                raise ValueError("not an answer")
            return len(text.split())

        async def answer(item: Any) -> None:
            await ctx.steps.judge_step("answer", item.id, "", model,
                                       [{"role": "user", "content": item.id}], parse, max_tokens=16)

        await ctx.steps.run_phases(items, [("answer", answer)])

    def aggregate(self, ctx: Any, items: Any) -> dict[str, Any]:
        records = [ctx.store.get("answer", i.id) for i in items]
        values = [r["judgment"]["parsed"] for r in records if r and r["judgment"]["parse_ok"]]
        return {"mean_words": sum(values) / len(values) if values else None}


@pytest.fixture
def bench() -> Iterator[str]:
    registry.register_benchmark(NAME)(LengthBench)
    yield NAME
    registry._BENCHMARKS.pop(NAME, None)


def make_run(out: Path, system: str, words: dict[str, str], label: str = "", seed: int = 0) -> Path:
    import asyncio

    def reply(messages: list[dict[str, str]]) -> str:
        return words[messages[-1]["content"]]

    asyncio.run(
        arun(NAME, config=LengthConfig(generator=system, label=label, seed=seed),
             options=ExecutionOptions(out=out, progress=False, max_attempts=1),
             generator=ScriptedModel(reply, model=system))
    )
    return out


def test_a_registered_benchmark_brings_its_own_score_reader(bench: str, tmp_path: Path) -> None:
    assert NAME not in SCORE_READERS and score_reader(NAME) is LengthBench.score_reader
    a = make_run(tmp_path / "a", "gen-a", {"q0": "one two three", "q1": "one", "q2": "what?", "q3": "a b"})
    run = load_run(a)
    # the reply that did not parse is a judgment row, never a score row
    assert sorted(run.scores["instance_id"]) == ["q0", "q1", "q3"]
    assert len(run.judgments) == 4 and (~run.judgments["parse_ok"]).sum() == 1
    assert run.scores["value"].mean() == pytest.approx(reported_value(run.results, NAME, "words", run.system))
    assert set(viewer_payload(run)["instance_scores"]) == {f"{run.system}\u0000q{i}" for i in (0, 1, 3)}

    # a free setting (``label``) may differ between compared runs; a result-changing one may not
    b = make_run(tmp_path / "b", "gen-b", {"q0": "x", "q1": "x y z", "q2": "x x", "q3": "x"},
                 label="second")
    assert settings_mismatch([run.config, load_run(b).config], NAME) == []
    result = compare_runs([a, b], n_resamples=100)
    board = {entry["system"]: entry for entry in result["metrics"]["words"]["leaderboard"]}
    assert board["gen-a"]["mean"] == pytest.approx(2.0) and board["gen-b"]["mean"] == pytest.approx(1.75)
    c = make_run(tmp_path / "c", "gen-c", {"q0": "x", "q1": "x", "q2": "x", "q3": "x"}, seed=7)
    with pytest.raises(UserError, match="seed"):
        compare_runs([a, c])


def test_without_a_reader_a_run_loads_its_judgments_only(tmp_path: Path) -> None:
    class Bare(LengthBench):
        score_reader = None

    registry.register_benchmark("barebench")(Bare)
    try:
        assert score_reader("barebench") is None
        with pytest.raises(KeyError):
            reported_value({}, "barebench", "words", "s")
    finally:
        registry._BENCHMARKS.pop("barebench", None)


def test_judge_accuracy_runs_of_two_judges_compare(tmp_path: Path) -> None:
    """LigBench judge accuracy: the judge is the system under test, so runs of two judges compare
    (no settings mismatch) under the judges' names, with one 1/0 row per judged pair."""
    import json
    import re
    import shutil

    from ideaharness.benchmarks.ligbench.judge_eval import JudgeAccuracyConfig

    fixture = Path(__file__).parents[1] / "ligbench" / "fixtures" / "pairiq_mini.jsonl"
    corpus = tmp_path / "corpus" / "pairiq_mini.jsonl"
    corpus.parent.mkdir()
    shutil.copy(fixture, corpus)

    def judge(longer: bool) -> ScriptedModel:
        def reply(messages: list[dict[str, str]]) -> str:
            a, b = re.findall(r"Main target: (.+)", messages[-1]["content"])[:2]
            v = 1.0 if (len(a) > len(b)) == longer else 0.0
            return json.dumps({"rating": v, "soundness": v, "contribution": v})
        return ScriptedModel(reply, model=f"scripted/{'longer' if longer else 'shorter'}")

    for longer in (True, False):
        model = judge(longer)
        asyncio.run(arun("ligbench-judge", config=JudgeAccuracyConfig(judge=model.model, corpus=str(corpus),
                                                                      n_pairs=8),
                         options=ExecutionOptions(out=tmp_path / model.model.split("/")[1], progress=False),
                         judge=model))
    result = compare_runs([tmp_path / "longer", tmp_path / "shorter"], n_resamples=100)
    assert {s["label"] for s in result["systems"]} == {"scripted/longer", "scripted/shorter"}
    board = result["metrics"]["judge_accuracy/rating"]["leaderboard"]
    results = json.loads((tmp_path / "longer" / "results.json").read_text())
    accuracy = results["dimensions"]["rating"]
    entry = next(b for b in board if b["system"] == "scripted/longer")
    assert entry["mean"] == pytest.approx(accuracy["accuracy"]) and entry["n"] == accuracy["n"] > 0
    # opposite judges: on every pair exactly one of them is right
    assert sum(b["mean"] for b in board) == pytest.approx(1.0)
