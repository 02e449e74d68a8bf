"""MLR-Bench end to end: the CLI against real loopback OpenAI-compatible servers (a generator and
a two-judge panel), resume after a killed run, given texts (--ideas), and the real 0.5B model."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest

import ideaharness
from ideaharness.benchmarks.mlrbench import select_tasks
from ideaharness.benchmarks.mlrbench.results import MLRBenchResults
from ideaharness.cli import main
from ideaharness.results import parse_results
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.mlrbench.replies import respond, review, task_title

TASKS = ["iclr2023_bands", "iclr2023_dg", "iclr2023_ml4materials"]


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        main(args)
        raise SystemExit(0)
    code = int(exc.value.code or 0)
    assert code in (0, 3), capsys.readouterr().err
    return code


def panel_reply(body: dict[str, Any]) -> str:
    """gen writes; j1 reviews as :func:`respond`; j2 scores ideas 9 everywhere and never gives a
    parsable proposal review."""
    system = body["messages"][0]["content"]
    if body["model"] == "j2":
        return review("idea", 9) if system.startswith("You review research ideas") else "Looks fine to me."
    return respond(body["messages"])


def _args(tmp_path: Path, server: OpenAICompatServer, *extra: str) -> list[str]:
    return ["run", "mlrbench", *[a for t in TASKS for a in ("--task", t)], "--generator", "openai/gen",
            "--judge", "openai/j1", "--also-judge", "openai/j2", "--base-url", server.base_url,
            "--no-progress", "--bootstrap-resamples", "200", "--out", str(tmp_path / "run"), *extra]


def test_cli_run_against_a_loopback_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAICompatServer(panel_reply) as server:
        assert run_cli(_args(tmp_path, server), capsys) == 0
        calls = len(server.requests)
        results = json.loads((tmp_path / "run" / "results.json").read_text())
        typed = parse_results(results, MLRBenchResults)  # the benchmark's block, typed
        assert typed.block.per_task["iclr2023_bands"].proposal.judges == 1  # j2's did not parse
        c = results["counts"]
        assert c["texts_idea"] == 3 and c["texts_proposal"] == 3
        assert c["reviews_idea"] == 6 and c["review_parse_failures_idea"] == 0
        assert c["reviews_proposal"] == 6 and c["review_parse_failures_proposal"] == 3  # j2's: never scored
        metrics = {m["metric"]: m for m in results["metrics"]}
        assert len(metrics) == 13 and all(m["n"] == 3 for m in metrics.values())
        # idea: each task's score is the mean of j1's and j2's (9); proposal: j1's alone (6)
        texts = {t.id: t.text for t in select_tasks(TASKS)}
        j1_novelty = [5 + len(task_title(f"<task>\n{texts[t]}")) % 4 for t in TASKS]
        expected = fmean((v + 9) / 2 for v in j1_novelty)
        assert metrics["mlrbench.idea_novelty"]["value"] == pytest.approx(expected)
        assert metrics["mlrbench.proposal_soundness"]["value"] == 6
        assert metrics["mlrbench.proposal_clarity"]["value"] == 7
        # 3 tasks: too few for an interval; the rubric table says why in the interval's cell
        assert metrics["mlrbench.idea_novelty"]["ci"] is None
        assert metrics["mlrbench.idea_novelty"]["ci_why"] == "n too small for an interval (n < 5)"
        assert "n too small for an interval" in capsys.readouterr().out
        # the per-task rows re-aggregate to the headline
        rows = [json.loads(line) for line in (tmp_path / "run" / "scores.jsonl").read_text().splitlines()]
        assert len(rows) == 13 * 3
        for name, metric in metrics.items():
            assert fmean(r["value"] for r in rows if r["metric"] == name) == pytest.approx(metric["value"])
        # reliability: both review steps, per dimension, the panel sharing a unit per text
        block = results["reliability"]["metrics"]
        assert {"review/idea[novelty]", "review/proposal[soundness]"} <= set(block)
        assert block["review/proposal[soundness]"]["judges"]["openai/j2"]["parse_failure_rate"] == 1.0
        assert block["review/idea[novelty]"]["panel"] is not None
        assert {u["step"] for u in results["unparsed_units"]} == {"review/proposal"}
        # every request went to a known model; the generator wrote 3 ideas and 3 proposals
        assert sum(r.body["model"] == "gen" for r in server.requests) == 6
        # a re-run asks nothing recorded again, only j2's unparsed proposal reviews (3 samples each)
        assert run_cli(_args(tmp_path, server), capsys) == 0
        again = server.requests[calls:]
        assert 0 < len(again) <= 3 * 3 and all(r.body["model"] == "j2" for r in again)
    report = (tmp_path / "run" / "report.html").read_text()
    assert "MLR-Bench rubric scores of openai/gen" in report and "Examples" in report


def test_help_lists_the_benchmark_flags(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "mlrbench", "--help"])
        raise SystemExit(0)
    assert not exc.value.code
    text = capsys.readouterr().out
    for flag in ("--task", "--stage", "--ideas", "--also-judge", "--proposal-max-tokens", "--limit"):
        assert flag in text


def test_consistency_sample_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "mlrbench", "--task", TASKS[0], "--consistency-sample", "0.5",
              "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert exc.value.code and "Traceback" not in err and "consistency" in err


def test_resume_after_the_run_is_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A run killed (SIGKILL) while its first proposal is asked keeps its ideas: the same command
    asks only what is missing and completes."""
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    proposal_asked, release = threading.Event(), threading.Event()

    def blocking(body: dict[str, Any]) -> str:
        if "full research proposal" in body["messages"][0]["content"] and not release.is_set():
            proposal_asked.set()
            release.wait(60)
        return respond(body["messages"])

    with OpenAICompatServer(blocking) as server:
        args = ["run", "mlrbench", "--task", TASKS[0], "--task", TASKS[1], "--generator", "openai/gen",
                "--judge", "openai/j1", "--base-url", server.base_url, "--no-progress", "--max-concurrency",
                "1", "--bootstrap-resamples", "50", "--out", str(tmp_path / "run")]
        child = subprocess.Popen([sys.executable, "-c", "import sys; from ideaharness.cli import main; "
                                  "main(sys.argv[1:])", *args[0:]], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
        try:
            assert proposal_asked.wait(120), child.stderr.read() if child.poll() is not None else "none"
            child.kill()
            child.wait(30)
        finally:
            release.set()
        time.sleep(0.1)
        ideas_before = [r for r in server.requests if "full research proposal" not in
                        r.body["messages"][0]["content"] and not r.body["messages"][0]["content"].startswith(
                            "You review")]
        assert len(ideas_before) == 2 and not (tmp_path / "run" / "results.json").exists()
        first = len(server.requests)
        assert run_cli(args, capsys) == 0
        resumed = [r.body["messages"][0]["content"] for r in server.requests[first:]]
    assert not any(s.startswith("You are a machine learning researcher who proposes") for s in resumed)
    assert sum("full research proposal" in s for s in resumed) == 2
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["status"] == "complete" and results["counts"]["texts_proposal"] == 2
    assert all(m["n"] == 2 for m in results["metrics"])


def test_given_ideas_are_scored_without_a_generator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ideas = tmp_path / "ministral.jsonl"
    idea = ("Title: Probing triggers\nMotivation: Defences against poisoning differ by domain, so a shared "
            "weakness is never tested.\nMain Idea: Train one probe on activations of poisoned models from "
            "three domains and test its transfer.")
    ideas.write_text("".join(json.dumps({"task_id": t, "idea": idea, "model": "openai/j1"}) + "\n"
                             for t in TASKS[:2]))
    with OpenAICompatServer(lambda body: respond(body["messages"])) as server:
        assert run_cli(["run", "mlrbench", "--ideas", str(ideas), "--task", TASKS[0], "--task", TASKS[1],
                        "--stage", "idea", "--judge", "openai/j1",
                        "--base-url", server.base_url, "--no-progress", "--bootstrap-resamples", "50",
                        "--out", str(tmp_path / "run")], capsys) == 0
        assert all(r.body["model"] == "j1" for r in server.requests) and len(server.requests) == 2
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert results["system"] == "ministral" and results["given"] and results["stages"] == ["idea"]
    assert {m["metric"] for m in results["metrics"]} == {f"mlrbench.idea_{d}" for d in (
        "consistency", "clarity", "novelty", "feasibility", "significance", "overall")}
    assert set(results["per_task"]) == set(TASKS[:2])
    judge = results["reliability"]["metrics"]["review/idea[overall]"]["judges"]["openai/j1"]
    assert judge["self_judged"] == 2  # the file's model is the judge: self-preference is checked
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert any("ministral.jsonl" in label for label in json.dumps(config["input_sha256"]).split('"'))


@pytest.mark.model
def test_real_model_one_task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedded 0.5B model writes one task's idea and reviews it (small budgets: two shared
    CPU cores; the proposal stage runs against the loopback server above)."""
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    model = "local/qwen2.5-coder-0.5b"
    results = ideaharness.run("mlrbench", generator=model, judge=model, task=[TASKS[0]], stage="idea",
                              out=tmp_path / "run", progress=False, bootstrap_resamples=20, max_attempts=2,
                              idea_max_tokens=250, judge_max_tokens=500)
    assert results["failed_units"] == []
    c = results["counts"]
    assert c["texts_idea"] + c["generation_parse_failures_idea"] == 1
    assert c["reviews_idea"] == c["texts_idea"]
    for m in results["metrics"]:
        assert m["value"] is None or 1 <= m["value"] <= 10
    rows = [json.loads(r) for r in (tmp_path / "run" / "scores.jsonl").read_text().splitlines()]
    assert len(rows) == 6  # one task, the idea rubric: a value or unscored with its reason
    assert all(r["value"] is not None or r["reason"] for r in rows)


def test_a_task_without_an_idea_is_unscored_with_its_reason(tmp_path: Path) -> None:
    """The generator's reply for one task never parses: that task's 13 rows are unscored with the
    reason (never a 0), its proposal is not asked, and the headline n counts only the other task."""
    from ideaharness.llm.scripted import ScriptedModel

    def gen(messages: list[dict[str, str]]) -> str:
        if "successful domain generalization" in messages[-1]["content"]:  # iclr2023_dg's call
            return "I cannot help."
        return respond(messages)

    models = {"generator": ScriptedModel(gen, model="scripted/gen"),
              "judge:scripted/j": ScriptedModel(respond, model="scripted/j")}
    results = ideaharness.run("mlrbench", generator="scripted/gen", judge="scripted/j", task=TASKS[:2],
                              out=tmp_path / "run", progress=False, bootstrap_resamples=20, models=models)
    counts = results["counts"]
    assert counts["generation_parse_failures_idea"] == 1 and counts["texts_proposal"] == 1
    assert all(m["n"] == 1 for m in results["metrics"])
    rows = [json.loads(line) for line in (tmp_path / "run" / "scores.jsonl").read_text().splitlines()]
    dg = [r for r in rows if r["instance_id"] == "iclr2023_dg"]
    assert len(dg) == 13 and all(r["value"] is None for r in dg)
    assert {r["reason"] for r in dg} == {"the idea reply never parsed", "no idea to develop"}
