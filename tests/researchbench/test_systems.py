"""ResearchBench measuring an idea-generation *system* (issue 20): ``--ideas FILE`` and a ``cmd:``
agent compose the hypotheses (the contract of :mod:`ideaharness.benchmarks.researchbench.contract`),
a loopback judge scores them; no model is run."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ideaharness.benchmarks.researchbench.contract import CONTRACT, from_row
from ideaharness.cli import main
from ideaharness.errors import ParseError
from ideaharness.systems import get_contract
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.blinding_support import is_rewrite, scripted_rewrite
from tests.researchbench.test_rb_run import RELEASE

CHEM, PHYS = "Chemistry/101000chem0001", "Physics/101000phys0002"
HYPOTHESES = {
    CHEM: "Ammonia forms at room temperature when a layered catalyst couples nitrogen activation with "
          "proton transfer through two mechanisms.",
    PHYS: "A lattice of coupled resonators slows light because the two inspirations' band engineering and "
          "loss compensation act together.",
}


def judge_reply(body: dict[str, Any]) -> str:
    """Matched scores that depend on the hypothesis shown (so equal scores mean equal hypotheses);
    "candidate 1" for the ranking; rewrites in the negatives' form."""
    user = body["messages"][-1]["content"]
    if is_rewrite(user):
        return scripted_rewrite(user)
    if "Matched score:" in user:
        proposed = user.split("Proposed hypothesis:", 1)[1].split("Ground-truth hypothesis:", 1)[0]
        return f"Matched score: {len(proposed) % 6}\nReason: r"
    return "**Analysis**: x\n**Selection of research hypothesis candidate**: candidate 1"


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[OpenAICompatServer]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    with OpenAICompatServer(judge_reply) as server:
        yield server


def write_ideas(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run(args: list[str], judge: OpenAICompatServer, out: Path, capsys: pytest.CaptureFixture[str],
        *, task: str = "composition") -> tuple[int, dict[str, Any], str]:
    argv = ["run", "researchbench", "--data", str(RELEASE), "--task", task, "--judge", "openai/judge",
            "--judge-base-url", judge.base_url, "--max-retries", "0", "--no-progress", "--out", str(out),
            *args]
    with pytest.raises(SystemExit) as exc:
        main(argv)
        raise SystemExit(0)
    err = capsys.readouterr().err
    return int(exc.value.code or 0), json.loads((out / "results.json").read_text()), err


def score_values(out: Path) -> list[tuple[Any, ...]]:
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines() if line.strip()]
    return sorted((r["metric"], r.get("group"), r["instance_id"], r.get("value")) for r in rows)


def generation_records(out: Path) -> list[dict[str, Any]]:
    path = out / "records" / "researchbench_generate.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


AGENT = """\
import json, sys
task = json.load(sys.stdin)
answers = {answers}
assert task["inputs"]["condition"] == task["key"], task
print(json.dumps({{"instance_id": task["instance_id"], "hypothesis": answers[task["instance_id"]]}}))
"""


def test_ideas_file_and_a_command_give_the_same_scores(
    judge: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ideas = write_ideas(tmp_path / "ideas.jsonl", [{"instance_id": i, "hypothesis": h}
                                                   for i, h in HYPOTHESES.items()])
    code, results, err = run(["--ideas", str(ideas)], judge, tmp_path / "file", capsys)
    assert code == 0, err
    comp = results["composition"]["overall"]
    assert set(comp) == {"one_step"} and comp["one_step"]["scored"] == 2  # the pipeline is a model's method
    per = results["per_instance"][CHEM]["composition"]["one_step"]
    assert per["hypothesis"] == HYPOTHESES[CHEM] and per["system"] == "ideas" and per["generation_calls"] == 1
    assert results["composition_generator"]["system"] == "ideas"
    assert results["composition_generator"]["methods_not_run"] == ["pipeline"]
    assert any("reported as method one_step; the model method(s) pipeline not run" in n
               for n in results["notes"])
    (source,) = results["idea_sources"]
    assert source["kind"] == "ideas-file" and source["answers"]["missing"] == []
    records = generation_records(tmp_path / "file")
    assert {r["key"] for r in records} == {"one_step"}
    assert all(r["data"]["judgment"]["parse_ok"] and r["data"].get("system_task") for r in records), records

    agent = tmp_path / "agent.py"
    agent.write_text(AGENT.format(answers=repr(HYPOTHESES)))
    code, again, err = run(["--generator", f"cmd:{sys.executable} {agent}"], judge, tmp_path / "cmd", capsys)
    assert code == 0, err
    assert again["composition_generator"]["system"] == "agent.py"
    values = score_values(tmp_path / "file")
    assert values == score_values(tmp_path / "cmd")
    matched = [v for v in values if v[0] == "researchbench.matched_score"]
    assert [(v[1], v[2]) for v in matched] == [("one_step", i) for i in sorted(HYPOTHESES)]
    assert all(v[3] is not None for v in matched)


def test_the_task_shows_what_the_one_step_prompt_shows(
    judge: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = tmp_path / "tasks.jsonl"
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import json, sys\ntask = json.load(sys.stdin)\n"
        f"open({str(seen)!r}, 'a').write(json.dumps(task) + '\\n')\n"
        f"answers = {HYPOTHESES!r}\n"
        "iid = task['instance_id']\n"
        "print(json.dumps({'instance_id': iid, 'hypothesis': answers[iid]}))\n")
    code, _, err = run(["--generator", f"cmd:{sys.executable} {agent}", "--limit", "1"], judge,
                       tmp_path / "run", capsys)
    assert code == 0, err
    (task,) = [json.loads(line) for line in seen.read_text().splitlines()]
    assert task["benchmark"] == "researchbench" and task["step"] == "researchbench_generate"
    assert task["instance_id"] == CHEM and task["key"] == "one_step" and task["sample_index"] == 0
    inputs = task["inputs"]
    assert inputs["condition"] == "one_step"
    assert inputs["question"] == "How can ammonia be made at room temperature?"
    assert inputs["survey"] == "Survey text for Catalyst X." and inputs["discipline"] == "Chemistry"
    assert [i["title"] for i in inputs["inspirations"]] == [
        t for t in (i["title"] for i in inputs["inspirations"]) if t in task["prompt"][-1]["content"]]
    assert len(inputs["inspirations"]) == 2
    assert task["answer_schema"]["$id"] == CONTRACT.schema_id
    assert "hypothesis" in task["answer_schema"]["required"]


def test_a_missing_instance_is_a_failed_unit_never_a_zero(
    judge: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ideas = write_ideas(tmp_path / "ideas.jsonl", [{"instance_id": CHEM, "hypothesis": HYPOTHESES[CHEM]}])
    code, results, _ = run(["--ideas", str(ideas)], judge, tmp_path / "run", capsys)
    assert code == 3
    failed = [u for u in results["failed_units"] if u["step"] == "researchbench_generate"]
    assert [(u["instance_id"], u["key"]) for u in failed] == [(PHYS, "one_step")]
    assert "no answer" in failed[0]["error"] and PHYS in failed[0]["error"]
    assert results["idea_sources"][0]["answers"]["missing"] == [PHYS]
    entry = results["per_instance"][PHYS]["composition"]["one_step"]
    assert entry["hypothesis"] is None and entry["score"] is None and not entry["done"]
    scores = {(v[0], v[2]): v[3] for v in score_values(tmp_path / "run")}
    assert scores[("researchbench.matched_score", PHYS)] is None  # unscored, not 0
    assert results["composition"]["overall"]["one_step"]["scored"] == 1


def test_a_degenerate_hypothesis_is_unparsed_naming_file_line_and_field(
    judge: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ideas = write_ideas(tmp_path / "ideas.jsonl", [{"instance_id": CHEM, "hypothesis": HYPOTHESES[CHEM]},
                                                   {"instance_id": PHYS, "hypothesis": "... \u200b ..."}])
    code, results, _ = run(["--ideas", str(ideas)], judge, tmp_path / "run", capsys)
    assert code in (0, 3)
    (unit,) = [u for u in results["unparsed_units"] if u["step"] == "researchbench_generate"]
    assert unit["instance_id"] == PHYS
    assert "ideas.jsonl line 2" in unit["error"] and "field 'hypothesis'" in unit["error"], unit["error"]
    entry = results["per_instance"][PHYS]["composition"]["one_step"]
    assert entry["hypothesis"] is None and entry["score"] is None and entry["generation_parse_failures"] == 1
    assert results["composition"]["overall"]["one_step"]["generation_failures"] == 1


def test_an_extra_instance_is_reported_and_ignored(
    judge: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{"instance_id": i, "hypothesis": h} for i, h in HYPOTHESES.items()]
    ideas = write_ideas(tmp_path / "ideas.jsonl", [*rows, {"instance_id": "Biology/none", "hypothesis": "x"}])
    code, results, err = run(["--ideas", str(ideas)], judge, tmp_path / "run", capsys)
    assert code == 0, err
    assert results["idea_sources"][0]["answers"]["extra_instances"] == ["Biology/none"]
    assert set(results["per_instance"]) == set(HYPOTHESES)


def test_ranking_negatives_are_the_systems_and_retrieval_is_not_run(
    judge: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--task all``: the system answers one_step (row 0) and negative0 (row 1) of each paper; the
    judge ranks the gold against the system's negative; retrieval is said not run."""
    rows = [{"instance_id": i, "hypothesis": h, "sample_index": 0} for i, h in HYPOTHESES.items()]
    rows += [{"instance_id": i, "sample_index": 1, "hypothesis": f"A negative hypothesis for {i} built from "
              "unrelated papers that share no mechanism with the question."} for i in HYPOTHESES]
    ideas = write_ideas(tmp_path / "ideas.jsonl", rows)
    flags = ["--ideas", str(ideas), "--ranking-negatives", "generated", "--n-negatives", "1"]
    code, results, err = run(flags, judge, tmp_path / "run", capsys, task="all")
    assert code == 0, err
    assert results["tasks"] == ["composition", "ranking"] and "retrieval" not in results
    assert any(n.startswith("retrieval not run: screening measures a model") for n in results["notes"])
    assert results["composition_generator"]["tasks_not_run"] == ["retrieval"]
    ranking = results["per_instance"][CHEM]["ranking"]
    assert ranking["source"] == "generated" and [p["negative_id"] for p in ranking["pairs"]] == ["negative0"]
    keys = {(r["instance_id"], r["key"]) for r in generation_records(tmp_path / "run")}
    assert keys == {(i, k) for i in HYPOTHESES for k in ("one_step", "negative0")}


def test_only_retrieval_with_a_system_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "researchbench", "--data", str(RELEASE), "--task", "retrieval", "--ideas",
              str(tmp_path / "ideas.jsonl"), "--out", str(tmp_path / "run")])
    assert exc.value.code == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "answers composition and ranking tasks only" in err, err


def test_contract_parse_and_from_row() -> None:
    from ideaharness.benchmarks.researchbench import parse_hypothesis
    from ideaharness.benchmarks.researchbench.contract import composition_task

    assert get_contract("researchbench") is CONTRACT
    task = composition_task(CHEM, "one_step", discipline="Chemistry", question="q", survey=None,
                            inspirations=[], seed=0)
    text = HYPOTHESES[CHEM]
    parsed = CONTRACT.parse(json.dumps({"instance_id": CHEM, "hypothesis": f"  {text}\n"}), task)
    assert parsed == parse_hypothesis(f"Hypothesis: {text}\nReasoning: r")
    for bad, needle in (({"instance_id": CHEM, "hypothesis": "too short"}, "field 'hypothesis' is too short"),
                        ({"instance_id": CHEM}, "field 'hypothesis'"),
                        ({"instance_id": CHEM, "hypothesis": text, "idea": "x"}, "field 'idea'"),
                        ({"instance_id": PHYS, "hypothesis": text}, PHYS)):
        with pytest.raises(ParseError, match=needle):
            CONTRACT.parse(json.dumps(bad), task)
    assert from_row({"instance_id": CHEM, "hypothesis": "h", "text": "t"}, task) == {"hypothesis": "h"}
    assert from_row({"instance_id": CHEM, "text": "t", "title": "T"}, task) == {"hypothesis": "t",
                                                                               "title": "T"}
    assert from_row({"instance_id": CHEM, "motivation": "m", "method": "x"}, task) == {"hypothesis": "m x"}
    assert from_row({"instance_id": CHEM, "abstract": "a"}, task) == {}


def test_tasks_export_lists_every_condition_and_answers_them_by_sample_index(
    judge: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tasks export`` (a model generator left at its default): the one-step task and the negatives'
    tasks of each paper, no pipeline, nothing asked; answering them row by row runs complete."""
    out = tmp_path / "tasks.jsonl"
    with pytest.raises(SystemExit) as exc:
        main(["tasks", "export", "researchbench", "--data", str(RELEASE), "--task", "all",
              "--ranking-negatives", "generated", "--n-negatives", "2", "--out", str(out)])
        raise SystemExit(0)
    assert exc.value.code == 0, capsys.readouterr().err
    tasks = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted((t["instance_id"], t["key"], t["sample_index"]) for t in tasks) == sorted(
        (i, k, n) for i in HYPOTHESES for n, k in enumerate(("one_step", "negative0", "negative1")))
    negative = next(t for t in tasks if t["key"] == "negative0")
    gold_titles = {i["title"] for t in tasks if t["key"] == "one_step" for i in t["inputs"]["inspirations"]}
    assert negative["inputs"]["condition"] == "negative0" and len(negative["inputs"]["inspirations"]) == 2
    assert not gold_titles & {i["title"] for i in negative["inputs"]["inspirations"]}  # non-gold candidates
    rows = [{"instance_id": t["instance_id"], "sample_index": t["sample_index"],
             "hypothesis": f"{HYPOTHESES[t['instance_id']]} Condition {t['key']}."} for t in tasks]
    ideas = write_ideas(tmp_path / "ideas.jsonl", rows)
    flags = ["--ideas", str(ideas), "--ranking-negatives", "generated", "--n-negatives", "2"]
    code, results, err = run(flags, judge, tmp_path / "run", capsys, task="all")
    assert code == 0, err
    assert results["idea_sources"][0]["answers"]["missing"] == []
    assert all(len(results["per_instance"][i]["ranking"]["pairs"]) == 2 for i in HYPOTHESES)
