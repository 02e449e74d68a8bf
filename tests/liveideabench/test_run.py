"""LiveIdeaBench end to end: the Python API with scripted models, the CLI against a real loopback
OpenAI-compatible server (generator and a judge panel by model name), and the real 0.5B model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import ideaharness
from ideaharness.cli import main
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.testing.openai_server import OpenAICompatServer

KEYWORDS = ["meteorology", "periodic table"]


def idea_reply(user: str) -> str:
    keyword = re.search(r"<keyword>\n(.*?)\n</keyword>", user, re.S).group(1)
    return f"Idea on {keyword}: measure how {keyword} data improves forecasts using sparse sensor networks."


def critic(scores: str) -> Any:
    def respond(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if "ONLY ANSWER A/B/C/D" in user:
            # grade by position: shows whether both orders were asked
            first = re.search(r"<first_idea>\n(.*?)\n</first_idea>", user, re.S).group(1)
            return "A" if first else "D"
        return f"Brief analysis.\n```json\n{scores}\n```"
    return respond


def generator(messages: list[dict[str, str]]) -> str:
    return idea_reply(messages[-1]["content"])


def test_python_api_scripted_panel(tmp_path: Path) -> None:
    good = ScriptedModel(critic('{"originality": 8, "feasibility": 6, "clarity": 7}'),
                         model="scripted/judge-a")
    off_scale = ScriptedModel(critic('{"originality": 11, "feasibility": 6, "clarity": 7}'),
                              model="scripted/judge-b")
    gen = ScriptedModel(generator, model="scripted/gen")
    results = ideaharness.run(
        "liveideabench", generator="scripted/gen", judge=["scripted/judge-a", "scripted/judge-b"],
        keyword=KEYWORDS, judges_per_idea=2, fluency_judges=1, out=tmp_path / "run", progress=False,
        models={"generator": gen, "judge:scripted/judge-a": good, "judge:scripted/judge-b": off_scale},
        bootstrap_resamples=50)
    # fewer than 5 keywords: flexibility and the average have no value, so the run is partial
    assert results["status"] == "partial"
    assert {m["metric"] for m in results["not_computed"]["metrics"]} == {
        "liveideabench.flexibility", "liveideabench.average"}
    # and the first line says so, not that nothing was scored (n = 2 keywords were)
    line = results["not_computed"]["line"]
    assert "liveideabench.flexibility: needs at least 5 keywords with every dimension scored, has 2" in line
    assert "missing: flexibility" in line and "0 scored units" not in line
    c = results["counts"]
    assert c["ideas"] == 4 and c["critiques"] == 8
    assert c["critique_parse_failures"] == 4  # every reply of judge b: counted, never scored
    assert results["per_judge"]["scripted/judge-b"]["originality"] is None
    s = results["scores"]
    assert s["originality"]["value"] == 8 and s["feasibility"]["value"] == 6 and s["clarity"]["value"] == 7
    # each pair judged in both orders: the scripted judge answers A one way only if it sees text first
    assert c["fluency_judgments"] == 2 * len(KEYWORDS)
    assert s["fluency"]["value"] == 10  # A in both orders -> 10 (v2)
    assert s["flexibility"]["value"] is None  # fewer than 5 keywords: no value, with a note
    assert any("flexibility needs" in n for n in results["notes"])
    assert s["average"]["value"] is None
    names = {m["metric"] for m in results["metrics"]}
    assert {"liveideabench.originality", "liveideabench.fluency", "liveideabench.average"} <= names
    records = (tmp_path / "run" / "records" / "fluency.jsonl").read_text().splitlines()
    positions = [json.loads(r)["data"]["judgment"]["positions"] for r in records]
    assert {tuple(p) for p in positions} == {(f"{k}/0", f"{k}/1") for k in KEYWORDS} | {
        (f"{k}/1", f"{k}/0") for k in KEYWORDS}


def test_generator_never_judges_itself(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "liveideabench", "--generator", "openai/m:thinking", "--judge", "openai/m",
              "--keyword", "x", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert exc.value.code == 1 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "generator" in err and "--allow-self-judging" in err


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "liveideabench", "--help"])
        raise SystemExit(0)
    assert not exc.value.code
    text = capsys.readouterr().out
    for flag in ("--judge", "--keyword", "--ideas-per-keyword", "--protocol", "--parity", "--limit"):
        assert flag in text


def server_reply(body: dict[str, Any]) -> str:
    user = body["messages"][-1]["content"]
    if body["model"] == "gen":
        return idea_reply(user)
    if "ONLY ANSWER A/B/C/D" in user:
        return {"j1": "Answer: B", "j2": "C", "j3": "The ideas look alike."}[body["model"]]
    scores = {"j1": (7, 5, 6), "j2": (9, 7, 8), "j3": (5, 3, 4)}[body["model"]]
    return "Analysis.\n```json\n" + json.dumps(dict(zip(("originality", "feasibility", "clarity"), scores,
                                                        strict=True))) + "\n```"


def test_cli_run_against_a_loopback_server_and_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAICompatServer(server_reply) as server:
        args = ["run", "liveideabench", "--generator", "openai/gen", "--judge", "openai/j1", "--judge",
                "openai/j2", "--judge", "openai/j3", "--category", "Chemistry", "--limit", "6",
                "--base-url", server.base_url, "--no-progress", "--bootstrap-resamples", "100",
                "--out", str(tmp_path / "run")]
        with pytest.raises(SystemExit) as exc:
            main(args)
            raise SystemExit(0)
        assert exc.value.code == 0, capsys.readouterr().err
        calls = len(server.requests)
        results = json.loads((tmp_path / "run" / "results.json").read_text())
        c = results["counts"]
        assert c["ideas"] == 12 and c["critiques"] == 36 and c["critique_parse_failures"] == 0
        # 2 of 3 judges per pair, both orders: 24 judgments; j3's replies hold no grade
        assert c["fluency_judgments"] == 24 and c["fluency_parse_failures"] > 0
        assert set(results["fluency_grades"]) <= {"B", "C"}
        # all three judges score every idea: originality = mean of 7, 9, 5 per idea = 7
        assert results["scores"]["originality"]["value"] == pytest.approx(7.0)
        kw = results["per_keyword"]
        assert all(v["category"] == "Chemistry" for v in kw.values()) and len(kw) == 6
        flex = results["scores"]["flexibility"]["value"]
        means = sorted(v["mean"] for v in kw.values())
        assert flex is not None and means[0] <= flex <= means[-1]
        dims = ("fluency", "feasibility", "originality", "clarity", "flexibility")
        assert results["scores"]["average"]["value"] == pytest.approx(
            sum(results["scores"][d]["value"] for d in dims) / 5)
        assert all(r.body["model"] in ("gen", "j1", "j2", "j3") for r in server.requests)
        unparsed = results["unparsed_units"]
        assert unparsed and {u["step"] for u in unparsed} == {"fluency"}
        with pytest.raises(SystemExit) as exc:
            main(args)
            raise SystemExit(0)
        # resumed: nothing recorded is asked again, except the unparsed judgments, re-asked with the
        # next samples (max_attempts = 3 each; a keyword's two ideas are one text here, so its AB and
        # BA prompts are one request)
        again = server.requests[calls:]
        assert exc.value.code == 0 and 0 < len(again) <= 3 * len(unparsed) and len(again) % 3 == 0
        assert all(r.body["model"] == "j3" and "ONLY ANSWER A/B/C/D" in r.body["messages"][-1]["content"]
                   for r in again)
    report = (tmp_path / "run" / "report.html").read_text()
    assert "LiveIdeaBench leaderboard" in report and "Examples" in report


@pytest.mark.model
def test_real_model_two_keywords(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    model = "local/qwen2.5-coder-0.5b"
    results = ideaharness.run("liveideabench", generator=model, judge=[model], allow_self_judging=True,
                              keyword=KEYWORDS, out=tmp_path / "run", progress=False,
                              bootstrap_resamples=50)
    c = results["counts"]
    assert c["ideas_attempted"] == 4 and c["ideas"] >= 2
    assert c["critiques"] == c["ideas"]  # one eligible judge per idea
    assert c["critiques"] - c["critique_parse_failures"] >= 1
    for name in ("originality", "feasibility", "clarity"):
        value = results["scores"][name]["value"]
        assert value is None or 1 <= value <= 10
    # two keywords: flexibility (and so the average) needs five, so the run is partial for that alone
    assert results["failed_units"] == []
    assert {m["metric"] for m in results["not_computed"]["metrics"]} <= {
        "liveideabench.flexibility", "liveideabench.average"}


def test_per_keyword_scores_reaggregate_to_results(tmp_path: Path) -> None:
    """``load_run`` reads LiveIdeaBench's ``scores.jsonl`` (its ``scores()``, no edit to analysis/):
    the keyword rows of each dimension average to the headline of results.json."""
    judges = {f"judge:scripted/j{i}": ScriptedModel(critic(f'{{"originality": {6 + i}, "feasibility": 5, '
                                                             f'"clarity": {4 + i}}}'), model=f"scripted/j{i}")
              for i in range(2)}
    ideaharness.run(
        "liveideabench", generator="scripted/gen", judge=["scripted/j0", "scripted/j1"],
        keyword=KEYWORDS, judges_per_idea=1, fluency_judges=1, out=tmp_path / "run", progress=False,
        models={"generator": ScriptedModel(generator, model="scripted/gen"), **judges},
        bootstrap_resamples=20)
    data = ideaharness.load_run(tmp_path / "run")
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    dims = ("originality", "feasibility", "clarity", "fluency")
    assert set(data.scores["metric"]) == {f"liveideabench.{d}" for d in (*dims, "flexibility")}
    assert set(data.scores["instance_id"]) == set(KEYWORDS)
    headline = {m["metric"]: m for m in results["metrics"]}
    for d in dims:
        rows = data.scores[data.scores["metric"] == f"liveideabench.{d}"]
        assert rows["value"].mean() == pytest.approx(results["scores"][d]["value"])
        assert rows["value"].mean() == pytest.approx(headline[f"liveideabench.{d}"]["value"])
