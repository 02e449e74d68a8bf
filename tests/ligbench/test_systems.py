"""LigBench measuring idea-generation *systems* (issue 20): ``--ideas FILE`` and a ``cmd:`` agent
answer the topics' tasks (the contract of :mod:`ideaharness.benchmarks.ligbench.contract`), a
loopback judge scores the ideas against the fixture corpus. No model is run: sentence embeddings
are replaced by hashed bags of words (:class:`HashEncoder`)."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ideaharness.benchmarks.ligbench import LigBenchConfig
from ideaharness.benchmarks.ligbench.config import parse_generated_idea
from ideaharness.benchmarks.ligbench.contract import CONTRACT, from_row, generation_task, idea_markdown
from ideaharness.cli import main
from ideaharness.errors import ParseError, UserError
from ideaharness.systems import get_contract
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.ligbench.registry_fixtures import reply as fixture_reply

TOPICS = ["Graph neural networks", "Sparse attention"]
IDEAS = {
    "t00": {"problem": "Graph network predictions are hard to explain to domain experts.",
            "method": "Extract logic rules over learned concepts and check them against the model.",
            "experiment_design": "Compare with GNNExplainer on three molecule datasets by rule fidelity."},
    "t01": {"problem": "Attention over long documents costs quadratic memory and time.",
            "method": "Route each query to a few learned key clusters and attend within them only.",
            "experiment_design": "Measure perplexity and memory against dense and sliding-window baselines."},
}


class HashEncoder:
    """A stand-in sentence encoder: L2-normalised hashed bags of words (deterministic, no model)."""

    def encode(self, texts: list[str], **_: Any) -> np.ndarray:
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, int(hashlib.sha256(word.encode()).hexdigest()[:8], 16) % 384] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


def judge_reply(body: dict[str, Any]) -> str:
    """The fixture judge, with initial scores that depend on the idea shown (equal scores across
    runs then mean equal ideas)."""
    user = body["messages"][-1]["content"]
    if "score this new idea" in user:
        k = len(user) % 4
        return json.dumps({"rating": 1 + k, "contribution": 2, "soundness": 1 + (k + 1) % 4, "novelty": 3})
    return fixture_reply(body)


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[OpenAICompatServer]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr("ideaharness.metrics.embeddings._load", lambda name, device="cpu": HashEncoder())
    with OpenAICompatServer(judge_reply) as server:
        yield server


def data_args(tmp_path: Path) -> list[str]:
    from tests.ligbench.registry_fixtures import corpus

    topics = tmp_path / "topics.txt"
    topics.write_text("".join(t + "\n" for t in TOPICS))
    return ["--corpus", str(corpus(tmp_path)), "--topics", str(topics)]


def write_ideas(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def rows_of(ideas: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    return [{"instance_id": iid, **fields} for iid, fields in ideas.items()]


def run(args: list[str], judge: OpenAICompatServer, out: Path,
        capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    argv = ["run", "ligbench", *data_args(out.parent), "--judge", "openai/judge", "--judge-base-url",
            judge.base_url, "--max-retries", "0", "--no-progress", "--out", str(out), *args]
    with pytest.raises(SystemExit) as exc:
        main(argv)
        raise SystemExit(0)
    err = capsys.readouterr().err
    return int(exc.value.code or 0), json.loads((out / "results.json").read_text()), err


def score_values(out: Path) -> list[tuple[Any, ...]]:
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines() if line.strip()]
    return sorted((r["metric"], r.get("group"), r["instance_id"], r.get("system"), r.get("value"))
                  for r in rows)


AGENT = """\
import json, sys
task = json.load(sys.stdin)
ideas = {ideas}
assert task["inputs"]["topic"] == {topics}[int(task["instance_id"][1:])], task
print(json.dumps({{"instance_id": task["instance_id"], **ideas[task["instance_id"]]}}))
"""


def test_ideas_file_and_a_command_give_the_same_scores(
    judge: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ideas = write_ideas(tmp_path / "ideas.jsonl", rows_of(IDEAS))
    code, results, err = run(["--ideas", str(ideas), "--system", "my-agent"], judge, tmp_path / "file",
                             capsys)
    assert code == 0, err
    assert set(results["systems"]) == {"my-agent"}  # --ideas alone: not the default model too
    block = results["systems"]["my-agent"]
    assert block["n_ideas"] == 2 and block["n_scored"] == 2 and block["parse_failures"]["generate"] == 0
    assert set(results["ideas"]) == {"my-agent::t00::0", "my-agent::t01::0"}
    (source,) = results["idea_sources"]
    assert source["kind"] == "ideas-file" and source["system"] == "my-agent"
    assert source["answers"]["missing"] == [] and source["answers"]["extra_instances"] == []
    records = [json.loads(line) for line in
               (tmp_path / "file" / "records" / "ligbench_generate.jsonl").read_text().splitlines()]
    assert all(r["data"]["judgment"]["parse_ok"] and r["data"].get("system_task") for r in records)
    parsed = {r["instance_id"]: r["data"]["judgment"]["parsed"] for r in records}
    assert parsed["my-agent::t00::0"] == parse_generated_idea(idea_markdown(**IDEAS["t00"]))

    agent = tmp_path / "agent.py"
    agent.write_text(AGENT.format(ideas=repr(IDEAS), topics=repr(TOPICS)))
    code, again, err = run(["--generator", f"cmd:{sys.executable} {agent}", "--system", "my-agent"], judge,
                           tmp_path / "cmd", capsys)
    assert code == 0, err
    assert again["idea_sources"][0]["kind"] == "command"
    values = score_values(tmp_path / "file")
    assert values == score_values(tmp_path / "cmd")
    assert len(values) == 8 and all(v[4] is not None for v in values)  # 2 ideas x 4 dimensions


def test_a_missing_topic_is_a_failed_unit_never_a_zero(
    judge: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ideas = write_ideas(tmp_path / "ideas.jsonl", rows_of({"t00": IDEAS["t00"]}))
    code, results, _ = run(["--ideas", str(ideas)], judge, tmp_path / "run", capsys)
    assert code == 3
    failed = [u for u in results["failed_units"] if u["step"] == "ligbench/generate"]
    assert [u["instance_id"] for u in failed] == ["ideas::t01::0"]
    assert "no answer" in failed[0]["error"] and "t01" in failed[0]["error"]
    assert results["idea_sources"][0]["answers"]["missing"] == ["t01"]
    block = results["systems"]["ideas"]
    assert block["n_ideas"] == 2 and block["n_scored"] == 1 and block["not_done"] == 1
    assert all(s["n"] == 1 for s in block["scores"].values())  # the missing idea is not a zero
    assert {v[2] for v in score_values(tmp_path / "run")} == {"ideas::t00::0"}


def test_a_degenerate_idea_is_unparsed_naming_file_line_and_field(
    judge: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = rows_of(IDEAS)
    rows[1]["method"] = "\u200b ... \u2060"
    ideas = write_ideas(tmp_path / "ideas.jsonl", rows)
    code, results, _ = run(["--ideas", str(ideas)], judge, tmp_path / "run", capsys)
    assert code in (0, 3)
    (unit,) = [u for u in results["unparsed_units"] if u["step"] == "ligbench/generate"]
    assert unit["instance_id"] == "ideas::t01::0"
    assert "ideas.jsonl line 2" in unit["error"] and "field 'method'" in unit["error"], unit["error"]
    block = results["systems"]["ideas"]
    assert block["n_scored"] == 1 and block["parse_failures"]["generate"] == 1


def test_an_extra_topic_is_reported_and_ignored_and_a_wrong_topic_fails(
    judge: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [*rows_of(IDEAS), {"instance_id": "t07", **IDEAS["t00"]}]
    rows[1]["topic"] = "Protein folding"  # written for another topic list
    ideas = write_ideas(tmp_path / "ideas.jsonl", rows)
    _, results, _ = run(["--ideas", str(ideas)], judge, tmp_path / "run", capsys)
    assert results["idea_sources"][0]["answers"]["extra_instances"] == ["t07"]
    assert set(results["ideas"]) == {"ideas::t00::0"}
    (unit,) = [u for u in results["unparsed_units"] if u["step"] == "ligbench/generate"]
    assert "field 'topic'" in unit["error"] and "Sparse attention" in unit["error"], unit["error"]


def test_ideas_add_a_system_and_names_are_unique(tmp_path: Path) -> None:
    corpus = str(tmp_path / "corpus.jsonl")
    alone = LigBenchConfig(corpus=corpus, ideas="out/agent.jsonl")
    assert alone.generators == [] and alone.generator_specs() == ["ideas:out/agent.jsonl"]
    assert alone.system_names() == {"ideas:out/agent.jsonl": "agent"}
    both = LigBenchConfig(corpus=corpus, generators=["openai/gpt-4o"], ideas="a.jsonl", system="mine",
                          ideas_format="aiscientist")
    assert both.system_names() == {"openai/gpt-4o": "openai/gpt-4o",
                                   "ideas:a.jsonl#format=aiscientist": "mine"}
    one_cmd = LigBenchConfig(corpus=corpus, generators=["openai/m", "cmd:python x/agent.py"],
                             system="agent-v2")
    assert one_cmd.system_names()["cmd:python x/agent.py"] == "agent-v2"
    assert LigBenchConfig(corpus=corpus).generator_specs() == ["local/qwen2.5-coder-1.5b"]  # unchanged
    for bad, needle in (({"generators": ["ideas:a/x.jsonl", "ideas:b/x.jsonl"]}, "two systems named 'x'"),
                        ({"generators": ["cmd:a.sh", "cmd:b.sh"], "system": "s"}, "--system s"),
                        ({"generators": ["m", "m"]}, "given twice")):
        with pytest.raises(UserError, match=needle):
            LigBenchConfig(corpus=corpus, **bad)


def test_contract_parse_and_from_row() -> None:
    assert get_contract("ligbench") is CONTRACT
    task = generation_task(1, 0, topic="Sparse attention", seed=0)
    assert (task.instance_id, task.key, task.sample_index, task.inputs) == ("t01", "0", 0,
                                                                            {"topic": "Sparse attention"})
    answer = {"instance_id": "t01", "title": "Clustered attention", **IDEAS["t01"]}
    parsed = CONTRACT.parse(json.dumps(answer), task)
    assert parsed.startswith("# Clustered attention\n\n## Problem\n")
    assert parsed == parse_generated_idea(parsed)
    for bad, needle in (({**answer, "method": "too short"}, "field 'method' is too short"),
                        ({k: v for k, v in answer.items() if k != "experiment_design"}, "experiment_design"),
                        ({**answer, "topic": "Graphs"}, "field 'topic'"),
                        ({**answer, "idea": "x"}, "field 'idea'")):
        with pytest.raises(ParseError, match=needle):
            CONTRACT.parse(json.dumps(bad), task)
    markdown = ("# Title\n**Problem**\np one two\n## Method:\nm one two three\n"
                "### Experimental design\ne one two")
    assert from_row({"instance_id": "t01", "text": markdown}, task) == {
        "problem": "p one two", "method": "m one two three", "experiment_design": "e one two"}
    row = {"instance_id": "t01", "motivation": "mot", "experiment_plan": "plan", "title": "T"}
    assert from_row(row, task) == {"problem": "mot", "experiment_design": "plan", "title": "T"}
    text = "## Problem\nA problem here.\n## Method\nA method here.\n## Experiment Design\nExperiments here."
    assert from_row({"instance_id": "t01", "text": text, "method": "own method"}, task) == {
        "problem": "A problem here.", "method": "own method", "experiment_design": "Experiments here."}


def test_tasks_export_ids_are_the_topics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One task per topic and sample (``t<NN>``, sample_index k), whatever the generators; the
    corpus is not embedded (generation only)."""
    out = tmp_path / "tasks.jsonl"
    with pytest.raises(SystemExit) as exc:
        main(["tasks", "export", "ligbench", *data_args(tmp_path), "--ideas-per-topic", "2", "--generator",
              "openai/a", "--generator", "openai/b", "--out", str(out)])
        raise SystemExit(0)
    assert exc.value.code == 0, capsys.readouterr().err
    tasks = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(t["instance_id"], t["sample_index"], t["inputs"]["topic"]) for t in tasks] == [
        (f"t{i:02d}", k, topic) for i, topic in enumerate(TOPICS) for k in (0, 1)]
    assert tasks[0]["prompt"][-1]["content"].startswith("Propose one new research idea")
    required = set(tasks[0]["answer_schema"]["required"])
    assert required == {"instance_id", "problem", "method", "experiment_design"}
    assert not list((tmp_path / "corpus").glob("*.npy"))  # nothing embedded


def test_topics_left_out_by_limit_are_not_extra(
    judge: OpenAICompatServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ideas = write_ideas(tmp_path / "ideas.jsonl", rows_of(IDEAS))
    code, results, err = run(["--ideas", str(ideas), "--limit", "1"], judge, tmp_path / "run", capsys)
    assert code == 0, err
    answers = results["idea_sources"][0]["answers"]
    assert answers["asked"] == 1 and answers["missing"] == [] and answers["extra_instances"] == []
