"""AI Idea Bench measures any system (issue 20): ``--ideas FILE`` (the contract's JSON Lines or an
AI-Scientist ideas file) goes through the ``ideas:`` system, a ``cmd:`` agent giving the same answers
scores the same, a missing instance is a failed unit (exit 3), a degenerate idea an unparsed unit
naming file, line and field, an extra instance is reported, and the competition takes runs of any
system. Scripted judge, toy embedding, no model."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from ideaharness import arun
from ideaharness.benchmarks.aiideabench import AIIdeaBenchConfig
from ideaharness.benchmarks.aiideabench.contract import CONTRACT, generation_task
from ideaharness.benchmarks.aiideabench.tournament import run_tournament_async
from ideaharness.errors import ParseError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.runner.options import ExecutionOptions
from ideaharness.systems import get_contract
from tests.aiideabench.registry_fixtures import reply as server_reply
from tests.aiideabench.test_aiib_pipeline import DATA, FIX, responder, toy_embed

IDS = ("aiib-0", "aiib-1", "aiib-2")
METRICS = ["i2t", "i2i", "imcq"]


def _row(iid: str, k: int, **over: Any) -> dict[str, Any]:
    return {"instance_id": iid, "title": f"Idea {k} for {iid}",
            "motivation": f"Attention over long documents of case {iid} is slow; idea {k} keeps windows "
                          "short and adds global tokens, which should keep the context cheaply.",
            "experiment_plan": f"Step 1: add {k + 4} global tokens to the model.\nStep 2: compare with "
                               "Longformer on long-document summarisation.", **over}


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


AGENT = '''import json, sys
rows = [json.loads(line) for line in open({path!r}, encoding="utf-8") if line.strip()]
task = json.loads(sys.stdin.read())
mine = [r for r in rows if r["instance_id"] == task["instance_id"]]
print(json.dumps(mine[task["sample_index"]]))
'''


def _agent(tmp_path: Path, answers: Path) -> str:
    """A ``cmd:`` system answering every task with the answers file's row (same order)."""
    script = tmp_path / "my_agent.py"
    script.write_text(AGENT.format(path=str(answers)), encoding="utf-8")
    return "cmd:" + shlex.join([sys.executable, str(script)])


async def _run(tmp_path: Path, name: str, *, compare: list[Path] | None = None, limit: int = 3,
               **fields: Any) -> dict[str, Any]:
    cfg = AIIdeaBenchConfig(data=DATA, judge="scripted/judge", metrics=METRICS, bootstrap_resamples=20,
                            compare=compare or [], **fields)
    options = ExecutionOptions(out=tmp_path / name, limit=limit, progress=False)
    judge = ScriptedModel(responder(imcq_letter="A"), model="scripted/judge")  # every reply parses
    return await arun("aiideabench", config=cfg, options=options, judge=judge, embed_fn=toy_embed)


def _scores(run_dir: Path) -> list[tuple[Any, ...]]:
    rows = [json.loads(x) for x in (run_dir / "scores.jsonl").read_text().splitlines() if x.strip()]
    return sorted((r.get("metric"), r.get("instance_id"), r.get("group"), r.get("value"), r.get("status"))
                  for r in rows)


def _generator(results: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in results["idea_sources"] if s["role"] == "generator")


# --- the contract -----------------------------------------------------------------------------


def test_the_contract_is_registered_and_checks_like_the_parser() -> None:
    assert get_contract("aiideabench") is CONTRACT
    schema = CONTRACT.json_schema()
    assert schema["$id"] == "ideaharness.idea/aiideabench/v1"
    assert {"instance_id", "motivation", "experiment_plan"} <= set(schema["required"])
    task = generation_task("aiib-0", 1, topic="Long documents", inspirations=["a digest"], seed=3)
    assert task.task_id == "aiideabench/generate/aiib-0/1" and task.sample_index == 1
    assert task.inputs == {"topic": "Long documents", "inspirations": ["a digest"]}
    row = _row("aiib-0", 1)
    parsed = CONTRACT.parse(json.dumps(row), task)
    assert parsed == {"title": row["title"], "motivation": row["motivation"],
                      "experiment_plan": row["experiment_plan"]}
    with pytest.raises(ParseError, match=r"answer of aiideabench/generate/aiib-0/1, field 'motivation' is "
                                         r"too short \(2 words, at least 8\)"):
        CONTRACT.parse(json.dumps({**row, "motivation": "Too short."}), task)
    with pytest.raises(ParseError, match=r"field 'experiment': unknown field"):
        CONTRACT.parse(json.dumps({**row, "experiment": "x"}), task)
    # the common vocabulary: ResearchAgent's problem + its rationale (motivation), a method as the plan
    fields = CONTRACT.from_row({"instance_id": "aiib-0", "problem": "Attention is slow on long inputs.",
                                "motivation": "Global tokens keep context.", "method": "Add tokens."}, task)
    assert fields == {"motivation": "Attention is slow on long inputs.\nGlobal tokens keep context.",
                      "experiment_plan": "Add tokens."}


# --- --ideas FILE and cmd: ---------------------------------------------------------------------


async def test_an_ideas_file_and_a_cmd_agent_with_the_same_answers_score_the_same(tmp_path: Path) -> None:
    answers = _write(tmp_path / "mysys.jsonl", [_row(i, k) for i in IDS for k in range(2)])
    by_file = await _run(tmp_path, "file", ideas=str(answers))
    by_cmd = await _run(tmp_path, "cmd", generator=_agent(tmp_path, answers), system="mysys")
    for res in (by_file, by_cmd):
        assert res["status"] == "complete" and res["ideas"] == 6 and res["i2t"]["motivation"]["n"] == 3
        assert res["system"] == "mysys" and res["generator"] is None
    assert _generator(by_file)["kind"] == "ideas-file" and _generator(by_cmd)["kind"] == "command"
    assert _generator(by_file)["system"] == _generator(by_cmd)["system"] == "mysys"
    assert _scores(tmp_path / "file") == _scores(tmp_path / "cmd")
    assert len(_scores(tmp_path / "file")) >= 3 * 5
    # the ideas are the system's, recorded like generated ones (ids <instance>#<k>)
    rec = json.loads((tmp_path / "file/records/ideas.jsonl").read_text().splitlines()[0])["data"]
    assert rec["source"] == "system" and rec["kind"] == "ideas-file"
    assert [i["id"] for i in rec["ideas"]] == ["aiib-0#0", "aiib-0#1"]
    assert rec["ideas"][0]["provenance"]["generator"] == "mysys"


async def test_an_ai_scientist_ideas_file_runs_and_scores(tmp_path: Path) -> None:
    res = await _run(tmp_path, "ais", limit=2, ideas=str(FIX / "ai_scientist_ideas.json"), n_ideas=1)
    assert res["status"] == "complete" and res["system"] == "ai_scientist_ideas"
    assert res["ideas"] == 2 and res["i2t"]["motivation"]["n"] == 2
    ideas = [json.loads(x)["data"]["ideas"][0] for x in (tmp_path / "ais/records/ideas.jsonl").open()]
    assert ideas[0]["title"] == "Sparse attention with learned global tokens"
    assert ideas[0]["motivation"].startswith("Quadratic attention is slow on long documents")
    assert ideas[0]["experiment_plan"].startswith("Step 1: add 8 global tokens")


def test_a_missing_instance_is_a_failed_unit_and_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ideaharness.cli import main
    from ideaharness.testing.openai_server import OpenAICompatServer

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    answers = _write(tmp_path / "partial.jsonl", [_row(i, 0) for i in ("aiib-0", "aiib-2")])
    with OpenAICompatServer(server_reply) as srv, pytest.raises(SystemExit) as exc:
        main(["run", "aiideabench", "--data", DATA, "--ideas", str(answers), "--n-ideas", "1",
              "--metric", "i2t", "--judge", "openai/judge", "--base-url", srv.base_url,
              "--out", str(tmp_path / "run"),
              "--no-progress"])
    assert exc.value.code == 3
    res = json.loads((tmp_path / "run/results.json").read_text())
    failed = [(u["step"], u["instance_id"], u["key"]) for u in res["failed_units"]]
    assert failed == [("generate", "aiib-1", "0")]
    assert "no answer for instance aiib-1" in res["failed_units"][0]["error"]
    assert "aiib-1" in _generator(res)["answers"]["missing"]
    assert res["instances"] == 3 and res["instances_not_in_ideas_file"] == 1
    assert res["i2t"]["motivation"]["n"] == 2  # the two answered instances are scored, aiib-1 is not
    rows = [json.loads(x) for x in (tmp_path / "run/scores.jsonl").read_text().splitlines()]
    assert not [r for r in rows if r.get("instance_id") == "aiib-1" and r.get("value") is not None]


async def test_a_degenerate_idea_is_unparsed_naming_file_line_and_field(tmp_path: Path) -> None:
    rows = [_row("aiib-0", 0), _row("aiib-1", 0, motivation="Too short."), _row("aiib-2", 0)]
    answers = _write(tmp_path / "ideas.jsonl", rows)
    res = await _run(tmp_path, "bad", ideas=str(answers), n_ideas=1)
    (unit,) = [u for u in res["unparsed_units"] if u["step"] == "generate"]
    assert unit["instance_id"] == "aiib-1"
    assert "ideas.jsonl line 2, field 'motivation' is too short" in unit["error"]
    assert res["generation_parse_failures"] == 1 and res["i2t"]["motivation"]["n"] == 2


async def test_an_extra_instance_is_reported_and_ignored(tmp_path: Path) -> None:
    rows = [_row(i, 0) for i in IDS] + [_row("aiib-9", 0)]
    res = await _run(tmp_path, "extra", ideas=str(_write(tmp_path / "ideas.jsonl", rows)), n_ideas=1)
    assert res["status"] == "complete" and res["ideas"] == 3
    assert _generator(res)["answers"]["extra_instances"] == ["aiib-9"]


# --- systems side by side ------------------------------------------------------------------------


async def test_the_competition_takes_an_ideas_run_and_a_cmd_run(tmp_path: Path) -> None:
    strong = _write(tmp_path / "strong.jsonl", [_row(i, 0, title="STRONG", motivation="STRONG motivation: "
                                                     "attention windows are too short for long documents.")
                                                for i in IDS])
    weak = _write(tmp_path / "weak.jsonl", [_row(i, 0) for i in IDS])
    first = await _run(tmp_path, "strong", ideas=str(strong), n_ideas=1)
    assert first["status"] == "complete"
    res = await _run(tmp_path, "weak", generator=_agent(tmp_path, weak), n_ideas=1,
                     compare=[tmp_path / "strong"])
    comp = res["competition"]
    assert comp["systems"] == ["my_agent.py", "strong"]
    assert comp["system_kinds"] == {"my_agent.py": "command", "strong": "ideas-file"}
    assert comp["topics"] == 3 and comp["points"]["strong"] > comp["points"]["my_agent.py"]
    # compare --judge: the saved runs, by name and kind
    judge = ScriptedModel(responder(), model="scripted/judge")
    t = await run_tournament_async([tmp_path / "weak", tmp_path / "strong"], judge_model=judge,
                                   tournament_dir=tmp_path / "t", n_resamples=20)
    assert t["system_kinds"] == {"my_agent.py": "command", "strong": "ideas-file"}
    assert t["points"]["strong"] > t["points"]["my_agent.py"]


def test_tasks_export_shows_the_anonymised_topic_and_the_digests_and_asks_nothing_after(
    tmp_path: Path,
) -> None:
    """``tasks export`` on TOMATO-Chem: the decomposition (for the anonymised topic) and the digests
    are asked and recorded in the work directory; no judgment after generation; each task shows
    exactly what the generation prompt is rendered from."""
    import asyncio

    from ideaharness.runner.export import export_tasks
    from tests.aiideabench.test_aiib_blinding import ANON, decomposition

    asked: list[str] = []

    def judge(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        asked.append("decompose" if "Break the research below" in user else
                     "digest" if "Summarise this paper" in user else "other")
        return decomposition(user) if asked[-1] == "decompose" else responder()(messages)

    cfg = AIIdeaBenchConfig(judge="scripted/judge", digest_inspirations=True, n_ideas=2)
    asyncio.run(export_tasks("aiideabench", tmp_path / "tasks.jsonl", work=tmp_path / "work", config=cfg,
                             limit=2, progress=False, judge=ScriptedModel(judge, model="scripted/judge")))
    tasks = [json.loads(x) for x in (tmp_path / "tasks.jsonl").read_text().splitlines()]
    assert [t["key"] for t in tasks] == ["0", "1", "0", "1"]
    assert [t["sample_index"] for t in tasks] == [0, 1, 0, 1]
    assert asked.count("decompose") == 2 and "digest" in asked and "other" not in asked
    records = sorted(p.stem for p in (tmp_path / "work/records").glob("*.jsonl"))
    # no generation, no IMCQ / I2I / I2T recorded; the knowledge cutoff's records of the data (what the
    # tasks may show) are
    assert records == ["cutoff", "decompose", "digest"]
    for task in tasks:
        assert task["task_id"] == f"aiideabench/generate/{task['instance_id']}/{task['key']}"
        assert task["contract"] == "ideaharness.idea/aiideabench/v1" and task["seed"] == 0
        inputs = task["inputs"]
        assert inputs["topic"].startswith(ANON)  # never the background question (it may name the method)
        assert inputs["inspirations"] and all(i.startswith("DIGEST of ") for i in inputs["inspirations"])
        user = task["prompt"][-1]["content"]
        assert inputs["topic"] in user and all(i in user for i in inputs["inspirations"])


def test_a_run_saved_before_systems_still_loads_and_is_named(tmp_path: Path) -> None:
    """A config.json from before issue 20 (``ideas_file``, an unused generator): the config loads
    with ``ideas``, and the competition names that run by its file and kind."""
    from ideaharness.benchmarks.aiideabench.competition import run_system

    old = {"benchmark": "aiideabench", "ideas_file": "runs/chunky.jsonl", "generator": "openai/unused",
           "judge": "openai/j"}
    cfg = AIIdeaBenchConfig.model_validate(old)
    assert cfg.ideas == "runs/chunky.jsonl" and cfg.generator_role == "ideas:runs/chunky.jsonl"
    assert cfg.system_label == "chunky"
    assert run_system(tmp_path, old) == ("chunky", "ideas-file")
    assert run_system(tmp_path, {"benchmark": "aiideabench", "generator": "openai/gpt-x"}) == (
        "openai/gpt-x", "model")
