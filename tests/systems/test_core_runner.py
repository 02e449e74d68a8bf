"""A system through the runner (issue 20), on a toy benchmark registered here with the toy
contract: ``--ideas`` and ``--generator cmd:`` runs, the ``idea_sources`` block (asked, missing,
extra), missing instances as failed units (exit 3) with the extras line on the console, identity
(an edited ideas file is refused; an old config without the new keys resumes), the usage table
crediting a shared client once, and systems left out of ``--batch`` wrapping."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

import ideaharness
from ideaharness.cli.app import run_app
from ideaharness.runner import Benchmark, registry
from ideaharness.runner.protocol import BenchmarkConfig
from ideaharness.runner.run import usage_table
from ideaharness.systems import GenerationTask, SystemFields, register_contract
from ideaharness.systems.contract import _CONTRACTS
from tests.cli_support import run_cli
from tests.systems.test_core import TOY_CONTRACT

NAME = "toybench"


class ToyConfig(SystemFields, BenchmarkConfig):
    generator: str = Field("scripted/echo", description="The generator.")
    judge: str = Field("scripted/echo", description="The judge.")
    items: int = Field(4, ge=1, description="Items in the toy data.")


class Item(BaseModel):
    id: str
    topic: str


class ToyBench(Benchmark):
    """Generates one idea per item (through generate_step) and judges it by echo."""

    title = "Toy systems"
    summary = "A toy benchmark for systems."
    config_class = ToyConfig

    def load(self) -> list[Item]:
        return [Item(id=f"t{i}", topic=f"topic number {i}") for i in range(self.config.items)]

    def messages(self, item: Item) -> list[dict[str, str]]:
        return [{"role": "user", "content": f"Give one idea on {item.topic}."}]

    async def execute(self, ctx: Any, items: list[Item]) -> None:
        generator = ctx.model("generator")

        async def generate(item: Item) -> None:
            register_contract(TOY_CONTRACT)  # also on a Ray worker (a real benchmark registers at import)
            task = GenerationTask(NAME, "generate", item.id, "", 0, {"topic": item.topic}, self.config.seed)
            await ctx.steps.generate_step("generate", item.id, "", generator, self.messages(item),
                                          lambda t: {"idea": t}, task=task, max_tokens=64)

        await ctx.steps.run_phases(items, [("generate", generate)])

    def aggregate(self, ctx: Any, items: list[Item]) -> dict[str, Any]:
        records = [ctx.store.get("generate", i.id) for i in items]
        return {"generated": sum(1 for r in records if r and r["judgment"]["parse_ok"])}


@pytest.fixture(autouse=True)
def toybench(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    register_contract(TOY_CONTRACT)
    registry.register_benchmark(NAME)(ToyBench)
    yield NAME
    _CONTRACTS.pop(NAME, None)
    registry._BENCHMARKS.pop(NAME, None)
    run_app.registered_commands[:] = [c for c in run_app.registered_commands if c.name != NAME]


def ideas_file(path: Path, ids: list[str]) -> Path:
    path.write_text("".join(json.dumps({"instance_id": i, "idea": f"a filed idea for {i} here"}) + "\n"
                            for i in ids))
    return path


def test_an_ideas_run_reports_asked_missing_and_extra_and_exits_3(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    ideas = ideas_file(tmp_path / "mine.jsonl", ["t0", "t1", "t3", "zz-extra"])
    out = tmp_path / "run"
    command = ["run", NAME, "--ideas", str(ideas), "--no-progress", "--out", str(out)]
    code, stdout, err = run_cli(command, capsys)
    assert code == 3, err
    assert "extra instances" in stdout and "zz-extra" in stdout
    results = json.loads((out / "results.json").read_text())
    [source] = results["idea_sources"]
    assert source == {"role": "generator", "system": "mine", "kind": "ideas-file", "spec": f"ideas:{ideas}",
                      "answers": {"asked": 4, "missing": ["t2"], "failed": ["t2"],
                                  "extra_instances": ["zz-extra"]}}
    assert [u["instance_id"] for u in results["failed_units"]] == ["t2"]
    assert "no answer for instance t2" in results["failed_units"][0]["error"]
    assert results["generated"] == 3 and results["status"] == "partial"
    records = [json.loads(line) for line in (out / "records" / "generate.jsonl").read_text().splitlines()]
    assert all(r["data"]["system_task"] for r in records)
    # the same command resumes: asked counts the recorded instances too
    code, _, err = run_cli(["run", NAME, "--ideas", str(ideas), "--no-progress", "--out", str(out)], capsys)
    assert code == 3, err
    again = json.loads((out / "results.json").read_text())["idea_sources"][0]["answers"]
    assert again == {"asked": 4, "missing": ["t2"], "failed": ["t2"], "extra_instances": ["zz-extra"]}
    # an edited file is another input: refused, naming it
    ideas_file(ideas, ["t0", "t1", "t2", "t3"])
    code, _, err = run_cli(["run", NAME, "--ideas", str(ideas), "--no-progress", "--out", str(out)], capsys)
    assert code == 1 and "--ideas" in err and "changed since this run started" in err
    assert len(err.strip().splitlines()) == 1


def test_instances_left_out_by_limit_are_not_extra(tmp_path: Path) -> None:
    ideas = ideas_file(tmp_path / "all.jsonl", ["t0", "t1", "t2", "t3", "other"])
    results = ideaharness.run(NAME, ideas=str(ideas), limit=2, progress=False, out=tmp_path / "run")
    answers = results["idea_sources"][0]["answers"]
    assert answers == {"asked": 2, "missing": [], "failed": [], "extra_instances": ["other"]}


def test_a_command_system_run_with_its_name_and_a_model_source(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text("import json, sys\nt = json.load(sys.stdin)\n"
                     "idea = 'an idea on ' + t['inputs']['topic']\n"
                     "print(json.dumps({'instance_id': t['instance_id'], 'idea': idea}))\n")
    spec = f"cmd:{sys.executable} {agent}"
    results = ideaharness.run(NAME, generator=spec, system="my-agent", progress=False, out=tmp_path / "run")
    assert results["status"] == "complete" and results["generated"] == 4
    [source] = results["idea_sources"]
    assert source["kind"] == "command" and source["system"] == "my-agent" and source["answers"]["asked"] == 4
    model = ideaharness.run(NAME, progress=False, out=tmp_path / "model")
    [own] = model["idea_sources"]
    assert own["kind"] == "model" and own["system"] == "scripted/echo"


def test_a_unit_the_benchmark_knows_is_missing_counts_as_missing(tmp_path: Path) -> None:
    """StepRunner.missing_answer: a benchmark that skips an instance the file lacks (no judge work
    for it) lists it as failed and missing, under the task's instance id."""
    from ideaharness.runner.steps import StepRunner
    from ideaharness.runs.store import RunStore

    with RunStore(tmp_path / "run", {"command": "t"}) as store:
        steps = StepRunner(store, progress=False)
        steps.missing_answer("generate", "sys::t1::0", "0", "ideas:f.jsonl",
                             "no answer for instance t1 in f.jsonl", task_instance_id="t1")
    assert steps.missing_answers == {"ideas:f.jsonl": {"t1"}} and steps.generated == {"ideas:f.jsonl": {"t1"}}
    assert steps.failures[("generate", "sys::t1::0", "0")].error == "no answer for instance t1 in f.jsonl"


def test_ideas_and_generator_together_are_refused_in_one_line(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    ideas = ideas_file(tmp_path / "mine.jsonl", ["t0"])
    code, _, err = run_cli(["run", NAME, "--ideas", str(ideas), "--generator", "scripted/other.jsonl",
                            "--out", str(tmp_path / "r")], capsys)
    assert code == 1 and "give --ideas or --generator, not both" in err
    assert len(err.strip().splitlines()) == 1


def test_an_old_run_without_the_new_settings_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    ideaharness.run(NAME, progress=False, out=out)
    config = json.loads((out / "config.json").read_text())
    for key in ("ideas", "ideas_format", "system"):
        config.pop(key)
    (out / "config.json").write_text(json.dumps(config))
    again = ideaharness.run(NAME, progress=False, out=out)
    assert again["status"] == "complete"


def test_the_usage_table_credits_a_shared_client_once() -> None:
    class Client:
        model = "cmd:python agent.py"

    shared, judge = Client(), Client()
    judge.model = "openai/judge"
    stats = {"calls": 3, "failures": 1, "cache_hits": 0, "prompt_tokens": 0, "completion_tokens": 0,
             "wall_s": 1.234, "cost_usd": None}
    table = usage_table({"llm_stats": {"generator": stats, "rewriter": None, "judge": dict(stats)}},
                        {"generator": shared, "rewriter": shared, "judge": judge})
    assert [row[0] for row in table.rows] == ["generator+rewriter", "judge"]
    assert table.rows[0][1] == "cmd:python agent.py (command)"
    assert table.rows[0][table.columns.index("wall s")] == 1.23
    assert "failures" in table.columns and "wall s" in table.columns


def test_systems_are_never_wrapped_for_a_batch(tmp_path: Path) -> None:
    from ideaharness.llm import get_llm
    from ideaharness.llm.batch import BatchableModel, batchable_models

    ideas = ideas_file(tmp_path / "mine.jsonl", ["t0"])
    system, model = get_llm(f"ideas:{ideas}"), get_llm("scripted/echo", cache_path=tmp_path / "c.sqlite")
    wrapped_system, wrapped_model = batchable_models(system, model)
    assert wrapped_system is system and isinstance(wrapped_model, BatchableModel)


@pytest.mark.ray
def test_a_system_under_the_ray_runner_reports_what_a_local_run_does(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    import ray

    from ideaharness.runs.ray_runner import ray_init

    ideas = ideas_file(tmp_path / "mine.jsonl", ["t0", "t1", "t3", "zz-extra"])
    ray_init(None, num_cpus=2)
    try:
        results = {runner: ideaharness.run(NAME, ideas=str(ideas), runner=runner, progress=False,
                                           out=tmp_path / runner)
                   for runner in ("local", "ray")}
    finally:
        ray.shutdown()
    assert results["ray"]["idea_sources"] == results["local"]["idea_sources"]
    assert results["ray"]["idea_sources"][0]["answers"] == {"asked": 4, "missing": ["t2"], "failed": ["t2"],
                                                            "extra_instances": ["zz-extra"]}
    assert [u["instance_id"] for u in results["ray"]["failed_units"]] == ["t2"]
