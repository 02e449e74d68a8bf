"""Every registered benchmark runs through the one runner with the same execution flags: a
parametrised test over the registry, each run against two real loopback OpenAI-compatible servers
(one for the generator, one for the judge)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ideaharness.runner.registry import benchmarks
from ideaharness.runs.store import shard_of
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import run_cli
from tests.runner.registry_support import fixture_for, registry_fixtures


def data_args(name: str, tmp_path: Path) -> list[str]:
    """The cheapest real data of a registered benchmark: its ``tests/<package>/registry_fixtures.py``
    (:mod:`tests.runner.registry_support`); a benchmark without one fails here."""
    return fixture_for(name).data_args(tmp_path)


def test_every_registered_benchmark_has_registry_fixtures() -> None:
    names = sorted(benchmarks())
    assert names, "the benchmark registry is empty"
    declared = registry_fixtures()
    missing = [n for n in names if n not in declared]
    assert not missing, f"no tests/<package>/registry_fixtures.py declares {missing}"
    assert not set(declared) - set(names), "fixtures for a benchmark that is not registered"


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[OpenAICompatServer, ...]]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))

    def reply(body: dict[str, Any]) -> str:
        return "I am not sure."  # every reply is a parse failure: counted, never a score

    with OpenAICompatServer(reply) as gen, OpenAICompatServer(reply) as judge:
        yield gen, judge


@pytest.mark.parametrize("name", sorted(benchmarks()))
def test_shared_flags_behave_the_same_on_every_benchmark(
    name: str, servers: tuple[OpenAICompatServer, OpenAICompatServer], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gen_server, judge_server = servers
    bench = benchmarks()[name]
    out = tmp_path / "run"
    has_generator = any(f in bench.config_class.model_fields for f in ("generator", "generators"))
    endpoint = ["--base-url", gen_server.base_url, "--judge-base-url",
                judge_server.base_url] if has_generator \
        else ["--base-url", judge_server.base_url]
    args = ["run", name, *data_args(name, tmp_path), "--generator", "openai/gen", "--judge", "openai/judge",
            *endpoint, "--price", "1,2", "--limit", "1", "--shard", "0/2", "--max-attempts", "1",
            "--max-retries", "0", "--timeout", "20", "--no-progress", "--out", str(out)]
    if not has_generator:
        args.remove("--generator")
        args.remove("openai/gen")
    code, _, err = run_cli(args, capsys)
    if code == 1 and "to run (data has" in err:  # every item is in the other shard: take that one
        args[args.index("0/2")] = "1/2"
        code, _, err = run_cli(args, capsys)
    assert code in (0, 3), err
    results = json.loads((out / "results.json").read_text())
    # selection: shard first, then limit -> the first instance of shard 0/2, in data order
    selection = results["selection"]
    assert selection["order"] == "shard, then limit" and selection["shard"] in ([0, 2], [1, 2])
    assert selection["selected"] == 1 and selection["limit"] == 1
    # routing: generator calls only to the generator's server, judge calls only to the judge's
    assert all(r.body["model"] == "gen" for r in gen_server.requests)
    assert all(r.body["model"] == "judge" for r in judge_server.requests)
    calls = len(gen_server.requests) + len(judge_server.requests)
    assert calls > 0
    if has_generator:
        assert gen_server.requests
    # price: cost in results.json and in the report
    words = sum(len(json.dumps(r.body["messages"]).split()) for r in [*gen_server.requests,
                                                                        *judge_server.requests])
    assert results["cost_usd"] is not None and results["cost_usd"] > 0 and words
    report = (out / "report.html").read_text()
    assert "cost USD" in report and f"{results['cost_usd']:.6f}" in report
    assert results["settings"]["execution"]["price"] == {"*": [1.0, 2.0]}  # the bare IN,OUT: every role
    assert results["benchmark"] == name and "seed" in results["seeds"]
    # max-attempts 1: one call per judgment
    assert results["settings"]["execution"]["max_attempts"] == 1
    assert results["settings"]["execution"]["progress"] is False  # the "no" side of a --yes/--no pair
    # every setting that changes results is in results.json, not only config.json
    config = json.loads((out / "config.json").read_text())
    recorded = results["settings"]["config"]
    assert {k: config[k] for k in recorded} == recorded
    assert set(config) - set(recorded) == {"input_sha256", "produced_by"}
    assert results["settings"]["input_sha256"] == config["input_sha256"]
    # the prompt templates the benchmark renders, hashed (a resume refuses when one changed)
    assert results["settings"]["template_sha256"] == config["produced_by"]["templates"]
    assert config["produced_by"]["templates"]
    assert "seed" in recorded and ("judge" in recorded or "judges" in recorded)  # a panel: judges
    assert "openai/judge" in results["settings"]["models"].values()
    if has_generator:
        assert "openai/gen" in results["settings"]["models"].values()


def test_shard_then_limit_is_one_rule_for_every_benchmark() -> None:
    """Shard i of a limited run is a subset of the unlimited shard i (the order is shard, then limit)."""
    from ideaharness.runner.options import ExecutionOptions
    from ideaharness.runner.run import select_items

    class Item:
        def __init__(self, i: int) -> None:
            self.id = f"item-{i}"

    items = [Item(i) for i in range(40)]
    for index in range(3):
        whole = select_items(items, ExecutionOptions(shard=(index, 3)))
        limited = select_items(items, ExecutionOptions(shard=(index, 3), limit=4))
        assert [i.id for i in limited] == [i.id for i in whole][:4]
        assert all(shard_of(i.id, 3) == index for i in whole)
