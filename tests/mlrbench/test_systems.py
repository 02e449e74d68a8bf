"""MLR-Bench measures any system (issue 20): its own ``--ideas`` JSON Lines (``task_id``, ``idea``,
``proposal``, ``model``) and the contract's go through the ``ideas:`` system; a ``cmd:`` agent giving
the same texts scores the same; a missing task is a failed unit (exit 3), a degenerate idea an
unparsed unit naming file, line and field, an extra task is reported. Scripted judges, no model."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

import ideaharness
from ideaharness.benchmarks.mlrbench import CONTRACT, select_tasks
from ideaharness.benchmarks.mlrbench.contract import generation_task
from ideaharness.errors import ParseError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.systems import get_contract
from tests.mlrbench.replies import IDEA, PROPOSAL, respond

TASKS = ["iclr2023_bands", "iclr2023_dg"]


def _legacy_row(task_id: str, **over: Any) -> dict[str, Any]:
    """A line of MLR-Bench's own --ideas format."""
    return {"task_id": task_id, "idea": IDEA.format(topic=task_id),
            "proposal": PROPOSAL.format(topic=task_id), "model": "scripted/j1", **over}


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


AGENT = '''import json, sys
rows = {{r["task_id"]: r for r in map(json.loads, open({path!r}, encoding="utf-8"))}}
task = json.loads(sys.stdin.read())
row = rows[task["instance_id"]]
stage = task["inputs"]["stage"]
assert stage != "proposal" or task["inputs"]["idea"] == row["idea"], "the proposal task carries the idea"
print(json.dumps({{"instance_id": task["instance_id"], "text": row[stage],
                  "provenance": {{"model": row["model"]}}}}))
'''


def _agent(tmp_path: Path, answers: Path) -> str:
    script = tmp_path / "mlr_agent.py"
    script.write_text(AGENT.format(path=str(answers)), encoding="utf-8")
    return "cmd:" + shlex.join([sys.executable, str(script)])


def _run(tmp_path: Path, name: str, tasks: list[str] = TASKS, **fields: Any) -> dict[str, Any]:
    return ideaharness.run(
        "mlrbench", judge="scripted/j1", task=tasks, out=tmp_path / name, progress=False,
        bootstrap_resamples=20, models={"judge:scripted/j1": ScriptedModel(respond, model="scripted/j1")},
        **fields)


def _scores(run_dir: Path) -> list[tuple[Any, ...]]:
    rows = [json.loads(x) for x in (run_dir / "scores.jsonl").read_text().splitlines() if x.strip()]
    return sorted((r.get("metric"), r.get("instance_id"), r.get("group"), r.get("value"), r.get("status"))
                  for r in rows)


def _generator(results: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in results["idea_sources"] if s["role"] == "generator")


def test_one_contract_two_stages() -> None:
    assert get_contract("mlrbench") is CONTRACT
    assert CONTRACT.json_schema()["required"] == ["instance_id", "text"]
    call = select_tasks(["iclr2023_dg"])[0].text
    idea_task = generation_task("iclr2023_dg", "idea", call=call, idea=None, seed=7)
    assert idea_task.inputs == {"stage": "idea", "task": call}
    assert idea_task.task_id == "mlrbench/idea/iclr2023_dg/"
    idea = IDEA.format(topic="domain generalisation")
    parsed = CONTRACT.parse(json.dumps({"instance_id": "iclr2023_dg", "text": idea}), idea_task)
    assert parsed == {"idea": idea, "title": "Cross-domain probes for domain generalisation",
                      "words": len(idea.split())}
    proposal_task = generation_task("iclr2023_dg", "proposal", call=call, idea=idea, seed=7)
    assert proposal_task.inputs["idea"] == idea
    with pytest.raises(ParseError, match=r"field 'text' \(proposal\) is too short \(\d+ words, at least "
                                         r"100\)"):
        CONTRACT.parse(json.dumps({"instance_id": "iclr2023_dg", "text": idea}), proposal_task)
    # a title beside an untitled text heads it, as the prompt asks
    body = " ".join(["Probes on activations transfer across domains."] * 6)
    titled = CONTRACT.parse(json.dumps({"instance_id": "iclr2023_dg", "title": "Probes", "text": body}),
                            idea_task)
    assert titled["title"] == "Probes" and titled["idea"].startswith("Title: Probes\n")
    # MLR-Bench's own rows: the stage's field, the writer's model into provenance
    row = _legacy_row("iclr2023_dg")
    assert CONTRACT.from_row(row, proposal_task) == {"text": row["proposal"],
                                                     "provenance": {"model": "scripted/j1"}}
    common = {"instance_id": "x", "title": "T", "motivation": "M", "method": "X"}
    assert CONTRACT.from_row(common, idea_task) == {"text": "Title: T\nMotivation: M\nMain Idea: X",
                                                    "title": "T"}
    assert "text" not in CONTRACT.from_row({"instance_id": "x", "idea": "only an idea"}, proposal_task)


def test_own_format_file_and_cmd_agent_score_the_same(tmp_path: Path) -> None:
    answers = _write(tmp_path / "mysys.jsonl", [_legacy_row(t) for t in TASKS])
    by_file = _run(tmp_path, "file", ideas=str(answers))
    by_cmd = _run(tmp_path, "cmd", generator=_agent(tmp_path, answers), system="mysys")
    for res in (by_file, by_cmd):
        assert res["status"] == "complete" and res["system"] == "mysys" and res["generator"] is None
        assert res["counts"]["texts_idea"] == 2 and res["counts"]["texts_proposal"] == 2
    assert by_file["given"] and not by_cmd["given"]
    assert _generator(by_file)["kind"] == "ideas-file" and _generator(by_cmd)["kind"] == "command"
    assert _scores(tmp_path / "file") == _scores(tmp_path / "cmd")
    assert len(_scores(tmp_path / "file")) == 2 * (6 + 7)
    # the writer named by the answers is the generator of the reliability block: the judge wrote them
    for res in (by_file, by_cmd):
        judge = res["reliability"]["metrics"]["review/idea[overall]"]["judges"]["scripted/j1"]
        assert judge["self_judged"] == 2


def test_a_missing_task_is_a_failed_unit_and_exit_3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ideaharness.cli import main
    from ideaharness.testing.openai_server import OpenAICompatServer

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    answers = _write(tmp_path / "partial.jsonl", [_legacy_row("iclr2023_bands")])
    with OpenAICompatServer(lambda body: respond(body["messages"])) as srv, pytest.raises(SystemExit) as exc:
        main(["run", "mlrbench", "--ideas", str(answers), "--task", TASKS[0], "--task", TASKS[1],
              "--judge", "openai/j1", "--base-url", srv.base_url, "--no-progress",
              "--out", str(tmp_path / "run")])
    assert exc.value.code == 3
    res = json.loads((tmp_path / "run/results.json").read_text())
    assert [(u["step"], u["instance_id"]) for u in res["failed_units"]] == [("idea", "iclr2023_dg")]
    assert "iclr2023_dg" in _generator(res)["answers"]["missing"]
    assert res["per_task"]["iclr2023_dg"]["idea"]["scores"] is None
    assert res["per_task"]["iclr2023_bands"]["proposal"]["scores"] is not None


def test_a_degenerate_idea_is_unparsed_naming_file_line_and_field(tmp_path: Path) -> None:
    answers = _write(tmp_path / "ideas.jsonl", [_legacy_row(TASKS[0]), _legacy_row(TASKS[1], idea="TBD.")])
    res = _run(tmp_path, "bad", ideas=str(answers), stage="idea")
    (unit,) = [u for u in res["unparsed_units"] if u["step"] == "idea"]
    assert unit["instance_id"] == TASKS[1]
    assert "ideas.jsonl line 2, field 'text' (idea) is too short" in unit["error"]
    assert res["counts"]["generation_parse_failures_idea"] == 1 and res["counts"]["texts_idea"] == 1


def test_an_extra_task_is_reported_and_ignored(tmp_path: Path) -> None:
    answers = _write(tmp_path / "ideas.jsonl", [_legacy_row(t) for t in [*TASKS, "iclr2024_mefomo"]])
    res = _run(tmp_path, "extra", ideas=str(answers), stage="idea")
    assert res["status"] == "complete" and sorted(res["per_task"]) == TASKS
    assert _generator(res)["answers"]["extra_instances"] == ["iclr2024_mefomo"]


DRAFT = '''import json, sys
sys.path.insert(0, {root!r})
from tests.mlrbench.test_systems import draft
print(json.dumps(draft(json.loads(sys.stdin.read()))))
'''


def draft(task: dict[str, Any]) -> dict[str, Any]:
    """A deterministic system: the scripted idea of the call, then a proposal naming its idea."""
    iid, inputs = task["instance_id"], task["inputs"]
    if inputs["stage"] == "idea":
        return {"instance_id": iid, "text": IDEA.format(topic=iid)}
    title = inputs["idea"].splitlines()[0].removeprefix("Title: ")
    return {"instance_id": iid, "text": PROPOSAL.format(topic=title)}


def test_export_then_ideas_covers_both_stages_as_the_cmd_system(tmp_path: Path) -> None:
    """``tasks export`` gives the idea tasks; with ``--ideas`` (the answers to them) the proposal
    tasks, each carrying its idea; the answers, one row per task in that order, score as the same
    system asked live."""
    from ideaharness.runner.export import export_tasks

    common: dict[str, Any] = {"judge": "scripted/j1", "task": TASKS, "progress": False,
                              "models": {"judge:scripted/j1": ScriptedModel(respond, model="scripted/j1")}}
    asyncio.run(export_tasks("mlrbench", tmp_path / "ideas.tasks.jsonl", **common))
    idea_tasks = [json.loads(x) for x in (tmp_path / "ideas.tasks.jsonl").read_text().splitlines()]
    assert [t["task_id"] for t in idea_tasks] == [f"mlrbench/idea/{t}/" for t in TASKS]
    answers = _write(tmp_path / "answers.jsonl", [draft(t) for t in idea_tasks])
    asyncio.run(export_tasks("mlrbench", tmp_path / "proposals.tasks.jsonl", ideas=str(answers), **common))
    proposal_tasks = [json.loads(x) for x in (tmp_path / "proposals.tasks.jsonl").read_text().splitlines()]
    assert [t["task_id"] for t in proposal_tasks] == [f"mlrbench/proposal/{t}/" for t in TASKS]
    assert [t["inputs"]["idea"] for t in proposal_tasks] == [draft(t)["text"] for t in idea_tasks]
    _write(answers, [draft(t) for t in idea_tasks + proposal_tasks])
    by_file = _run(tmp_path, "file", ideas=str(answers), system="drafter")
    script = tmp_path / "drafter.py"
    script.write_text(DRAFT.format(root=str(Path(__file__).parents[2])), encoding="utf-8")
    by_cmd = _run(tmp_path, "cmd", generator="cmd:" + shlex.join([sys.executable, str(script)]),
                  system="drafter")
    for res in (by_file, by_cmd):
        assert res["status"] == "complete" and res["counts"]["texts_proposal"] == 2
    assert _scores(tmp_path / "file") == _scores(tmp_path / "cmd")
