"""``ideaharness tasks schema`` and ``tasks export`` (issue 20): one-line errors, the schema files
in docs/schemas equal to the generated ones, every generating benchmark with a contract, and an
export in capture mode whose pre-generation judge work a later ``--ideas`` run reuses (identical
task inputs, from the response cache, against a judge whose every fresh reply differs)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from ideaharness.cli.app import run_app
from ideaharness.runner import Benchmark, registry
from ideaharness.runner.export import SCHEMA_DIR, all_contracts, schema_file_name, schema_text
from ideaharness.runner.protocol import BenchmarkConfig
from ideaharness.runner.registry import benchmarks
from ideaharness.runs.store import read_prompts
from ideaharness.systems import GenerationTask, SystemFields, read_task, register_contract
from ideaharness.systems.contract import _CONTRACTS
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.cli_support import run_cli
from tests.systems.test_core import TOY_CONTRACT, ToyAnswer, toy_from_row, toy_to_parsed

ROOT = Path(__file__).parents[2]
NAME = "toyexport"


class ExportConfig(SystemFields, BenchmarkConfig):
    generator: str = Field("openai/gen", description="The generator.")
    judge: str = Field("openai/judge", description="The judge (blinds the topic before generation).")
    items: int = Field(3, ge=1, description="Items.")


class Item(BaseModel):
    id: str
    topic: str


class ExportBench(Benchmark):
    """Blinds each topic with the judge (a sampled call), then generates from the blinded topic."""

    title = "Toy export"
    config_class = ExportConfig

    def load(self) -> list[Item]:
        return [Item(id=f"e{i}", topic=f"secret method {i}") for i in range(self.config.items)]

    async def execute(self, ctx: Any, items: list[Item]) -> None:
        judge, generator = ctx.model("judge"), ctx.model("generator")

        async def blind(item: Item) -> None:
            await ctx.steps.judge_step("blind", item.id, "", judge,
                                       [{"role": "user", "content": f"Anonymise: {item.topic}"}],
                                       lambda t: t.strip(), temperature=0.9, max_tokens=32)

        async def generate(item: Item) -> None:
            blinded = ctx.store.get("blind", item.id)
            if blinded is None:  # its blinding failed: no task
                return
            topic = blinded["judgment"]["parsed"]
            task = GenerationTask(NAME, "generate", item.id, "", 0, {"topic": topic}, self.config.seed)
            await ctx.steps.generate_step("generate", item.id, "", generator,
                                          [{"role": "user", "content": f"An idea on {topic}"}],
                                          lambda t: t, task=task, max_tokens=64)

        await ctx.steps.run_phases(items, [("blind", blind), ("generate", generate)])

    def aggregate(self, ctx: Any, items: list[Item]) -> dict[str, Any]:
        records = [ctx.store.get("generate", i.id) for i in items]
        return {"generated": sum(1 for r in records if r and r["judgment"]["parse_ok"])}


@pytest.fixture
def toyexport(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    register_contract(TOY_CONTRACT.__class__(NAME, 1, ToyAnswer, toy_to_parsed, toy_from_row))
    registry.register_benchmark(NAME)(ExportBench)
    yield NAME
    registry._BENCHMARKS.pop(NAME, None)
    _CONTRACTS.pop(NAME, None)
    run_app.registered_commands[:] = [c for c in run_app.registered_commands if c.name != NAME]


class Judge:
    """Every fresh reply differs (a counter), so only the response cache can repeat one."""

    def __init__(self) -> None:
        self.n = 0
        self.server = OpenAICompatServer(self.reply)

    def reply(self, body: dict[str, Any]) -> str:
        self.n += 1
        return f"blinded topic {self.n}"


def test_export_then_an_ideas_run_sees_the_identical_tasks(toyexport: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    judge = Judge()
    with judge.server:
        url = judge.server.base_url
        tasks = tmp_path / "tasks.jsonl"
        code, out, err = run_cli(["tasks", "export", NAME, "--base-url", url, "--no-progress",
                                  "--out", str(tasks)], capsys)
        assert code == 0, err
        assert "wrote 3 task(s) of ideaharness.idea/toyexport/v1" in out
        lines = tasks.read_text().splitlines()
        exported = {json.loads(line)["instance_id"]: json.loads(line) for line in lines}
        assert sorted(exported) == ["e0", "e1", "e2"] and judge.n == 3
        assert all(line == json.dumps(json.loads(line), sort_keys=True, ensure_ascii=False) for line in lines)
        assert exported["e0"]["inputs"]["topic"].startswith("blinded topic")
        assert exported["e0"]["prompt"] == [{"role": "user",
                                             "content": f"An idea on {exported['e0']['inputs']['topic']}"}]
        # a system answers offline; the --ideas run scores it after the same (cached) blinding
        answers = tmp_path / "answers.jsonl"
        answers.write_text("".join(json.dumps({"instance_id": t["instance_id"],
                                               "idea": f"an idea on {t['inputs']['topic']}"}) + "\n"
                                   for t in exported.values()))
        run_dir = tmp_path / "run"
        code, _, err = run_cli(["run", NAME, "--ideas", str(answers), "--base-url", url, "--no-progress",
                                "--out", str(run_dir)], capsys)
        assert code == 0, err
        assert judge.n == 3  # the blinding came from the cache
    records = [json.loads(x) for x in (run_dir / "records" / "generate.jsonl").read_text().splitlines()]
    prompts = read_prompts(run_dir)
    for record in records:
        sent = read_task(prompts[record["data"]["judgment"]["prompt_hash"]])
        assert sent == exported[record["instance_id"]]


def test_export_with_a_work_dir_resumes_it(toyexport: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    judge = Judge()
    with judge.server:
        base = ["tasks", "export", NAME, "--base-url", judge.server.base_url, "--no-progress", "--no-cache",
                "--work", str(tmp_path / "work")]
        assert run_cli([*base, "--out", str(tmp_path / "a.jsonl")], capsys)[0] == 0
        assert run_cli([*base, "--out", str(tmp_path / "b.jsonl")], capsys)[0] == 0
    assert judge.n == 3  # the second export reused the work dir's judge records (no cache at all)
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()
    assert not (tmp_path / "work" / "results.json").exists()


@pytest.mark.parametrize(("args", "fragment"), [
    (["tasks", "export", "nosuch", "--out", "x.jsonl"], "unknown benchmark 'nosuch'"),
    (["tasks", "schema", "nosuch"], "unknown benchmark 'nosuch'"),
    (["tasks", "export", "ligbench-judge", "--out", "x.jsonl"], "'ligbench-judge' has no idea contract"),
    (["tasks", "schema", "ligbench-judge"], "'ligbench-judge' has no idea contract"),
    (["tasks", "export", NAME, "--out", "/nonexistent-dir/x.jsonl"], "does not exist"),
    (["tasks", "export", NAME], "give --out FILE"),
])
def test_bad_requests_are_one_line_with_exit_1(toyexport: str, args: list[str], fragment: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(args, capsys)
    assert code == 1 and fragment in err and len(err.strip().splitlines()) == 1, err


def test_an_unwritable_out_is_one_line(toyexport: str, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, _, err = run_cli(["tasks", "export", NAME, "--out", str(locked / "t.jsonl")], capsys)
    finally:
        locked.chmod(0o700)
    import os

    if os.geteuid() == 0:  # root writes anywhere: the folder case stands in
        code, _, err = run_cli(["tasks", "export", NAME, "--out", str(tmp_path)], capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1 and "--out" in err or "cannot be written" in err


def test_schema_prints_the_contracts_json_schema(toyexport: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["tasks", "schema", NAME], capsys)
    assert code == 0 and json.loads(out)["$id"] == "ideaharness.idea/toyexport/v1"
    code, _, _ = run_cli(["tasks", "schema", NAME, "--out", str(tmp_path / "s.json")], capsys)
    assert code == 0 and (tmp_path / "s.json").read_text() == out


def test_docs_schemas_are_the_generated_ones() -> None:
    """``ideaharness tasks schema --all --out docs/schemas`` regenerates them."""
    expected = {schema_file_name(c): schema_text(c) for c in all_contracts().values()}
    folder = ROOT / SCHEMA_DIR
    committed = {p.name: p.read_text(encoding="utf-8") for p in folder.glob("*.idea.v*.json")}
    stale = sorted(set(committed) - set(expected))
    assert not stale, f"schemas of no contract in {folder} (remove them): {stale}"
    for name, text in expected.items():
        assert committed.get(name) == text, (f"{folder / name} differs from the contract; run "
                                             "`ideaharness tasks schema --all --out docs/schemas`")


def test_every_generating_benchmark_registers_a_contract() -> None:
    generating = [name for name, cls in sorted(benchmarks().items())
                  if {"generator", "generators"} & set(cls.config_class.model_fields)]
    assert generating
    missing = [name for name in generating if name not in all_contracts()]
    assert not missing, f"benchmarks that generate without an idea contract: {missing}"


def test_the_contract_check_fails_for_a_benchmark_without_contract(toyexport: str) -> None:
    """The check above is not vacuous: a generating benchmark whose contract is gone is named."""
    _CONTRACTS.pop(NAME)
    with pytest.raises(AssertionError, match=NAME):
        test_every_generating_benchmark_registers_a_contract()


def test_under_batch_the_judge_is_batched_and_the_system_is_asked_live(
        toyexport: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    judge = Judge()
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"instance_id": f"e{i}", "idea": f"an idea number {i} here"}) + "\n"
                               for i in range(3)))
    with judge.server:
        code, _, err = run_cli(["run", NAME, "--ideas", str(answers), "--batch", "--batch-poll", "0.05",
                                "--base-url", judge.server.base_url, "--no-progress",
                                "--out", str(tmp_path / "run")], capsys)
        assert code == 0, err
        assert len(judge.server.batches) == 1 and judge.server.requests == []  # the judge went as a batch
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["generated"] == 3 and results["batch"]["submitted"] == 3
    assert results["idea_sources"][0]["answers"]["asked"] == 3


def test_an_export_whose_pre_generation_unit_failed_writes_the_rest_and_exits_3(
        toyexport: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rules = tmp_path / "rules.jsonl"
    rules.write_text(json.dumps({"reply": "blinded", "match": "secret method [02]"}) + "\n")
    out = tmp_path / "t.jsonl"
    code, _, err = run_cli(["tasks", "export", NAME, "--judge", f"scripted/{rules}", "--no-progress",
                            "--out", str(out)], capsys)
    assert code == 3 and "1 unit(s) before generation failed" in err and "blind e1" in err, err
    assert sorted(json.loads(x)["instance_id"] for x in out.read_text().splitlines()) == ["e0", "e2"]


def test_an_export_ignores_rules_that_depend_on_the_default_generator(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """LiveIdeaBench refuses a judge of the generator's family; an export's tasks do not depend on
    who answers them, so a judge of the default generator's family is accepted (README example),
    while a run with that default generator is still refused."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    tasks = tmp_path / "tasks.jsonl"
    code, out, err = run_cli(["tasks", "export", "liveideabench", "--keyword", "stars", "--judge",
                              "local/qwen2.5-coder-1.5b", "--no-progress", "--out", str(tasks)], capsys)
    assert code == 0, err
    keywords = [json.loads(line)["inputs"]["keyword"] for line in tasks.read_text().splitlines()]
    assert keywords == ["stars", "stars"]
    run = ["run", "liveideabench", "--keyword", "stars", "--judge", "local/qwen2.5-coder-1.5b",
           "--no-progress", "--out", str(tmp_path / "run")]
    code, _, err = run_cli(run, capsys)
    assert code == 1 and "family" in err


def test_ligbench_shards_by_topic_whoever_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """``--shard`` keeps the same LigBench topics for every system: the items of one topic share
    its shard key, so a shard's exported tasks are the tasks a system of another name is asked."""
    from ideaharness.benchmarks.ligbench.config import IdeaSpec
    from ideaharness.runner.options import ExecutionOptions
    from ideaharness.runner.run import select_items

    def specs(system: str) -> list[IdeaSpec]:
        return [IdeaSpec(id=f"{system}::t{t:02d}::{k}", system=system, topic=f"topic {t}", sample_index=k,
                         topic_index=t) for t in range(12) for k in range(2)]

    options = ExecutionOptions(shard=(1, 3))
    kept = {name: [(s.topic_index, s.sample_index) for s in select_items(specs(name), options)]
            for name in ("capture:tasks-export", "my-agent", "local/qwen2.5-coder-1.5b")}
    first = next(iter(kept.values()))
    assert first and all(v == first for v in kept.values())
    assert len({t for t, _ in first}) < 12  # a real subset of the topics


def test_ligbench_limit_keeps_whole_topics_for_every_system() -> None:
    """``--limit K`` keeps the first K items: topic first, so a second system is asked the same
    topics as the first (fresh-user finding: it was never asked)."""
    from ideaharness.benchmarks.ligbench.config import LigBenchConfig
    from ideaharness.benchmarks.ligbench.run import LigBench
    from ideaharness.runner.options import ExecutionOptions
    from ideaharness.runner.run import select_items

    config = LigBenchConfig(corpus=str(ROOT / "tests/ligbench/fixtures/pairiq_mini.jsonl"),
                            generators=["scripted/echo", "cmd:agent.py"], topics=["a", "b", "c"])
    kept = select_items(LigBench(config).load(), ExecutionOptions(limit=4))
    assert [(s.topic_index, s.generator) for s in kept] == [
        (0, "scripted/echo"), (0, "cmd:agent.py"), (1, "scripted/echo"), (1, "cmd:agent.py")]


def test_an_export_never_writes_over_its_own_input(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    answers = tmp_path / "answers.jsonl"
    answers.write_text('{"instance_id": "stars", "idea": "an idea"}\n')
    code, _, err = run_cli(["tasks", "export", "liveideabench", "--keyword", "stars", "--ideas", str(answers),
                            "--out", str(answers)], capsys)
    assert code == 1 and "is an input of the export" in err
    assert answers.read_text() == '{"instance_id": "stars", "idea": "an idea"}\n'
