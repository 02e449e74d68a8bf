"""The Python API dispatches through the benchmark registry with the CLI's parameters."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import ideaharness
from ideaharness.api import IN_LOOP_MESSAGE, available_benchmarks
from ideaharness.benchmarks.ideabench import IdeaBenchConfig
from ideaharness.errors import UserError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.runner.arguments import resolve
from ideaharness.runner.registry import benchmarks, get_benchmark


def test_unknown_benchmark() -> None:
    with pytest.raises(UserError, match="unknown benchmark 'nope'; choose one of .*ideabench"):
        ideaharness.run("nope")


def test_every_builtin_benchmark_is_registered_without_a_hand_kept_list() -> None:
    assert {"ideabench", "aiideabench", "researchbench", "ligbench", "ligbench-judge"} <= set(benchmarks())
    assert available_benchmarks() == sorted(benchmarks())


@pytest.mark.parametrize("name", sorted(benchmarks()))
def test_unknown_argument_is_named(name: str) -> None:
    with pytest.raises(UserError, match="not_a_flag"):
        ideaharness.run(name, not_a_flag=1)


def test_resolve_routes_config_options_and_models() -> None:
    model = ScriptedModel(["x"], model="scripted/a")
    args = resolve(get_benchmark("ideabench"), generator=model, judge="openai/x", n_ideas=4, limit=2,
                   no_cache=True, scenario=["high"], indicator=["novelty"], price="1,2", shard="1/3")
    assert isinstance(args.config, IdeaBenchConfig)
    assert args.config.generator == "scripted/a" and args.config.judge == "openai/x"
    assert args.config.n_ideas == 4 and args.config.scenarios == ["high"]
    assert args.config.indicators[0].definition  # a bare default name keeps its definition
    assert args.options.limit == 2 and args.options.use_cache is False
    assert args.options.price == {"*": (1.0, 2.0)} and args.options.shard == (1, 3)
    assert args.models == {"generator": model}


def test_config_file_then_keywords(tmp_path: Path) -> None:
    """A YAML or JSON file sets values; keywords (the CLI's flags) override them."""
    yaml_file = tmp_path / "run.yaml"
    yaml_file.write_text("n-ideas: 5\nseed: 7\nlimit: 3\nscenario: [low, high]\nmax_comparisons: 4\n")
    with pytest.raises(UserError, match="max_comparisons"):  # a LigBench setting is not an IdeaBench one
        resolve(get_benchmark("ideabench"), config=yaml_file)
    yaml_file.write_text("n-ideas: 5\nseed: 7\nlimit: 3\nscenario: [low, high]\n")
    args = resolve(get_benchmark("ideabench"), config=yaml_file, seed=9)
    assert (args.config.n_ideas, args.config.seed, args.options.limit) == (5, 9, 3)
    assert args.config.scenarios == ["low", "high"]
    json_file = tmp_path / "lig.json"
    json_file.write_text(json.dumps({"corpus": "c", "max_comparisons": 4, "parity": True}))
    lig = resolve(get_benchmark("ligbench"), config=json_file, min_comparisons=2)
    assert lig.config.scoring.elo.max_comparisons == 4 and lig.config.scoring.elo.min_comparisons == 2
    assert lig.config.scoring.order == "fixed" and lig.config.scoring.elo.clamp == "each-step"
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(UserError, match=r"bad\.json: expected a mapping"):
        resolve(get_benchmark("ideabench"), config=tmp_path / "bad.json")


def test_run_inside_a_running_loop_says_to_await_arun() -> None:
    async def notebook_cell() -> None:
        ideaharness.run("ideabench", limit=1)

    with pytest.raises(UserError) as info:
        asyncio.run(notebook_cell())
    assert str(info.value) == IN_LOOP_MESSAGE and "await ideaharness.arun" in IN_LOOP_MESSAGE


def test_config_file_flag_names_duplicates_and_unknown_keys_are_named(tmp_path: Path) -> None:
    from ideaharness.errors import DataError
    from ideaharness.runner.arguments import resolve
    from ideaharness.runner.registry import get_benchmark

    bench = get_benchmark("ideabench")
    flags = tmp_path / "flags.yaml"
    flags.write_text("no-progress: true\nlimit: 2\n")
    args = resolve(bench, config=flags)
    assert args.options.progress is False and args.options.limit == 2  # a flag name, "no" side included
    twice = tmp_path / "twice.yaml"
    twice.write_text("limit: 1\nlimit: 3\n")
    with pytest.raises(DataError, match=r"twice.yaml.*line 2: key 'limit' given twice"):
        resolve(bench, config=twice)
    twice_json = tmp_path / "twice.json"
    twice_json.write_text('{"limit": 1, "limit": 3}')
    with pytest.raises(DataError, match="given twice"):
        resolve(bench, config=twice_json)
    typo = tmp_path / "typo.yaml"
    typo.write_text("generatr: openai/m\n")
    with pytest.raises(UserError, match=r"typo.yaml: unknown argument\(s\) generatr for ideabench"):
        resolve(bench, config=typo)
    with pytest.raises(UserError, match="is a folder"):
        resolve(bench, config=tmp_path)
