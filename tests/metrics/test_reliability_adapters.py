"""Adapters read each benchmark's recorded judgments (record lines as the benchmarks write them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ideaharness.api import arun
from ideaharness.benchmarks.researchbench import ResearchBenchConfig
from ideaharness.metrics.reliability import reliability_blocks, views_from_records, views_from_run
from ideaharness.metrics.reliability.adapters import adapter_for
from ideaharness.runner.options import ExecutionOptions
from tests.researchbench.test_rb_run import RELEASE, scripted
from tests.runner.registry_support import every_adapter, every_generator

ADAPTERS = every_adapter()


def judgment(parsed, positions=None, ok=True, model="judge-m", attempts=1):
    return {
        "judge_model": model,
        "prompt_hash": "0" * 16,
        "raw_text": "r",
        "parsed": parsed if ok else None,
        "parse_ok": ok,
        "attempts": attempts,
        "errors": [],
        "positions": positions,
        "usage": {},
    }


RECORDS = [
    # IdeaBench (rank/<scenario>/<indicator>, overlap/<scenario>, and the generator's record)
    ("generate/low", "t/0", "", {"judgment": judgment([{"title": "T", "idea": "I"}], model="gen-m")}),
    (
        "rank/low/novelty",
        "t/0",
        "",
        {
            "judgment": judgment(["B", "C", "D", "A"], ["t/0/low/2", "target", "t/0/low/1", "t/0/low/0"]),
            "labels": ["A", "B", "C", "D"],
            "target_label": "B",
        },
    ),
    (
        "overlap/low",
        "t/0",
        "",
        {"judgment": judgment({"rating": 7, "explanation": "x"}), "idea_id": "t/0/low/2"},
    ),
    # AI Idea Bench
    (
        "ideas",
        "aiib-0",
        "",
        {"source": "generator", "ideas": [{"id": "aiib-0#0", "provenance": {"model": "judge-m"}}]},
    ),
    (
        "imcq",
        "aiib-0",
        "motivation/0",
        {
            "judgment": judgment("C", ["own", "other", "ground_truth", "own"]),
            "answer": "C",
            "idea_id": "aiib-0#0",
        },
    ),
    ("i2i", "aiib-0", "experiment_plan/0", {"judgment": judgment(4), "idea_id": "aiib-0#0", "scale": [1, 5]}),
    (
        "i2t",
        "aiib-0",
        "0",
        {"judgment": judgment({"motivation": 3, "experiment_plan": 5}), "idea_id": "aiib-0#0"},
    ),
    (
        "compete",
        "aiib-0",
        "strong|weak",
        {
            "judgment": judgment({"final_choice": 0}, ["aiib-0#0", "aiib-0#0"]),
            "idea0_system": "strong",
            "idea1_system": "weak",
        },
    ),
    (
        "compete",
        "aiib-0",
        "weak|strong",
        {
            "judgment": judgment({"final_choice": 1}, ["aiib-0#0", "aiib-0#0"]),
            "idea0_system": "weak",
            "idea1_system": "strong",
        },
    ),
    # ResearchBench
    ("researchbench_rank_pair", "C/1", "given0/gold_first", {"judgment": judgment(1, ["gold", "given0"])}),
    ("researchbench_rank_pair", "C/1", "given0/gold_second", {"judgment": judgment(1, ["given0", "gold"])}),
    (
        "researchbench_screen_window",
        "C/1",
        "r1w0",
        {"judgment": judgment({"selected": [12, 3], "matches": []}, [str(i) for i in range(15)])},
    ),
    ("researchbench_matched_score", "C/1", "one_step", {"judgment": judgment(3)}),
    ("researchbench_generate", "C/1", "one_step", {"judgment": judgment({"hypothesis": "h"}, model="gen-m")}),
    # LigBench
    (
        "ligbench/compare",
        "idea-1",
        "ref7|idea-first",
        {"judgment": judgment({"rating": 1.0, "soundness": 0.5, "contribution": 0.0}, ["idea-1", "ref7"])},
    ),
    (
        "ligbench/compare",
        "idea-1",
        "ref7|ref-first",
        {"judgment": judgment(None, ["ref7", "idea-1"], ok=False, attempts=3)},
    ),
    (
        "ligbench/initial_score",
        "idea-1",
        "",
        {
            "judgment": judgment({"rating": 2.0, "contribution": 2.0, "soundness": 2.0, "novelty": 4.0}),
            "calibration": ["r1", "r2", "r3"],
        },
    ),
    (
        "ligbench/judge_pair",
        "p1|p2",
        "ab",
        {"judgment": judgment({"rating": 1.0, "soundness": 1.0, "contribution": 1.0}, ["p1", "p2"])},
    ),
    ("ligbench/formalize", "idea-1", "", {"judgment": judgment({"main_target": "x"})}),
]


def by_metric(views):
    return {v.metric: [w for w in views if w.metric == v.metric] for v in views}


def test_every_judged_step_of_the_four_benchmarks_has_an_adapter() -> None:
    views = by_metric(views_from_records(RECORDS, ADAPTERS, every_generator))
    assert set(views) == {
        "rank/low/novelty",
        "overlap/low",
        "imcq[motivation]",
        "i2i[experiment_plan]",
        "i2t[motivation]",
        "i2t[experiment_plan]",
        "compete",
        "researchbench_rank_pair",
        "researchbench_screen_window",
        "researchbench_matched_score",
        *(f"ligbench/compare[{d}]" for d in ("rating", "soundness", "contribution")),
        *(f"ligbench/initial_score[{d}]" for d in ("rating", "contribution", "soundness", "novelty")),
        *(f"ligbench/judge_pair[{d}]" for d in ("rating", "soundness", "contribution")),
    }
    for step in ("generate/low", "ideas", "researchbench_generate", "ligbench/formalize", "target_idea"):
        assert adapter_for(step, ADAPTERS) is None
    (rank,) = views["rank/low/novelty"]
    assert rank.value == ("target", "t/0/low/1", "t/0/low/0", "t/0/low/2") and rank.gold_position == 1
    assert rank.generator_model == "gen-m" and rank.position_answer() == (1, 2, 3, 0)
    (imcq,) = views["imcq[motivation]"]
    assert imcq.value == (2,) and imcq.gold_position == 2 and imcq.content_answer() == ("ground_truth",)
    assert imcq.generator_model == "judge-m"  # the judged idea is the judge's own
    a, b = views["compete"]
    assert (a.value, b.value, a.group == b.group) == (1.0, 0.0, True)
    assert a.content_answer() == b.content_answer() == "strong"  # both orders name the same system
    g1, g2 = views["researchbench_rank_pair"]
    assert (g1.group, g1.gold_position, g2.gold_position) == ("given0", 0, 1)
    assert g1.content_answer() == "gold" and g2.content_answer() == "given0"
    (screen,) = views["researchbench_screen_window"]
    assert screen.value == (3, 12)
    first, failed = views["ligbench/compare[soundness]"]
    assert first.value == 0.5 and first.group == "ref7" and failed.value is None and failed.attempts == 3
    assert views["ligbench/initial_score[novelty]"][0].positions == ("r1", "r2", "r3")
    blocks = reliability_blocks(views_from_records(RECORDS, ADAPTERS, every_generator))
    assert blocks["ligbench/compare[rating]"].judges["judge-m"].parse_failure_rate == 0.5
    assert blocks["imcq[motivation]"].judges["judge-m"].self_preference
    json.dumps({m: b.model_dump(mode="json") for m, b in blocks.items()})  # results.json-ready


def test_reask_records_pair_with_their_original() -> None:
    rows = [
        ("rank/low/novelty", "t/0", "", RECORDS[1][3]),
        (
            "rank/low/novelty",
            "t/0",
            "#reask",
            {
                "judgment": judgment(["C", "D", "A", "B"], ["t/0/low/0", "t/0/low/2", "target", "t/0/low/1"]),
                "labels": ["A", "B", "C", "D"],
                "target_label": "C",
            },
        ),
    ]
    views = views_from_records(rows, ADAPTERS, every_generator)
    assert [v.reask for v in views] == [False, True]
    jr = reliability_blocks(views)["rank/low/novelty"].judges["judge-m"]
    assert jr.reask_judgments == 1
    assert jr.consistency is not None and jr.consistency.n_pairs == 1
    assert jr.consistency.agreement == pytest.approx(1.0)  # the same content ranking after permutation


async def test_researchbench_run_with_an_always_candidate_1_judge_is_flagged(tmp_path: Path) -> None:
    """A real ResearchBench run (scripted judge: always "candidate 1"): every pair flips with position."""
    model = scripted("**Analysis**: x\n**Selection of research hypothesis candidate**: candidate 1")
    config = ResearchBenchConfig(data=str(RELEASE), tasks=["ranking"])
    options = ExecutionOptions(out=tmp_path / "run", progress=False, limit=1)
    await arun("researchbench", config=config, options=options, generator=model, judge=model)
    block = reliability_blocks(views_from_run(str(tmp_path / "run"), ADAPTERS))["researchbench_rank_pair"]
    jr = block.judges["scripted/test"]
    # 30 judgments (15 pairs x 2 orders) and the default --consistency-sample's one re-ask (order swapped)
    assert jr.judgments == 30 + jr.reask_judgments and jr.reask_judgments == 1
    assert jr.consistency.n_pairs >= 15 and jr.consistency.agreement == 0.0
    assert {w.rule for w in block.warnings} == {"constant_judge", "position_bias"}


def test_reliability_section_rows_and_warnings_for_the_runner(tmp_path: Path) -> None:
    from ideaharness.metrics.reliability import COLUMNS, reliability_rows, reliability_section

    section = reliability_section(RECORDS, adapters=ADAPTERS, human_ceiling={"value": 0.565})
    json.dumps(section)
    rows = reliability_rows(section)
    # no judge compared with human labels: no human-agreement column, and no ceiling on its own;
    # no reply ran out of tokens while reasoning: no truncated-reasoning column
    assert all(len(r) == len(COLUMNS) - 2 for r in rows)
    row = next(r for r in rows if r[0] == "ligbench/compare[rating]")
    assert row[1:4] == ["judge-m", "2", "50%"]
    assert section["human_ceiling"] is None


def test_ligbench_judge_pairs_carry_human_labels_and_get_human_agreement() -> None:
    """Item 17: where the data carries human labels (LigBench judge accuracy: the paper with the
    higher venue-debiased reviewer score), the block's human agreement is measured, with its n and
    Wilson interval, and no Si et al. ceiling is attached (a different statistic)."""
    from ideaharness.metrics.reliability import reliability_columns, reliability_rows, reliability_section

    def record(pair: str, order: str, shown: list[str], verdict: float, human: float) -> tuple:
        judgment = {
            "judge_model": "judge-m",
            "parse_ok": True,
            "attempts": 1,
            "positions": shown,
            "parsed": {"rating": verdict, "soundness": verdict, "contribution": verdict},
        }
        return (
            "ligbench/judge_pair",
            pair,
            order,
            {
                "judgment": judgment,
                "human_preference": {"rating": human, "soundness": human, "contribution": 0.5},
            },
        )

    records = []
    for i in range(10):
        a, b = f"p{i}a", f"p{i}b"  # human scores: a higher
        right = 1.0 if i < 8 else 0.0  # the judge agrees on 8 of 10 pairs, in both orders
        records.append(record(f"{a}|{b}", "ab", [a, b], right, 1.0))
        records.append(record(f"{a}|{b}", "ba", [b, a], 1.0 - right, 0.0))
    section = reliability_section(records, adapters=ADAPTERS, human_ceiling=lambda: {"value": 0.565})
    human = section["metrics"]["ligbench/judge_pair[rating]"]["judges"]["judge-m"]["human"]
    # per labelled pair (both orders combined into the pair's verdict), not per judgment (was n 20)
    assert human["measure"] == "accuracy" and human["n"] == 10 and human["value"] == pytest.approx(0.8)
    low, high = human["interval"]
    assert low < 0.8 < high  # the headline's bounded-mean interval over the 10 pairs
    assert section["metrics"]["ligbench/judge_pair[contribution]"]["judges"]["judge-m"]["human"] is None
    assert section["human_ceiling"] is None  # accuracy on pairs is not the ceiling's statistic
    assert "human agreement" in reliability_columns(section)
    row = next(r for r in reliability_rows(section) if r[0] == "ligbench/judge_pair[rating]")
    assert "accuracy 0.80 [" in row[reliability_columns(section).index("human agreement")]


def test_liveideabench_critiques_and_fluency_are_judgments() -> None:
    """Critiques: one rating per dimension, the idea's judges share a unit (panel); fluency: both
    orders of one judge's pair share a group (position consistency), the idea's generator known."""
    a = {"originality": 7, "feasibility": 5, "clarity": 6}
    b = {**a, "feasibility": 4}
    rows = [
        ("idea", "stars", "0", {"judgment": judgment({"idea": "x"}, model="gen-m")}),
        ("critique", "stars", "0/j1", {"judgment": judgment(a, model="j1"), "idea": 0, "judge": "j1"}),
        ("critique", "stars", "0/j2", {"judgment": judgment(b, model="j2"), "idea": 0, "judge": "j2"}),
        ("critique", "stars", "1/j1", {"judgment": judgment(None, ok=False, model="j1"), "idea": 1,
                                       "judge": "j1", "protocol": "v1"}),
        ("fluency", "stars", "0/j1/AB", {"judgment": judgment("B", ["stars/0", "stars/1"], model="j1"),
                                         "pair": [0, 1]}),
        ("fluency", "stars", "0/j1/BA", {"judgment": judgment("B", ["stars/1", "stars/0"], model="j1"),
                                         "pair": [0, 1]}),
    ]
    views = by_metric(views_from_records(rows, ADAPTERS, every_generator))
    assert set(views) == {"critique[originality]", "critique[feasibility]", "critique[clarity]", "fluency"}
    assert len(views["critique[originality]"]) == 3 and len(views["critique[clarity]"]) == 2  # v1: no clarity
    assert {v.unit_id for v in views["critique[feasibility]"]} == {"stars|0", "stars|1"}
    assert views["critique[originality]"][0].generator_model == "gen-m"
    ab, ba = views["fluency"]
    # the fluency metric's value of grade B (v2 when the record names no protocol), not v1's 20/3
    assert (ab.value, ab.group, ab.group == ba.group) == (7.0, "0/j1", True)
    v1 = ("fluency", "stars", "1/j1/AB", {"judgment": judgment("B", ["stars/0", "stars/2"], model="j1"),
                                          "pair": [0, 2], "protocol": "v1"})
    assert views_from_records([v1], ADAPTERS, every_generator)[0].value == pytest.approx(20.0 / 3.0)
    jr = reliability_blocks(views_from_records(rows, ADAPTERS, every_generator))["fluency"].judges["j1"]
    assert jr.consistency is not None and jr.consistency.n_pairs == 1 and jr.consistency.agreement == 1.0
