"""IdeaBench with a system as the generator (issue 20): ``--ideas FILE`` (the idea contract), a
``cmd:`` agent giving the same answers, missing, degenerate and extra instances, the contract's
rules against the reply parser's, and ``tasks export`` showing what the prompt was rendered from.
No generating model: the judge (and rewriter) is scripted."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import ideaharness
from ideaharness.benchmarks.ideabench.contract import CONTRACT, from_rows
from ideaharness.benchmarks.ideabench.parsers import parse_ideas
from ideaharness.cli import main
from ideaharness.errors import ParseError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.prompts import TRUNCATION_MARK, render
from ideaharness.systems import GenerationTask, get_contract
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.ideabench.conftest import ideabench_responder

IDS = ["tomato-chem/0", "tomato-chem/1"]
IDEA = "Idea {i} for {iid}: test whether doping the hydrogel with {salt} raises its thermopower at 25 C"


def ideas_of(iid: str, n: int = 3) -> list[dict[str, str]]:
    # the scripted judge finds the target in a ranking as the one text not starting "Idea "
    return [{"title": f"T{i}", "idea": IDEA.format(i=i, iid=iid, salt=("LiCl", "NaCl", "KCl")[i % 3])}
            for i in range(n)]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def answers(tmp_path: Path, ids: list[str] = IDS) -> Path:
    return write_jsonl(tmp_path / "ideas.jsonl", [{"instance_id": i, "ideas": ideas_of(i)} for i in ids])


def judge() -> ScriptedModel:
    return ScriptedModel(ideabench_responder(), model="scripted/judge")


def run(out: Path, **kwargs: Any) -> dict[str, Any]:
    model = judge()
    return ideaharness.run("ideabench", judge="scripted/judge", models={"judge": model}, limit=len(IDS),
                           out=out, progress=False, bootstrap_resamples=50, **kwargs)


def scores(out: Path) -> list[tuple[Any, ...]]:
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines() if line.strip()]
    return sorted((r["metric"], r["group"], r["instance_id"], r["value"], r.get("reason")) for r in rows)


def records(out: Path, step: str) -> list[dict[str, Any]]:
    path = out / "records" / f"{step}.jsonl"
    return [json.loads(line)["data"] for line in path.read_text().splitlines()]


AGENT = '''
import json, sys
task = json.load(sys.stdin)
rows = [json.loads(line) for line in open(sys.argv[1])]
row = next(r for r in rows if r["instance_id"] == task["instance_id"])
assert task["inputs"]["n_ideas"] == len(row["ideas"]) and task["inputs"]["references"]
print(json.dumps({"instance_id": task["instance_id"], "ideas": row["ideas"], "system": "agent"}))
'''


def test_ideas_file_runs_and_scores_and_a_cmd_agent_scores_the_same(tmp_path: Path) -> None:
    file = answers(tmp_path)
    results = run(tmp_path / "file", ideas=str(file))
    low = results["scenarios"]["low"]
    assert results["status"] == "complete", results.get("failed_units")
    assert low["instances_generated"] == 2 and low["generation_parse_failures"] == 0
    assert low["insight"]["novelty"]["insight_score"] == 1.0  # the scripted judge ranks the target last
    assert low["overlap"]["mean"] == 7.0 and low["similarity"]["n"] == 2
    assert results["generator"] == "ideas"  # the system's name (the file's stem), not a model
    assert results["rewriter"] == "scripted/judge"  # never the system; recorded
    system = results["idea_sources"][0]
    assert system["kind"] == "ideas-file" and system["system"] == "ideas"
    assert system["answers"]["extra_instances"] == []
    # the record: the task as the prompt, the contract's parse, exactly the reply parser's value
    rec = records(tmp_path / "file", "generate_low")[0]
    assert rec["system_task"] is True and rec["judgment"]["parse_ok"]
    assert rec["judgment"]["parsed"] == parse_ideas(json.dumps({"ideas": ideas_of(rec_id(rec))}), 3)

    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    via_cmd = run(tmp_path / "cmd", generator=f"cmd:{sys.executable} {agent} {file}")
    assert via_cmd["status"] == "complete", via_cmd.get("failed_units")
    assert via_cmd["generator"] == "agent.py" and via_cmd["idea_sources"][0]["kind"] == "command"
    assert scores(tmp_path / "cmd") == scores(tmp_path / "file")
    assert any(value is not None for _, _, _, value, _ in scores(tmp_path / "file"))


def rec_id(rec: dict[str, Any]) -> str:
    return str(json.loads(rec["judgment"]["raw_text"])["instance_id"])


class RecordsOf:
    """The records of a finished run, read back (``get`` as the run store's)."""

    def __init__(self, out: Path) -> None:
        self.rows = {(r["step"], r["instance_id"], r["key"]): r["data"]
                     for path in (out / "records").glob("*.jsonl")
                     for r in map(json.loads, path.read_text().splitlines())}

    def get(self, step: str, instance_id: str, key: str = "") -> Any:
        return self.rows.get((step, instance_id, key))


def test_ideas_carry_the_systems_provenance(tmp_path: Path) -> None:
    from ideaharness.benchmarks.ideabench.run import IdeaBench

    file = answers(tmp_path)
    run(tmp_path / "run", ideas=str(file), system="my-agent")
    bench = IdeaBench(IdeaBench.config_class(ideas=str(file), system="my-agent", judge="scripted/judge"))
    bench.store = RecordsOf(tmp_path / "run")  # type: ignore[assignment]
    ideas = bench.ideas(bench.load()[0], "low")
    assert ideas and {i.provenance.generator for i in ideas} == {"my-agent"}
    assert {i.provenance.model for i in ideas} == {"ideas-file"}
    assert [i.text for i in ideas] == [i["idea"] for i in ideas_of(IDS[0])]


def test_a_missing_instance_is_a_failed_unit_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    file = answers(tmp_path, ids=IDS[:1])
    respond = ideabench_responder()
    out = tmp_path / "run"
    with OpenAICompatServer(lambda body: respond(body["messages"])) as server:
        with pytest.raises(SystemExit) as exc:
            main(["run", "ideabench", "--data", "tomato-chem", "--limit", "2", "--ideas", str(file),
                  "--judge", "openai/judge", "--judge-base-url", server.base_url, "--no-progress",
                  "--bootstrap-resamples", "50", "--out", str(out)])
    assert exc.value.code == 3, capsys.readouterr().err
    results = json.loads((out / "results.json").read_text())
    failed = [u for u in results["failed_units"] if u["step"] == "generate/low"]
    assert [u["instance_id"] for u in failed] == [IDS[1]]
    assert IDS[1] in failed[0]["error"] and "ideas.jsonl" in failed[0]["error"]
    assert results["idea_sources"][0]["answers"]["missing"] == [IDS[1]]
    assert results["scenarios"]["low"]["instances_generated"] == 1
    # never a zero: the missing instance has no scored value
    assert not [s for s in scores(out) if s[2] == IDS[1] and s[3] is not None]


def test_a_degenerate_idea_is_an_unparsed_unit_naming_file_line_and_field(tmp_path: Path) -> None:
    rows = [{"instance_id": IDS[0], "ideas": ideas_of(IDS[0])},
            {"instance_id": IDS[1], "ideas": [*ideas_of(IDS[1])[:2], {"title": "T2", "idea": " ... "}]}]
    file = write_jsonl(tmp_path / "ideas.jsonl", rows)
    results = run(tmp_path / "run", ideas=str(file))
    unparsed = [u for u in results["unparsed_units"] if u["step"] == "generate/low"]
    assert [u["instance_id"] for u in unparsed] == [IDS[1]]
    error = unparsed[0]["error"]
    assert f"{file.name} line 2" in error and "field 'ideas[2].idea'" in error and "idea 3" in error, error
    assert results["scenarios"]["low"]["generation_parse_failures"] == 1
    assert results["scenarios"]["low"]["instances_generated"] == 1


def test_a_file_of_one_row_per_idea_scores_as_contract_rows(tmp_path: Path) -> None:
    contract_rows = run(tmp_path / "contract", ideas=str(answers(tmp_path)))
    rows = [{"instance_id": i, "title": idea["title"], "text": idea["idea"]}
            for i in IDS for idea in ideas_of(i)]
    per_idea = run(tmp_path / "per-idea", ideas=str(write_jsonl(tmp_path / "rows.jsonl", rows)))
    assert per_idea["status"] == contract_rows["status"] == "complete"
    assert scores(tmp_path / "per-idea") == scores(tmp_path / "contract")
    rows[4]["text"] = "Too short."  # line 5: idea 2 of the second instance, whose rows start at line 4
    broken = run(tmp_path / "broken", ideas=str(write_jsonl(tmp_path / "broken.jsonl", rows)))
    error = next(u["error"] for u in broken["unparsed_units"] if u["step"] == "generate/low")
    assert "broken.jsonl lines 4, 5, 6, field 'ideas[1].idea' (line 5): idea 2 is too short" in error, error


def test_one_row_per_idea_names_the_row_of_a_degenerate_idea(tmp_path: Path) -> None:
    task = GenerationTask("ideabench", "generate/low", IDS[0], inputs={"n_ideas": 3, "scenario": "low"})
    rows = [{"instance_id": IDS[0], "title": "A", "text": IDEA.format(i=0, iid="x", salt="LiCl"),
             "_line": 1, "_source": "ideas.jsonl"},
            {"instance_id": IDS[0], "hypothesis": "Salt raises the thermopower.",
             "method": "Measure the Seebeck coefficient of doped and plain gels at 25 C.",
             "_line": 4, "_source": "ideas.jsonl"},
            {"instance_id": IDS[0], "title": "Only a title", "_line": 7, "_source": "ideas.jsonl"},
            {"instance_id": IDS[0], "scenario": "high", "text": "not this scenario", "_line": 9}]
    answer = {**from_rows(rows, task), "instance_id": IDS[0],
              "provenance": {"source": "ideas.jsonl", "line": 1}}
    with pytest.raises(ParseError, match=r"^ideas.jsonl line 1, field 'ideas\[2\].idea' \(line 7\): "
                       "idea 3 is too short"):
        CONTRACT.parse(json.dumps(answer), task)
    rows[2]["_where"] = "key 'runs', idea 3"  # a JSON file's place of an idea (the converters' _where)
    with pytest.raises(ParseError, match=r"field 'ideas\[2\].idea' \(key 'runs', idea 3\): idea 3 is too "
                       "short"):
        CONTRACT.parse(json.dumps({**from_rows(rows, task), "instance_id": IDS[0]}), task)
    rows[2]["text"] = "Idea two: a third gel doped with cesium chloride should raise thermopower further."
    parsed = CONTRACT.parse(json.dumps({**from_rows(rows, task), "instance_id": IDS[0]}), task)
    assert [p["title"] for p in parsed] == ["A", "", "Only a title"]
    assert parsed[1]["idea"] == ("Salt raises the thermopower.\n\nMeasure the Seebeck coefficient of "
                                 "doped and plain gels at 25 C.")


@pytest.mark.parametrize("ideas", [
    [{"title": "x", "idea": "too short an idea"}] * 3,  # under IDEA_MIN_WORDS
    [{"idea": "I'm sorry, but I cannot help with proposing research ideas on this topic today."}] * 3,
    [{"idea": "\u200b\u200b ... !!"}] * 3,
    [{"idea": IDEA.format(i=0, iid="x", salt="LiCl")}] * 2,  # not n ideas
])
def test_the_contract_refuses_what_the_reply_parser_refuses(ideas: list[dict[str, str]]) -> None:
    task = GenerationTask("ideabench", "generate/low", IDS[0], inputs={"n_ideas": 3, "scenario": "low"})
    with pytest.raises(ParseError):
        parse_ideas(json.dumps({"ideas": ideas}), 3)
    with pytest.raises(ParseError, match=r"^answer of ideabench/generate/low/tomato-chem/0/, field 'ideas"):
        get_contract("ideabench").parse(json.dumps({"instance_id": IDS[0], "ideas": ideas}), task)


def test_the_contract_accepts_what_the_reply_parser_accepts_with_the_same_value() -> None:
    task = GenerationTask("ideabench", "generate/high", IDS[0], inputs={"n_ideas": 2, "scenario": "high"})
    ideas = [{"title": "  Padded  ", "idea": "\u200b" + IDEA.format(i=0, iid="x", salt="LiCl") + "  "},
             {"idea": IDEA.format(i=1, iid="x", salt="KCl")}]
    expected = parse_ideas(json.dumps({"ideas": ideas}), 2)
    assert CONTRACT.parse(json.dumps({"instance_id": IDS[0], "ideas": ideas}), task) == expected
    with pytest.raises(ParseError, match="field 'scenario'"):
        CONTRACT.parse(json.dumps({"instance_id": IDS[0], "ideas": ideas, "scenario": "low"}), task)
    with pytest.raises(ParseError, match="field 'ideas.0.text': unknown field"):
        CONTRACT.parse(json.dumps({"instance_id": IDS[0], "ideas": [{"text": "x"}]}), task)


def test_an_extra_instance_is_reported_and_ignored(tmp_path: Path) -> None:
    file = write_jsonl(tmp_path / "ideas.jsonl", [
        *({"instance_id": i, "ideas": ideas_of(i)} for i in IDS),
        {"instance_id": "not-in-the-data/7", "ideas": ideas_of("x")}])
    results = run(tmp_path / "run", ideas=str(file))
    assert results["status"] == "complete", results.get("failed_units")
    assert results["idea_sources"][0]["answers"]["extra_instances"] == ["not-in-the-data/7"]
    assert not [s for s in scores(tmp_path / "run") if s[2] == "not-in-the-data/7"]


def _export(tmp_path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> list[dict[str, Any]]:
    out = tmp_path / "tasks.jsonl"
    with pytest.raises(SystemExit) as exc:
        main(["tasks", "export", "ideabench", "--data", "tomato-chem", "--limit", "2", *flags,
              "--out", str(out)])
        raise SystemExit(0)
    assert exc.value.code in (0, None), capsys.readouterr().err
    return [json.loads(line) for line in out.read_text().splitlines()]


def _has_tasks_cli() -> bool:
    try:
        import ideaharness.cli.tasks  # noqa: F401
    except ImportError:
        return False
    return True


needs_tasks_cli = pytest.mark.skipif(not _has_tasks_cli(), reason="`ideaharness tasks` has not landed")


def _rendered(inputs: dict[str, Any]) -> list[dict[str, str]]:
    refs = [{"title": r["title"], "abstract": r["abstract"]} for r in inputs["references"]]
    return list(render("ideabench_generate", domain=inputs["domain"], n_ideas=inputs["n_ideas"],
                       references=refs))


@needs_tasks_cli
def test_exported_inputs_are_what_the_prompt_was_rendered_from(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    tasks = _export(tmp_path, capsys, "--scenario", "low", "--scenario", "high")
    assert [(t["instance_id"], t["step"]) for t in tasks] == [
        (IDS[0], "generate/low"), (IDS[1], "generate/low"),
        (IDS[0], "generate/high"), (IDS[1], "generate/high")]
    # the model path: the same prompt, the same references
    model = judge()
    ideaharness.run("ideabench", generator="scripted/judge", judge="scripted/judge",
                    models={"generator": model, "judge": model}, limit=2, out=tmp_path / "model",
                    progress=False, bootstrap_resamples=50, scenarios=["low", "high"])
    for task in tasks:
        scenario = task["inputs"]["scenario"]
        assert task["step"] == f"generate/{scenario}" and task["seed"] == 0 and task["sample_index"] == 0
        assert task["contract"] == CONTRACT.schema_id and task["answer_schema"] == CONTRACT.json_schema()
        assert _rendered(task["inputs"]) == task["prompt"]
        rec = next(r for r in records(tmp_path / "model", f"generate_{scenario}")
                   if r["judgment"]["prompt_hash"] and r.get("references") is not None
                   and set(r["references"]) == {ref["id"] for ref in task["inputs"]["references"]})
        assert [ref["id"] for ref in task["inputs"]["references"]] == rec["references"]
    prompts = [json.loads(line) for line in (tmp_path / "model" / "prompts.jsonl").read_text().splitlines()]
    shown = [p.get("messages") for p in prompts]
    assert all(task["prompt"] in shown for task in tasks)


@needs_tasks_cli
def test_exported_inputs_carry_the_prompt_budgets_cut(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    tasks = _export(tmp_path, capsys, "--max-prompt-tokens", "400")
    cut = [r for t in tasks for r in t["inputs"]["references"] if r["abstract"].endswith(TRUNCATION_MARK)]
    assert cut, "no abstract was cut: lower the budget"
    for task in tasks:
        assert _rendered(task["inputs"]) == task["prompt"]
