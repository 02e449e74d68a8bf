"""``ideaharness score-idea`` and ``ideaharness run ligbench``: errors, a scripted run, and one
end-to-end run with the real embedded 0.5B model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ideaharness import arun
from ideaharness.benchmarks.ligbench import LigBenchConfig, results_tables
from ideaharness.cli import main
from ideaharness.cli.ligbench import read_idea
from ideaharness.data.scholarideas import bundled_root
from ideaharness.errors import UserError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.llm.types import Message
from ideaharness.runner.options import ExecutionOptions
from tests.blinding_support import is_rewrite, scripted_rewrite
from tests.cli_support import run_cli

SCHOLARIDEAS = bundled_root()
PLAN = SCHOLARIDEAS / "ScholarIdeas" / "ai_1"


def _one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 1 and "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_user_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["score-idea", "an idea about graphs", "--corpus", str(tmp_path / "none.jsonl")],
                            capsys)
    _one_line_error(code, err, "none.jsonl", "no such file")
    code, _, err = run_cli(["score-idea", "an idea about graphs", "--corpus", str(tmp_path), "--order",
                             "sideways"], capsys)
    _one_line_error(code, err, "--order", "both")
    code, _, err = run_cli(["score-idea", "missing_plan.txt", "--corpus", str(tmp_path)], capsys)
    _one_line_error(code, err, "missing_plan.txt")
    code, _, err = run_cli(["run", "ligbench", "--corpus", str(tmp_path), "--topics",
                             str(tmp_path / "t.txt")], capsys)
    _one_line_error(code, err, "--topics")


def test_read_idea_forms(tmp_path: Path) -> None:
    idea_id, text, cutoff = read_idea(str(PLAN))
    assert idea_id == "ai_1" and "## Method" in text and cutoff == "2024-09-24"
    assert read_idea(str(PLAN / "ai_1.txt"))[2] == "2024-09-24"
    (tmp_path / "idea.md").write_text("Use logic rules to explain GNNs.")
    assert read_idea(str(tmp_path / "idea.md")) == ("idea", "Use logic rules to explain GNNs.", None)
    assert read_idea("A plain idea in words.")[1] == "A plain idea in words."
    for degenerate in ("   ", "\u200b", "...", "\u200b \u2060 …"):
        with pytest.raises(UserError):
            read_idea(degenerate)
    (tmp_path / "dots.md").write_text("...")
    with pytest.raises(UserError, match="dots.md"):
        read_idea(str(tmp_path / "dots.md"))


def _scripted_judge(messages: list[Message]) -> str:
    text = messages[-1]["content"]
    if is_rewrite(text):
        return scripted_rewrite(text)
    if "Restate the research idea" in text:
        return json.dumps({"main_target": "Explain graph network predictions",
                           "core_breakthrough": "logic rules over concepts",
                           "innovative_methods": "1. concept discovery\n2. rule extraction",
                           "experimental_design": "1. benchmarks against GNNExplainer"})
    if "score this new idea" in text:
        return '{"rating": 3, "contribution": 3, "soundness": 3, "novelty": 3}'
    return '{"rating": 0.5, "soundness": 0.5, "contribution": 0.5}'


async def test_run_ligbench_scripted(tmp_path: Path, shared_corpus_path: Path) -> None:
    plan = ("## Problem\nGraph network predictions are hard to explain.\n## Method\nA new method that "
            "extracts logic rules over concepts.\n## Experiment Design\nBenchmarks against GNNExplainer on "
            "three datasets.")
    gen = ScriptedModel(lambda m: plan, model="scripted/gen")
    judge = ScriptedModel(_scripted_judge, model="scripted/judge")
    config = LigBenchConfig(generators=["scripted/gen"], judge="scripted/judge",
                            corpus=str(shared_corpus_path), topics=["graphs"], ideas_per_topic=2,
                            scholarideas=1, scholarideas_root=str(SCHOLARIDEAS))
    options = ExecutionOptions(out=tmp_path / "run", progress=False)
    results = await arun("ligbench", config=config, options=options, generators={"scripted/gen": gen},
                         judge=judge)
    systems = results["systems"]
    assert set(systems) == {"scripted/gen", "scholarideas (human-written plans)"}
    block = systems["scripted/gen"]
    assert block["n_ideas"] == 2 and block["n_scored"] == 2 and block["not_done"] == 0
    # ties against references scored near 3 move the Elo score only a little
    assert block["scores"]["rating"]["mean"] == pytest.approx(3.0, abs=0.5)
    assert block["order_disagreement_rate"]["rating"] == 0.0
    # the scripted generator gives the same plan twice for the topic: one exact duplicate
    assert block["duplicates"]["ideas"] == 2 and block["duplicates"]["exact_duplicates"] == 1
    assert systems["scholarideas (human-written plans)"]["duplicates"]["ideas"] == 0  # not generated
    tables = results_tables(results)
    assert any(t.title == "Duplicate ideas among the samples per topic" for t in tables)
    assert tables[0].rows[0][0] == "scripted/gen"
    blinding = results["blinding"]
    assert blinding["reference_text"] == "rewritten" and blinding["papers"] > 0
    assert blinding["surface"]["n_references"] == blinding["papers"]
    assert blinding["surface"]["n_generated"] == 3  # the formalisations of the ideas
    assert any(t.title.startswith("Blinding check") for t in tables)
    assert (tmp_path / "run" / "results.json").is_file() and (tmp_path / "run" / "report.html").is_file()
    calls = len(judge.calls) + len(gen.calls)
    again = await arun("ligbench", config=config, options=options, generators={"scripted/gen": gen},
                       judge=judge)
    assert len(judge.calls) + len(gen.calls) == calls  # resumed from the records
    assert again["systems"] == systems


@pytest.mark.model
def test_score_idea_end_to_end_with_real_model(tmp_path: Path, shared_corpus_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    main(["score-idea", str(PLAN), "--corpus", str(shared_corpus_path), "--judge", "local/qwen2.5-coder-0.5b",
          "--max-comparisons", "1", "--min-comparisons", "1", "--out", str(out), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["idea_id"] == "ai_1" and result["status"] == "scored", result
    assert set(result["formalization"]) == {"main_target", "core_breakthrough", "innovative_methods",
                                            "experimental_design"}
    assert len(result["calibration"]) == 3 and len(result["comparisons"]) == 1
    assert set(result["comparisons"][0]["outcomes"]) == {"idea-first", "ref-first"}
    for key in ("rating", "contribution", "soundness", "novelty"):
        assert 0.0 <= result["scores"][key] <= 5.0
    compare_lines = (out / "records" / "ligbench_compare.jsonl").read_text().splitlines()
    assert len(compare_lines) == 2
    assert all(json.loads(x)["data"]["judgment"]["raw_text"] for x in compare_lines)


async def test_score_idea_api_without_run_dir(shared_corpus_path: Path) -> None:
    from ideaharness.benchmarks.ligbench import ScoringSettings, score_idea_async
    from ideaharness.metrics.elo import EloSettings

    judge = ScriptedModel(_scripted_judge, model="scripted/judge")
    settings = ScoringSettings(order="random", seed=3, elo=EloSettings(min_comparisons=2, max_comparisons=2))
    result = await score_idea_async("An idea in plain words about agents.", shared_corpus_path, judge,
                                    settings=settings)
    assert result.status == "scored" and len(result.comparisons) == 2
    assert all(len(c.outcomes) == 1 for c in result.comparisons)  # one seeded order each
    assert result.scores is not None
    assert set(result.scores) == {"rating", "contribution", "soundness", "novelty"}
