"""A benchmark added from outside the project declares its per-instance scores (``Benchmark.scores``)
and its metric (a ``MetricSpec``): the runner writes ``scores.jsonl`` and the headline from them, and
``load_run``, ``compare`` and the viewer read its runs without any edit to ``ideaharness.analysis``.
A run saved before ``scores.jsonl`` existed is scored again by the registered benchmark."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import Field

from ideaharness.analysis import load_run
from ideaharness.analysis.compare import compare_runs, settings_mismatch
from ideaharness.api import arun
from ideaharness.errors import UserError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.aggregate import percentile
from ideaharness.report.viewer import viewer_payload
from ideaharness.runner import Benchmark, BenchmarkConfig, MetricSpec, registry
from ideaharness.runner.options import ExecutionOptions
from ideaharness.runner.protocol import Score
from ideaharness.runs.scores import SCORES_FILE, read_scores

NAME = "lengthbench"
registry.register_metric(MetricSpec(f"{NAME}.words", higher_is_better=True, source="test"))
registry.register_metric(MetricSpec(f"{NAME}.p80_words", higher_is_better=True, aggregate=percentile(80),
                                    source="test"))


class LengthConfig(BenchmarkConfig):
    generator: str = Field("scripted/gen", description="The model that answers.")
    label: str = Field("", description="A note that never changes a score.")


class LengthBench(Benchmark):
    """Score = the parsed reply length in words (its mean and its 80th percentile)."""

    config_class = LengthConfig
    free_settings = frozenset({"label"})

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
        return {}

    def scores(self, records: Sequence[Any], results: dict[str, Any]) -> list[Score]:
        out = []
        for _step, inst, _key, data in records:
            ok = data["judgment"]["parse_ok"]
            value = float(data["judgment"]["parsed"]) if ok else None
            for metric in ("words", "p80_words"):
                out.append(Score(metric=f"{NAME}.{metric}", instance_id=inst, value=value,
                                 reason=None if ok else "reply unparsed"))
        return out


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


def _headline(results: dict[str, Any], metric: str) -> dict[str, Any]:
    return next(m for m in results["metrics"] if m["metric"] == metric)


def test_a_registered_benchmark_brings_its_own_scores(bench: str, tmp_path: Path) -> None:
    a = make_run(tmp_path / "a", "gen-a", {"q0": "one two three", "q1": "one", "q2": "what?", "q3": "a b"})
    stored = read_scores(a)
    assert stored is not None and len(stored) == 8
    run = load_run(a)
    # the reply that did not parse is a judgment row and an unscored row (NaN, with its reason)
    words = run.scores[run.scores["metric"] == f"{NAME}.words"]
    assert sorted(words.dropna(subset=["value"])["instance_id"]) == ["q0", "q1", "q3"]
    assert words.loc[words["instance_id"] == "q2", "reason"].tolist() == ["reply unparsed"]
    assert len(run.judgments) == 4 and (~run.judgments["parse_ok"]).sum() == 1
    # the headline is computed from the scores through the spec: a mean, and a p80 (numpy linear)
    mean, p80 = _headline(run.results, f"{NAME}.words"), _headline(run.results, f"{NAME}.p80_words")
    assert mean["value"] == pytest.approx(2.0) and mean["n"] == 3
    assert p80["value"] == pytest.approx(2.6) and p80["n"] == 3
    assert set(viewer_payload(run)["instance_scores"]) == {f"{run.system}\u0000q{i}" for i in (0, 1, 3)}

    # a free setting (``label``) may differ between compared runs; a result-changing one may not
    b = make_run(tmp_path / "b", "gen-b", {"q0": "x", "q1": "x y z", "q2": "x x", "q3": "x"},
                 label="second")
    assert settings_mismatch([run.config, load_run(b).config], NAME) == []
    result = compare_runs([a, b], n_resamples=100)
    board = {entry["system"]: entry for entry in result["metrics"][f"{NAME}.words"]["leaderboard"]}
    assert board["gen-a"]["mean"] == pytest.approx(2.0) and board["gen-b"]["own_mean"] == pytest.approx(1.75)
    # ranked on the instances both were scored on (gen-a's q2 did not parse): gen-b over q0, q1, q3
    assert board["gen-b"]["mean"] == pytest.approx(5 / 3)
    assert (board["gen-b"]["n"], board["gen-b"]["own_n"]) == (3, 4)
    p80s = {entry["system"]: entry for entry in result["metrics"][f"{NAME}.p80_words"]["leaderboard"]}
    assert p80s["gen-a"]["mean"] == pytest.approx(p80["value"]) and p80s["gen-a"]["ci95"] == p80["ci"]
    c = make_run(tmp_path / "c", "gen-c", {"q0": "x", "q1": "x", "q2": "x", "q3": "x"}, seed=7)
    with pytest.raises(UserError, match="seed"):
        compare_runs([a, c])


def test_a_run_without_scores_file_is_scored_by_its_benchmark(bench: str, tmp_path: Path) -> None:
    """A run directory written before scores.jsonl: load_run asks the registered benchmark's
    ``scores()`` and gets the same rows; an unknown benchmark loads with judgments only."""
    a = make_run(tmp_path / "a", "gen-a", {"q0": "one two three", "q1": "one", "q2": "what?", "q3": "a b"})
    before = load_run(a).scores
    (a / SCORES_FILE).unlink()
    again = load_run(a).scores
    assert again.equals(before)
    assert load_run(a, lookup=lambda name: None).scores.empty
    config = json.loads((a / "config.json").read_text())
    (a / "config.json").write_text(json.dumps({**config, "benchmark": "nobench"}))
    assert load_run(a).scores.empty and len(load_run(a).judgments) == 4


def test_a_scores_file_with_a_bad_line_names_it(bench: str, tmp_path: Path) -> None:
    a = make_run(tmp_path / "a", "gen-a", {"q0": "x", "q1": "x", "q2": "x", "q3": "x"})
    with (a / SCORES_FILE).open("a") as f:
        f.write('{"metric": "x"}\n')
    with pytest.raises(UserError, match=r"scores.jsonl, line 9: not a score"):
        load_run(a)


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
    board = result["metrics"]["ligbench.judge_accuracy[rating]"]["leaderboard"]
    results = json.loads((tmp_path / "longer" / "results.json").read_text())
    accuracy = results["dimensions"]["rating"]
    entry = next(b for b in board if b["system"] == "scripted/longer")
    assert entry["mean"] == pytest.approx(accuracy["accuracy"]) and entry["n"] == accuracy["n"] > 0
    # opposite judges: on every pair exactly one of them is right
    assert sum(b["mean"] for b in board) == pytest.approx(1.0)
