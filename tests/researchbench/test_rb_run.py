"""End-to-end ResearchBench runs: scripted models on the release fixtures (logic), and the real
embedded 0.5B model on one bundled TOMATO-Chem paper (marked ``model``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ideaharness import arun
from ideaharness.benchmarks.researchbench import ResearchBenchConfig
from ideaharness.cli import main
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.runner.options import ExecutionOptions
from tests.blinding_support import is_rewrite, scripted_rewrite

RELEASE = Path(__file__).parent / "fixtures" / "release"
SHOWN = re.compile(r"^Candidate \d+:\n<title>\n(.+)\n</title>$", re.MULTILINE)


def scripted(rank_reply: str, picks_per_window: int = 3) -> ScriptedModel:
    def responder(messages) -> str:
        user = messages[-1]["content"]
        if is_rewrite(user):
            return scripted_rewrite(user)
        if "inspiration candidate" in user or "candidate inspiration papers" in user:
            titles = SHOWN.findall(user)
            picks = sorted(titles, key=lambda t: ("inspiration" not in t, t))[:picks_per_window]
            return "\n".join(f"Title: {t}\nReason: r" for t in picks)
        if "Matched score:" in user:
            return "Matched score: 3\nReason: two key points."
        if "Selection of research hypothesis candidate" in user:
            return rank_reply
        return "Hypothesis: combine mechanism one with mechanism two at room temperature.\nReasoning: r"

    return ScriptedModel(responder)


async def test_release_fixture_all_tasks_with_given_pools_and_negatives(tmp_path: Path) -> None:
    model = scripted("**Analysis**: x\n**Selection of research hypothesis candidate**: candidate 1")
    config = ResearchBenchConfig(data=str(RELEASE), n_mutations=1, n_refine=1, published_after="2020-01-01")
    options = ExecutionOptions(out=tmp_path / "run", progress=False)
    results = await arun("researchbench", config=config, options=options, generator=model, judge=model)

    rounds = results["retrieval"]["overall"]
    assert [r["n"] for r in rounds] == [2, 2]
    assert rounds[0]["hit_ratio"] == rounds[1]["hit_ratio"] == 1.0  # the judge always picks the gold
    assert rounds[1]["negative_selection_ratio"]["negative_t3"] == 0.0
    assert set(results["retrieval"]) == {"overall", "discipline: Chemistry", "discipline: Physics",
                                         "strict (published after 2020-01-01)"}
    comp = results["composition"]["overall"]
    assert comp["one_step"]["mean_matched_score"] == comp["pipeline"]["mean_matched_score"] == 3.0
    assert results["per_instance"]["Chemistry/101000chem0001"]["composition"]["key_points_source"] == (
        "fine_grained_hypothesis")
    rank = results["ranking"]["overall"]
    # a judge that always says "candidate 1" agrees with itself on no pair: every pair disagrees
    assert rank["n_pairs"] == 30 and rank["pair_consistency"]["disagree"] == 30
    assert rank["accuracy_gold_first"] == 1.0 and rank["accuracy_gold_second"] == 0.0
    assert rank["rank_score"] == pytest.approx(1 / 16)
    assert rank["task_outcomes"] == {"neither": 0, "one": 2, "both": 0, "undetermined": 0}
    saved = json.loads((tmp_path / "run" / "results.json").read_text())
    assert saved["n_instances"] == 2 and (tmp_path / "run" / "report.html").exists()
    pools = (tmp_path / "run" / "records" / "researchbench_pool.jsonl").read_text().splitlines()
    assert len(pools) == 2 and json.loads(pools[0])["data"]["source"] == "given"

    # resume: nothing is asked again
    calls = len(model.calls)
    again = await arun("researchbench", config=config, options=options, generator=model, judge=model)
    assert len(model.calls) == calls and again["ranking"] == results["ranking"]


async def test_unparsable_ranking_reply_is_a_parse_failure_not_a_win(tmp_path: Path) -> None:
    model = scripted("Both hypotheses have merit; I cannot choose.")
    config = ResearchBenchConfig(data=str(RELEASE), tasks=["ranking"])
    results = await arun("researchbench", config=config,
                         options=ExecutionOptions(out=tmp_path / "run", limit=1, progress=False,
                                                  max_attempts=2),
                         generator=model, judge=model)
    rank = results["ranking"]["overall"]
    assert rank["pair_parse_failures"] == 30 and rank["pair_consistency"]["incomplete"] == 15
    assert rank["directional_accuracy"] is None and rank["rank_score"] is None
    assert rank["pair_consistency"]["both_gold"] == rank["pair_consistency"]["both_negative"] == 0


def test_cli_user_errors_are_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "researchbench", "--task", "everything", "--out", str(tmp_path / "r")])
    assert exc.value.code == 1
    assert capsys.readouterr().err.strip() == "error: --task 'everything': Input should be 'retrieval', " \
        "'composition' or 'ranking'"


@pytest.mark.model
def test_all_tasks_end_to_end_with_the_embedded_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    args = [
        "run", "researchbench", "--task", "all", "--generator", "local/qwen2.5-coder-0.5b",
        "--judge", "local/qwen2.5-coder-0.5b", "--limit", "1", "--pool-size", "15", "--corpus-size", "150",
        "--n-mutations", "1", "--n-refine", "0", "--n-negatives", "1", "--max-attempts", "1",
        "--generation-max-tokens", "200", "--judge-max-tokens", "200",
        "--out", str(out),
    ]
    _main(args)
    results = json.loads((out / "results.json").read_text())
    if results["status"] == "partial":  # the 0.5B's replies left a metric with no scored unit: said so
        assert results["not_computed"] and results["failed_units"] == []
    assert results["llm_stats"]["generator"]["calls"] >= 6
    assert results["n_instances"] == 1
    (only_round,) = results["retrieval"]["overall"]
    # the window parsed (one paper with a hit ratio) or is a counted parse failure (no hit ratio)
    assert only_round["windows_called"] == 1 and only_round["n"] + only_round["parse_failures"] == 1
    assert 0.0 <= (only_round["hit_ratio"] or 0.0) <= 1.0
    inst = next(iter(results["per_instance"].values()))
    assert inst["retrieval"]["pool_size"] == 15
    comp = inst["composition"]
    for method in ("one_step", "pipeline"):
        # a hypothesis was produced or its failure recorded; a score is an int in range or a counted failure
        assert comp[method]["done"]
        assert comp[method]["score"] is None or 0 <= comp[method]["score"] <= 5
    ranking = inst["ranking"]
    assert ranking["source"] == "generated"
    if ranking["reference_text"] == "rewritten":  # the gold in the negatives' form, judged both ways
        assert ranking["orders"] == ["gold_first", "gold_second"]
    else:  # its rewrite failed: not ranked, and said so
        assert ranking["skipped"] == "gold rewrite failed (parse failure)"
    assert (out / "report.html").read_text().count("Inspiration retrieval") >= 1
    reasked = [u for u in results["unparsed_units"] if not u["final"]]
    _main(args)  # resume: everything parsed is recorded; only replies that did not parse are re-asked
    again = json.loads((out / "results.json").read_text())
    calls = again["llm_stats_this_process"]["generator"]["calls"]  # one client: generator = judge
    assert calls <= len(reasked)  # --max-attempts 1: one new sample per re-asked judgment
    assert again["llm_stats"]["generator"]["calls"] == results["llm_stats"]["generator"]["calls"] + calls
    if not reasked:
        assert calls == 0 and again["per_instance"] == results["per_instance"]


def _main(args: list[str]) -> None:
    """``main``: exit 0, or 3 when a metric had no scored unit (a 0.5B model's replies)."""
    try:
        main(args)
    except SystemExit as exc:
        assert exc.code == 3, exc.code


async def test_pools_built_from_the_dataset_and_generated_negatives(tmp_path: Path) -> None:
    from ideaharness.benchmarks.researchbench import BenchData
    from ideaharness.data.researchbench_jsonl import load_papers_jsonl

    data = BenchData(load_papers_jsonl(RELEASE / "papers.jsonl"))  # no pools given, no corpus
    model = scripted("**Selection of research hypothesis candidate**: candidate 2")
    config = ResearchBenchConfig(
        data=str(RELEASE), tasks=["retrieval", "ranking"], pool_size=6, window_size=4, keep_size=1,
        n_negatives=2, ranking_negatives="generated",
    )
    options = ExecutionOptions(out=tmp_path / "run", progress=False)
    results = await arun("researchbench", config=config, options=options, generator=model, judge=model,
                         bench_data=data)
    chem = results["per_instance"]["Chemistry/101000chem0001"]
    # one paper per discipline: no same-discipline negatives, level 3 = the other discipline's papers
    assert chem["retrieval"]["label_counts"] == {"gold": 2, "negative_t3": 3}
    assert "pools (2 of 2): pool short: 5 candidates instead of 6" in results["notes"]
    assert chem["ranking"]["source"] == "generated" and len(chem["ranking"]["pairs"]) == 2
    # "candidate 2" in both orders: gold wins when shown second only -> every pair disagrees
    assert results["ranking"]["overall"]["pair_consistency"]["disagree"] == 4
    assert results["ranking"]["overall"]["accuracy_gold_second"] == 1.0


async def test_papers_that_stop_early_are_carried_to_later_retention_levels(tmp_path: Path) -> None:
    from ideaharness.benchmarks.researchbench.run import planned_rounds

    assert [planned_rounds(n, 15, 3) for n in (75, 30, 20, 15, 3)] == [2, 2, 2, 1, 0]
    model = scripted("unused", picks_per_window=1)  # keeps 1 title per window: 20 -> 2, then stop
    config = ResearchBenchConfig(data=str(RELEASE), tasks=["retrieval"])
    options = ExecutionOptions(out=tmp_path / "run", progress=False, consistency_sample=0.0)
    # no consistency re-ask: the count below is of the screening calls only
    results = await arun("researchbench", config=config, options=options, generator=model, judge=model)
    first, second = results["retrieval"]["overall"]
    assert first["n"] == second["n"] == 2 and second["windows_called"] == 0
    assert second["hit_ratio"] == first["hit_ratio"]  # the same kept set counts at 4% retention
    assert len(model.calls) == 4  # windows of 15 and 5 per paper; no second round was needed


async def test_position_only_judge_paper_rank_score_and_intervals_beside_ours(tmp_path: Path) -> None:
    """An always-"candidate 1" judge: 1/16 by our both-orders-agree rank score, (1 + 1/16)/2 by the
    paper's per-order mean; every headline number of ranking and retrieval carries an interval."""
    model = scripted("**Analysis**: x\n**Selection of research hypothesis candidate**: candidate 1")
    config = ResearchBenchConfig(data=str(RELEASE), tasks=["retrieval", "ranking"], bootstrap_resamples=200)
    results = await arun("researchbench", config=config,
                         options=ExecutionOptions(out=tmp_path / "run", progress=False),
                         generator=model, judge=model)
    rank = results["ranking"]["overall"]
    assert rank["rank_score"] == pytest.approx(0.0625)
    assert rank["rank_score_paper"] == pytest.approx((1 + 1 / 16) / 2)
    assert rank["directional_accuracy"] == 0.5
    rounds = results["retrieval"]["overall"]
    headline = {(m["metric"], m["group"]): m for m in results["metrics"]}
    # the tables' intervals are the headline's (issue 32, item 7): below 5 papers none, the reason
    # instead (were directional accuracy [0.5, 0.5], rank score (paper) [0.531, 0.531], NSR L3
    # [0, 0] and every hit-ratio interval, from a bootstrap at n 2)
    beside = [(rank["directional_accuracy_ci"], rank["directional_accuracy_ci_why"],
               ("researchbench.directional_accuracy", "")),
              (rank["rank_score_paper_ci"], rank["rank_score_paper_ci_why"],
               ("researchbench.rank_score_paper", "")),
              *[(r["hit_ratio_top1_ci"], r["hit_ratio_top1_ci_why"], ("researchbench.hit_ratio_top1",
                                                                       f"round {r['round']}"))
                for r in rounds if r["hit_ratio_top1"] is not None]]
    for ci, why, key in beside:
        assert ci == headline[key].get("ci") and why == headline[key].get("ci_why"), key
        assert ci is None and why == "n too small for an interval (n < 5)", key
    assert rounds[-1]["negative_selection_ratio_ci"]["negative_t3"] is None
    assert rounds[-1]["negative_selection_ratio_ci_why"]["negative_t3"].startswith("n too small")
    assert headline[("researchbench.rank_score_paper", "")]["value"] == pytest.approx(0.53125)
    accuracy = headline[("researchbench.directional_accuracy", "")]
    # fewer than 5 papers: no interval, the reason instead (was [0.5, 0.5]; issue 32, item 7)
    assert accuracy["n"] < 5 and accuracy["ci"] is None and accuracy["ci_why"].startswith("n too small")
    assert ("researchbench.hit_ratio_top1", "round 1") in headline
    assert results["bootstrap"]["n_resamples"] == 200 and results["bootstrap"]["method"] == "percentile"
    report = (tmp_path / "run" / "report.html").read_text()
    assert "rank score (paper)" in report and "0.531" in report
    assert "Inspiration retrieval: 95% intervals" in report
