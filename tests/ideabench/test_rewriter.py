"""Who rewrites the target idea, and what a run says when the rewrite check drops instances
(issue 18, items 15 and 16).

16: the rewriter is a model role of its own (``rewriter``; default neither judge nor generator where
one is available), recorded with every rewrite, reported with the target's rank by rewriter, and a
judge that ranks its own rewrite is counted as self-judged. 15: a rewrite check that drops more than
the stated share of instances is a warning naming the n left, and an Insight Score from m < 2
ranked instances says that it has no interval.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ideaharness
from ideaharness.benchmarks._blinding import REWRITE_DROP_WARNING, default_rewriter
from ideaharness.cli import main
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.blinding_support import is_rewrite
from tests.ideabench.conftest import ideabench_responder


def _no_rewrites(messages: list[dict[str, str]]) -> str:
    if is_rewrite(messages[-1]["content"]):
        raise AssertionError("this model must not be asked to rewrite the target")
    return ideabench_responder()(messages)


def _rewrites(out: Path, scenario: str = "low") -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(x)["data"] for x in (out / f"records/rewrite_{scenario}.jsonl").open(encoding="utf-8")]


def test_the_default_rewriter_is_neither_judge_nor_generator_where_one_is_available() -> None:
    big, small = "local/qwen2.5-coder-1.5b", "local/qwen2.5-coder-0.5b"
    assert default_rewriter(big, big) == small  # the default local run: the other bundled model
    assert default_rewriter(small, small) == big
    assert default_rewriter("openai/judge", big) == small
    assert default_rewriter("openai/judge", "openai/gen") == "openai/gen"  # never the judge's own text
    assert default_rewriter("openai/m", "openai/m") == "openai/m"  # no third model known: the judge, flagged
    assert default_rewriter("openai/judge", "openai/gen", "openai/other") == "openai/other"


def test_with_both_bundled_models_in_use_the_generator_rewrites() -> None:
    # both bundled models in use: no third local one, the generator (not the judge) rewrites
    big, small = "local/qwen2.5-coder-1.5b", "local/qwen2.5-coder-0.5b"
    assert default_rewriter(big, small) == small


def test_a_separate_rewriter_model_rewrites_and_is_recorded(tmp_path: Path) -> None:
    generator = ScriptedModel(_no_rewrites, model="scripted/gen")
    judge = ScriptedModel(_no_rewrites, model="scripted/judge")
    rewriter = ScriptedModel(ideabench_responder(), model="scripted/rewriter")
    res = ideaharness.run("ideabench", generator=generator, judge=judge, rewriter=rewriter, limit=3,
                          out=tmp_path / "r", progress=False)
    assert len(rewriter.calls) == 3 and all(is_rewrite(m[-1]["content"]) for m, _ in rewriter.calls)
    assert res["rewriter"] == "scripted/rewriter"
    assert {r["rewriter"] for r in _rewrites(tmp_path / "r")} == {"scripted/rewriter"}
    assert {r["judgment"]["judge_model"] for r in _rewrites(tmp_path / "r")} == {"scripted/rewriter"}
    insight = res["scenarios"]["low"]["insight"]["novelty"]
    by = insight["by_rewriter"]
    assert list(by) == ["scripted/rewriter"] and by["scripted/rewriter"]["m"] == insight["m"] == 3
    assert by["scripted/rewriter"]["insight_score"] == insight["insight_score"]
    assert res["scenarios"]["low"]["blinding"]["rewrite"]["rewriters"] == {"scripted/rewriter": 3}
    ranks = [json.loads(x)["data"] for x in (tmp_path / "r/records/rank_low_novelty.jsonl").open()]
    assert {r["reference_by"] for r in ranks} == {"scripted/rewriter"}
    judged = res["reliability"]["metrics"]["rank/low/novelty"]["judges"]["scripted/judge"]
    assert judged["self_judged"] == 0
    assert "target written by scripted/rewriter" in (tmp_path / "r/report.html").read_text(encoding="utf-8")


def test_without_rewriter_the_generator_rewrites_not_the_judge(tmp_path: Path) -> None:
    generator = ScriptedModel(ideabench_responder(), model="scripted/gen")
    judge = ScriptedModel(_no_rewrites, model="scripted/judge")
    res = ideaharness.run("ideabench", generator=generator, judge=judge, limit=2, out=tmp_path / "r",
                          progress=False)
    assert res["rewriter"] == "scripted/gen"
    assert {r["rewriter"] for r in _rewrites(tmp_path / "r")} == {"scripted/gen"}


def test_a_judge_that_rewrote_the_target_counts_as_self_judged(tmp_path: Path) -> None:
    generator = ScriptedModel(_no_rewrites, model="scripted/gen")
    judge = ScriptedModel(ideabench_responder(), model="scripted/judge")
    res = ideaharness.run("ideabench", generator=generator, judge=judge, rewriter="scripted/judge", limit=3,
                          out=tmp_path / "r", progress=False)
    assert res["rewriter"] == "scripted/judge"
    judged = res["reliability"]["metrics"]["rank/low/novelty"]["judges"]["scripted/judge"]
    assert judged["self_judged"] == 3 and judged["self_preference"] is True
    html = (tmp_path / "r/report.html").read_text(encoding="utf-8")
    assert "rewritten by the judge (scripted/judge) itself" in html


def test_a_rewrite_check_that_drops_most_instances_warns_and_m_1_says_so(tmp_path: Path) -> None:
    base = ideabench_responder()
    seen: list[str] = []

    def respond(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if is_rewrite(user):
            reference = user.split("<reference>\n", 1)[1]
            if reference not in seen:
                seen.append(reference)
            if seen.index(reference) > 0:  # every target but the first keeps the published opening
                return json.dumps({"idea": "The hypothesis is that catalysts help " * 8})
        return base(messages)

    model = ScriptedModel(respond)
    res = ideaharness.run("ideabench", generator=model, judge=model, limit=4, out=tmp_path / "r",
                          max_attempts=2, progress=False)
    low = res["scenarios"]["low"]
    rewrite = low["blinding"]["rewrite"]
    assert (rewrite["rewritten"], rewrite["failed"]) == (1, 3)
    assert rewrite["dropped_share"] == 0.75 > REWRITE_DROP_WARNING == rewrite["drop_threshold"]
    assert rewrite["drop_warning"] is True
    insight = low["insight"]["novelty"]
    assert insight["m"] == 1 and insight["instances"] == 4 and insight["ci95"] is None
    headline = [m for m in res["metrics"] if m["metric"] == "ideabench.insight_score"]
    assert [m["n"] for m in headline] == [1, 1]
    html = (tmp_path / "r/report.html").read_text(encoding="utf-8")
    assert "the rewrite check dropped 3 of 4 target ideas (75%, above 20%)" in html
    assert "from m = 1 ranked instance(s) of 4: no interval" in html


def test_a_rewrite_check_within_the_stated_share_does_not_warn(tmp_path: Path) -> None:
    model = ScriptedModel(ideabench_responder())
    res = ideaharness.run("ideabench", generator=model, judge=model, limit=3, out=tmp_path / "r",
                          progress=False)
    rewrite = res["scenarios"]["low"]["blinding"]["rewrite"]
    assert rewrite["dropped_share"] == 0.0 and rewrite["drop_warning"] is False
    assert "the rewrite check dropped" not in (tmp_path / "r/report.html").read_text(encoding="utf-8")


def test_the_rewriter_flag_on_the_command_line_sends_rewrites_to_its_own_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--rewriter openai/rw`` over a real loopback endpoint: every rewrite prompt names model
    ``rw``, no ranking or rewrite goes to another model, and results.json records the rewriter."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    respond = ideabench_responder()
    with OpenAICompatServer(lambda body: respond(body["messages"])) as srv:
        code = main(["run", "ideabench", "--generator", "openai/gen", "--judge", "openai/judge",
                     "--rewriter", "openai/rw", "--base-url", srv.base_url, "--limit", "2", "--no-cache",
                     "--no-progress", "--out", str(tmp_path / "r")])
        bodies = [r.body for r in srv.requests]
    assert code in (0, None)
    rewrites = [b["model"] for b in bodies if is_rewrite(b["messages"][-1]["content"])]
    assert rewrites == ["rw", "rw"]
    assert {b["model"] for b in bodies if "Rank the following" in b["messages"][-1]["content"]} == {"judge"}
    results = json.loads((tmp_path / "r/results.json").read_text(encoding="utf-8"))
    assert results["rewriter"] == "openai/rw" and results["settings"]["models"]["rewriter"] == "openai/rw"
