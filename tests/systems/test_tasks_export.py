"""``tasks export`` is what the tool would ask (issue 20, "Done when" 2): the exported tasks are, byte
for byte, the JSON a ``cmd:`` system reads on stdin; answering them offline and importing the answers
with ``--ideas`` scores exactly as letting the tool call the same deterministic agent; and the
exported tasks follow the run's selection and seed (``--limit``, ``--shard``, ``--seed``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from ideaharness.testing.openai_server import OpenAICompatServer
from tests.runner.registry_support import fixture_for
from tests.systems.conftest import (
    EXECUTION,
    ThreeWays,
    WayRun,
    agent_cmd,
    cli,
    comparable,
    export_every_stage,
    generating_benchmarks,
    judge_reply,
    logged_tasks,
    system_data_args,
)


def _lines(data: bytes) -> list[bytes]:
    return [line for line in data.split(b"\n") if line.strip()]


@pytest.mark.parametrize("name", generating_benchmarks())
def test_exported_tasks_are_what_the_cmd_agent_reads(
    name: str, three_ways: Callable[..., ThreeWays], capsys: pytest.CaptureFixture[str]
) -> None:
    ways = three_ways(name, capsys)
    exported = _lines(ways.tasks.read_bytes())
    assert exported, f"{name}: tasks export wrote no task"
    received = [raw.removesuffix(b"\n") for raw in ways.cmd_stdin]
    assert received, f"{name}: the cmd: agent was never run (IDEA_AGENT_LOG empty)"
    only_exported, only_read = set(exported) - set(received), set(received) - set(exported)
    assert not only_exported and not only_read, (
        f"{name}: the exported tasks are not the bytes the cmd: agent read ({len(only_exported)} "
        f"exported only, {len(only_read)} read only; first: {sorted(only_exported | only_read)[0][:300]!r})")
    assert len(received) == len(exported), f"{name}: {len(received)} invocations for {len(exported)} tasks"
    for line in exported:
        task = json.loads(line)
        assert task["format"] == "ideaharness.task/1" and task["benchmark"] == name
        expected = f"{name}/{task['step']}/{task['instance_id']}/{task['key']}"
        assert task["task_id"] == expected, task["task_id"]
        assert {"inputs", "prompt", "answer_schema", "seed", "sample_index"} <= set(task)


@pytest.mark.parametrize("name", generating_benchmarks())
def test_export_then_ideas_scores_as_the_cmd_agent(
    name: str, three_ways: Callable[..., ThreeWays], capsys: pytest.CaptureFixture[str]
) -> None:
    ways = three_ways(name, capsys)
    assert ways.ideas.code == ways.cmd.code, (ways.ideas.err[-800:], ways.cmd.err[-800:])
    assert comparable(ways.ideas.scores) == comparable(ways.cmd.scores)
    assert any(s.get("value") is not None for s in ways.ideas.scores), f"{name}: nothing scored"


def _export(name: str, root: Path, judge: OpenAICompatServer, capsys: pytest.CaptureFixture[str],
            tag: str, *flags: str) -> list[dict[str, object]]:
    """The tasks ``tasks export`` writes with ``flags``; [] for a selection with no instance (a
    shard the few instances of the test data all miss: exit 1, "no ... to run")."""
    out = root / f"tasks-{tag}.jsonl"
    args = ["tasks", "export", name, *system_data_args(name, root), *fixture_for(name).extra_args,
            "--judge", "openai/judge", "--judge-base-url", judge.base_url, *EXECUTION, *flags,
            "--out", str(out)]
    code, err = cli(args, capsys)
    if code == 1 and "--shard" in flags and re.search(r"no \w+ to run \(data has", err):
        return []
    assert code == 0, f"{name}: tasks export {' '.join(flags)}: exit {code}: {err[-1500:]}"
    return [json.loads(line) for line in _lines(out.read_bytes())]


@pytest.mark.parametrize("name", generating_benchmarks())
def test_exported_tasks_follow_limit_shard_and_seed(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--limit 1`` exports a subset of ``--limit 2``; the two shards of ``--shard i/2`` share no
    task; ``--seed 7`` changes the tasks' seeds; and the tasks of ``--shard i/2 --seed 7`` (every
    stage's: :func:`~tests.systems.conftest.export_every_stage`) are, byte for byte, what a ``cmd:``
    agent reads in a run with the same flags."""
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    with OpenAICompatServer(judge_reply(name)) as judge:
        one = _export(name, tmp_path, judge, capsys, "limit1", "--limit", "1")
        two = _export(name, tmp_path, judge, capsys, "limit2", "--limit", "2")
        shards = [_export(name, tmp_path, judge, capsys, f"shard{i}", "--shard", f"{i}/2", "--limit", "2")
                  for i in (0, 1)]
        index = 0 if shards[0] else 1
        selected = ["--shard", f"{index}/2", "--limit", "2", "--seed", "7"]
        seeded = _export(name, tmp_path, judge, capsys, "seeded", *selected)

        def export(tag: str, flags: list[str]) -> WayRun:  # every stage (MLR-Bench: the proposals too)
            code, err = cli(["tasks", "export", name, *system_data_args(name, tmp_path),
                             *fixture_for(name).extra_args, "--judge", "openai/judge", "--judge-base-url",
                             judge.base_url, *EXECUTION, *selected, *flags], capsys)
            return WayRun(tag, tmp_path / tag, code, err)

        export_every_stage(export, tmp_path / "staged.jsonl", tmp_path / "staged-ideas.jsonl")
        monkeypatch.setenv("IDEA_AGENT_LOG", str(tmp_path / "stdin"))
        code, err = cli(["run", name, "--generator", agent_cmd(), *system_data_args(name, tmp_path),
                         *fixture_for(name).extra_args, "--judge", "openai/judge", "--judge-base-url",
                         judge.base_url, *EXECUTION, *selected, "--out", str(tmp_path / "run")], capsys)
    assert code in (0, 3), f"{name}: cmd: run {' '.join(selected)}: exit {code}: {err[-1500:]}"
    dumped = {json.dumps(t, sort_keys=True) for t in two}
    assert one and all(json.dumps(t, sort_keys=True) in dumped for t in one), \
        f"{name}: the tasks of --limit 1 are not among those of --limit 2"
    assert len(one) < len(two), f"{name}: --limit 2 exported no more than --limit 1"
    task_ids = [{str(t["task_id"]) for t in shard} for shard in shards]
    assert any(task_ids) and not task_ids[0] & task_ids[1], f"{name}: a task in both shards"
    assert {str(t["task_id"]) for t in seeded} == task_ids[index], f"{name}: --seed changed the selection"
    unseeded = {str(t["task_id"]): t["seed"] for t in shards[index]}
    assert any(t["seed"] != unseeded[str(t["task_id"])] for t in seeded), f"{name}: --seed 7 left every seed"
    received = sorted(raw.removesuffix(b"\n") for raw in logged_tasks(tmp_path / "stdin"))
    exported = sorted(_lines((tmp_path / "staged.jsonl").read_bytes()))
    assert received == exported, (f"{name}: {' '.join(selected)}: the exported tasks are not what the cmd: "
                                  f"agent read ({len(exported)} exported, {len(received)} read)")
