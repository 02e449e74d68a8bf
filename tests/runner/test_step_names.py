"""The one step-naming rule (ideaharness.runner.step_names; docs/architecture.md): every registered
benchmark's judgment-adapter keys and every step a fixture run of it records follow it, except the
named legacy names of LigBench and ResearchBench."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from ideaharness.runner.registry import benchmarks
from ideaharness.runner.step_names import LEGACY_STEP_NAMES, step_name_problem
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import run_cli
from tests.runner.registry_support import fixture_for


@pytest.mark.parametrize(
    "step", ["critique", "generate/low", "rank/low/Significance", "review/", "judge_pair", "review/idea"]
)
def test_names_that_follow_the_rule(step: str) -> None:
    assert step_name_problem(step, benchmark="newbench", benchmark_names=["newbench", "ligbench"]) is None


@pytest.mark.parametrize(
    ("step", "problem"),
    [
        ("Rank", "action 'Rank' is not lower-case snake_case"),
        ("rank-pair", "action 'rank-pair' is not lower-case snake_case"),
        ("rank//x", "qualifier '' is empty or holds whitespace"),
        ("rank/low scenario", "qualifier 'low scenario' is empty or holds whitespace"),
        ("newbench_rank", "action 'newbench_rank' carries the benchmark prefix 'newbench'"),
        ("newbench/rank", "action 'newbench' carries the benchmark prefix 'newbench'"),
        ("ligbench/compare", "action 'ligbench' carries the benchmark prefix 'ligbench'"),
    ],
)
def test_names_that_break_the_rule_say_why(step: str, problem: str) -> None:
    assert step_name_problem(step, benchmark="newbench", benchmark_names=["newbench", "ligbench"]) == problem


def test_legacy_names_pass_only_for_their_own_benchmark() -> None:
    assert step_name_problem("ligbench/compare", benchmark="ligbench", benchmark_names=benchmarks()) is None
    assert step_name_problem("researchbench_rank_pair", benchmark="ligbench", benchmark_names=benchmarks())
    assert step_name_problem("ligbench/compare_v2", benchmark="ligbench", benchmark_names=benchmarks())


def test_the_legacy_list_names_only_names_still_in_use() -> None:
    """An entry its benchmark no longer records (renamed with a version bump) must leave the list."""
    for name, steps in LEGACY_STEP_NAMES.items():
        assert name in benchmarks(), f"legacy step names for {name}, which is not registered"
        folder = Path(inspect.getfile(benchmarks()[name])).parent
        source = "\n".join(p.read_text(encoding="utf-8") for p in folder.rglob("*.py"))
        unused = sorted(s for s in steps if f'"{s}"' not in source)
        assert not unused, f"{name}: legacy step names no longer in its source: {unused}"


@pytest.mark.parametrize("name", sorted(benchmarks()))
def test_judgment_adapter_keys_follow_the_rule(name: str) -> None:
    bad = {key: step_name_problem(key, benchmark=name, benchmark_names=benchmarks())
           for key in benchmarks()[name].judgment_adapters}
    assert not {k: v for k, v in bad.items() if v}, f"{name}: adapter keys break the step-naming rule"


@pytest.mark.parametrize("name", sorted(benchmarks()))
def test_every_recorded_step_follows_the_rule(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-instance run on the benchmark's registry fixture (replies that parse), default settings."""
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    fixture = fixture_for(name)
    bench = benchmarks()[name]
    out = tmp_path / "run"
    with OpenAICompatServer(fixture.reply) as gen, OpenAICompatServer(fixture.reply) as judge:
        has_generator = any(f in bench.config_class.model_fields for f in ("generator", "generators"))
        models = ["--generator", "openai/gen", "--judge", "openai/judge", "--base-url", gen.base_url,
                  "--judge-base-url", judge.base_url] if has_generator \
            else ["--judge", "openai/judge", "--base-url", judge.base_url]
        code, _, err = run_cli(["run", name, *fixture.data_args(tmp_path), *fixture.extra_args, *models,
                             "--limit", "1", "--timeout", "20", "--no-progress", "--out", str(out)], capsys)
    assert code in (0, 3), err
    steps = {json.loads(line)["step"] for f in (out / "records").glob("*.jsonl") if f.name != "scores.jsonl"
             for line in f.read_text(encoding="utf-8").splitlines() if line.strip()}
    assert steps, f"{name}: the fixture run recorded no step"
    bad = {s: step_name_problem(s, benchmark=name, benchmark_names=benchmarks()) for s in sorted(steps)}
    assert not {s: p for s, p in bad.items() if p}, f"{name}: recorded steps break the step-naming rule"
