"""Judge reliability in every run (issue 11, item 1): the reliability block of every benchmark's
results.json, degenerate-judge warnings in the console and report.html, position consistency from
re-asks and two-order judgments, and counterbalanced placement of the target."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import ideaharness
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.reliability.adapters import adapter_for, undeclared_steps
from ideaharness.metrics.reliability.adapters import run_records as views_records
from ideaharness.runner.registry import benchmarks
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import run_cli
from tests.ideabench.conftest import ideabench_responder
from tests.runner.registry_support import fixture_for
from tests.runner.test_every_benchmark import data_args, servers  # noqa: F401  (fixture)


def _records(out: Path, step: str) -> list[tuple[str, dict[str, Any]]]:
    path = out / "records" / f"{step}.jsonl"
    return [(r["key"], r["data"]) for r in map(json.loads, path.read_text().splitlines())]


def _position_only(base: Any) -> Any:
    """IdeaBench replies whose rankings are always the shown order A, B, C, D (content-blind)."""

    def respond(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if "Rank the following" in user:
            labels = re.search(r"exactly once \(([A-Z, ]+)\)", user).group(1).split(", ")
            return json.dumps({"ranking": labels, "rationale": "first come, first served"})
        return base(messages)

    return respond


def _cli_models(name: str, gen: OpenAICompatServer, judge: OpenAICompatServer) -> list[str]:
    bench = benchmarks()[name]
    has_generator = any(f in bench.config_class.model_fields for f in ("generator", "generators"))
    return ["--generator", "openai/gen", "--judge", "openai/judge", "--base-url", gen.base_url,
            "--judge-base-url", judge.base_url] if has_generator \
        else ["--judge", "openai/judge", "--base-url", judge.base_url]


def _judged(out: Path, name: str) -> tuple[list[Any], list[str]]:
    """The run's records and the steps among them its benchmark reads as judgments."""
    records = views_records(str(out))
    adapters = benchmarks()[name].judgment_adapters
    return records, sorted({step for step, _, _, data in records
                            if isinstance(data.get("judgment"), dict) and adapter_for(step, adapters)})


@pytest.mark.parametrize("name", sorted(benchmarks()))
def test_every_benchmark_results_carry_the_reliability_block(
    name: str, servers: tuple[OpenAICompatServer, OpenAICompatServer], tmp_path: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every reply unparsable: whatever got judged shows 100% parse failures, and a step read as a
    judgment is never missing from the block."""
    gen, judge = servers
    out = tmp_path / "run"
    args = ["run", name, *data_args(name, tmp_path), *_cli_models(name, gen, judge), "--limit", "1",
            "--max-attempts", "1", "--max-retries", "0", "--timeout", "20", "--no-progress",
            "--out", str(out)]
    code, _, _ = run_cli(args, capsys)
    assert code in (0, 3)
    results = json.loads((out / "results.json").read_text())
    section = results["reliability"]
    assert set(section) == {"metrics", "warnings", "human_ceiling"}
    _, judged = _judged(out, name)
    assert bool(section["metrics"]) == bool(judged), (judged, section["metrics"])
    judges = [j for block in section["metrics"].values() for j in block["judges"].values()]
    assert all(j["parse_failure_rate"] == 1.0 for j in judges)
    report = (out / "report.html").read_text()
    assert "Judge reliability" in report and "parse failures" in report


@pytest.mark.parametrize("name", sorted(benchmarks()))
def test_every_judged_benchmark_has_a_non_empty_reliability_block(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replies that parse (the benchmark's registry fixture): a run that records judgments has a
    reliability block with a parsed judgment for each judged step, and every step recorded
    through the judge is declared in the benchmark's ``judgment_adapters`` (as a judgment or as
    not one): a benchmark whose records hold judgments it declares no adapter for fails here."""
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    fixture = fixture_for(name)
    out = tmp_path / "run"
    with OpenAICompatServer(fixture.reply) as gen, OpenAICompatServer(fixture.reply) as judge:
        code, _, err = run_cli(["run", name, *fixture.data_args(tmp_path), *fixture.extra_args,
                             *_cli_models(name, gen, judge), "--limit", "1", "--timeout", "20",
                             "--no-progress", "--out", str(out)], capsys)
    assert code in (0, 3), err
    records, judged = _judged(out, name)
    assert not undeclared_steps(records, benchmarks()[name].judgment_adapters), \
        f"{name}: steps recorded through the judge but not in its judgment_adapters"
    assert judged, f"{name}: the fixture run recorded no judgment (its replies must parse)"
    section = json.loads((out / "results.json").read_text())["reliability"]
    assert section["metrics"], f"{name}: judgments recorded but the reliability block is empty"
    parsed = {m: sum(j["parsed"] for j in b["judges"].values()) for m, b in section["metrics"].items()}
    for step in judged:
        assert any(parsed[m] for m in parsed if m == step or m.startswith((f"{step}[", step))), \
            f"{name}: no parsed judgment of {step} in the reliability block ({parsed})"


def test_a_judgment_step_no_adapter_declares_is_found(tmp_path: Path) -> None:
    """The check above, on a benchmark that declares nothing: its judged step is reported."""
    records = [("echo", "toy-0", "", {"judgment": {"judge_model": "m", "parse_ok": True, "parsed": "x"}}),
               ("generate/low", "t/0", "", {"judgment": {"judge_model": "m", "parse_ok": True}}),
               ("ideas", "t/0", "", {"ideas": []})]
    assert undeclared_steps(records, {}) == ["echo", "generate/low"]
    assert undeclared_steps(records, {"generate/": None}) == ["echo"]
    assert undeclared_steps(records, {"generate/": None, "echo": lambda *a: []}) == []


def test_always_equal_judge_is_flagged_in_console_and_report(
    servers: tuple[OpenAICompatServer, OpenAICompatServer], tmp_path: Path,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    """LigBench judge accuracy with a judge that answers "equal" on every pair."""
    equal = '{"rating": 0.5, "soundness": 0.5, "contribution": 0.5}'
    with OpenAICompatServer(lambda body: equal) as judge:
        out = tmp_path / "run"
        code, _, _ = run_cli(["run", "ligbench-judge", *data_args("ligbench-judge", tmp_path),
                              "--pairs", "12", "--judge", "openai/judge", "--base-url", judge.base_url,
                              "--no-progress", "--out", str(out)], capsys)
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    warnings = results["reliability"]["warnings"]
    assert any("ligbench/judge_pair[rating]" in w and "constant judge" in w for w in warnings), warnings
    rating = results["reliability"]["metrics"]["ligbench/judge_pair[rating]"]["judges"]["openai/judge"]
    assert rating["tie_rate"] == 1.0 and rating["constant"]
    assert rating["consistency"]["agreement"] == 1.0 and not rating["consistency"]["informative"]
    assert [w["rule"] for w in rating["warnings"]] == ["constant_judge"]  # not "ok", not "follows positions"
    # the pairs' venue-debiased human scores are the labels: a judge that always ties is never right
    assert rating["human"]["measure"] == "accuracy" and rating["human"]["value"] == 0.0
    assert results["reliability"]["human_ceiling"] is None  # accuracy on pairs: not the ceiling's statistic
    report = (out / "report.html").read_text()
    assert '⚠ ligbench/judge_pair[rating]: judge openai/judge is a constant judge: it answered "equal"' in \
        report.replace("&#34;", '"').replace("&quot;", '"')
    assert "Si et al" not in report and "human–human" not in report


def test_always_equal_judge_warning_reaches_the_console(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    equal = '{"rating": 0.5, "soundness": 0.5, "contribution": 0.5}'
    with OpenAICompatServer(lambda body: equal) as judge:
        with pytest.raises(SystemExit) as exc:
            ideaharness.cli.main(["run", "ligbench-judge", *data_args("ligbench-judge", tmp_path), "--pairs",
                                  "12", "--judge", "openai/judge", "--base-url", judge.base_url,
                                  "--no-progress", "--out", str(tmp_path / "run")])
            raise SystemExit(0)
    assert not exc.value.code
    printed = capsys.readouterr().out
    assert "Judge reliability" in printed and "agreement" in printed and "accuracy" in printed
    assert "⚠ ligbench/judge_pair[rating]: judge openai/judge is a constant judge" in printed
    assert "Si et al" not in printed and "ceiling" not in printed  # never on its own, never twice


def test_a_judge_that_flips_with_position_has_zero_consistency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Always "A is better": the two orders of each pair never agree (two-order agreement 0)."""
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    first = '{"rating": 1, "soundness": 1, "contribution": 1}'
    with OpenAICompatServer(lambda body: first) as judge:
        results = ideaharness.run("ligbench-judge", **_lig_data(tmp_path), n_pairs=12, judge="openai/judge",
                                  base_url=judge.base_url, out=tmp_path / "run", progress=False)
    block = results["reliability"]["metrics"]["ligbench/judge_pair[rating]"]["judges"]["openai/judge"]
    assert block["consistency"]["agreement"] == pytest.approx(0.0)
    assert block["consistency"]["n_pairs"] >= 10
    assert any("constant judge: it preferred the item shown first" in w and "follow positions" in w
               for w in results["reliability"]["warnings"])
    assert block["position"]["position"] == "first" and block["position"]["p_adjusted"] < 0.05


def _lig_data(tmp_path: Path) -> dict[str, Any]:
    args = data_args("ligbench-judge", tmp_path)
    return {"corpus": args[args.index("--corpus") + 1], "min_gap": 0}


def test_position_only_judge_scores_exactly_chance_with_balanced_placement(tmp_path: Path) -> None:
    """12 instances, k = 4 ranked items: the target sits at each position 3 times, so a judge that
    ranks by position alone gets Insight Score (0+1+2+3)/4 = 0.5 exactly (was 0.333 by chance
    draw); --parity keeps the published order (target first: 0)."""
    model = ScriptedModel(_position_only(ideabench_responder()))
    results = ideaharness.run("ideabench", generator=model, judge=model, limit=12, out=tmp_path / "a",
                              progress=False, use_cache=False)
    insight = results["scenarios"]["low"]["insight"]
    assert insight["novelty"]["m"] == 12
    assert insight["novelty"]["insight_score"] == pytest.approx(0.5)
    assert insight["feasibility"]["insight_score"] == pytest.approx(0.5)
    originals = [d for k, d in _records(tmp_path / "a", "rank_low_novelty") if not k.endswith("#reask")]
    labels = sorted(d["target_label"] for d in originals)
    assert labels == sorted("ABCD" * 3)
    # re-asks (--consistency-sample 0.1, at least one) are recorded, permuted and never scored
    reasks = [(k, d) for k, d in _records(tmp_path / "a", "rank_low_novelty") if k.endswith("#reask")] + \
             [(k, d) for k, d in _records(tmp_path / "a", "rank_low_feasibility") if k.endswith("#reask")]
    assert reasks
    parity = ideaharness.run("ideabench", generator=model, judge=model, limit=12, out=tmp_path / "b",
                             parity=True, progress=False, use_cache=False, consistency_sample=0.0)
    assert parity["scenarios"]["low"]["insight"]["novelty"]["insight_score"] == 0.0
    assert not any(k.endswith("#reask") for k, _ in _records(tmp_path / "b", "rank_low_novelty"))


def test_position_only_ranking_judge_is_inconsistent_on_reasks(tmp_path: Path) -> None:
    """Every ranking re-asked (F = 1) with positions deranged: a position-only judge's ranking of the
    items changes every time, and the run's reliability block says so."""
    model = ScriptedModel(_position_only(ideabench_responder()))
    results = ideaharness.run("ideabench", generator=model, judge=model, limit=4, out=tmp_path / "r",
                              progress=False, use_cache=False, consistency_sample=1.0)
    block = results["reliability"]["metrics"]["rank/low/novelty"]["judges"]
    (judge,) = block.values()
    cons = judge["consistency"]
    assert cons["n_pairs"] == 4
    assert cons["agreement"] <= cons["chance"] + 0.35
    again = ideaharness.run("ideabench", generator=model, judge=model, limit=4, out=tmp_path / "r",
                            progress=False, use_cache=False, consistency_sample=1.0)
    assert again["scenarios"] == results["scenarios"]  # re-asks never change the scores
