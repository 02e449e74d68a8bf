"""ResearchBench replies read as a person reads them, and parse failures that never lower a score
(issue 9, items 1 and 16; issue 13, item 2), with scripted models."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ideaharness import arun
from ideaharness.benchmarks.researchbench import (
    ResearchBenchConfig,
    parse_hypothesis,
)
from ideaharness.errors import ParseError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.matched_score import parse_matched_score
from ideaharness.metrics.pairwise_ranking import parse_pairwise_choice
from ideaharness.metrics.retrieval import hit_ratio, negative_selection_ratio
from ideaharness.runner.options import ExecutionOptions
from tests.blinding_support import is_rewrite, scripted_rewrite

RELEASE = Path(__file__).parent / "fixtures" / "release"
SHOWN = re.compile(r"^Candidate \d+:\n<title>\n(.+)$", re.MULTILINE)
REWRITTEN = "we would test whether"  # how the scripted rewrite of the gold begins
RESTATED = "**Selection of research hypothesis candidate**: candidate 1 or candidate 2"


# ----------------------------------------------------------------------------- item 1: final verdict


def test_a_restated_format_is_not_the_selection() -> None:
    reply = f"I will answer as\n{RESTATED}\n\n**Analysis**: the second is sound.\n" \
            "**Selection of research hypothesis candidate**: candidate 2"
    assert parse_pairwise_choice(reply) == 2
    plain = "Selection: candidate 1 or candidate 2\nAnalysis: x\nSelection: candidate 2"
    assert parse_pairwise_choice(plain) == 2
    with pytest.raises(ParseError):
        parse_pairwise_choice(RESTATED)  # only the format: no selection
    with pytest.raises(ParseError):  # two different selections in the final answer
        parse_pairwise_choice("**Selection of research hypothesis candidate**: candidate 1\n"
                              "**Selection of research hypothesis candidate**: candidate 2")


def test_the_final_matched_score_counts() -> None:
    assert parse_matched_score("Matched score: 1\nReason: one key point.\n\nOn reflection all four are "
                               "covered.\nMatched score: 4\nReason: all key points.") == 4
    assert parse_matched_score("Matched score: <an integer from 0 to 5>\n\nMatched score: 3") == 3
    with pytest.raises(ParseError):
        parse_matched_score("Matched score: 3 or Matched score: 4")
    with pytest.raises(ParseError):  # an off-scale final score is never replaced by the earlier one
        parse_matched_score("Matched score: 2\nReason: x\n\nMatched score: 9")
    with pytest.raises(ParseError):
        parse_matched_score('{"matched_score": 6, "reason": "covers 3 of 4 key points"}')


def _three_task_release(tmp_path: Path) -> Path:
    """The release fixture's two ranking tasks plus a third (a copy under another id)."""
    out = tmp_path / "release"
    out.mkdir()
    for name in ("papers.jsonl", "ranking.jsonl", "retrieve.jsonl"):  # given pools: no embedding model
        rows = [json.loads(line) for line in (RELEASE / name).read_text().splitlines() if line.strip()]
        third = dict(rows[0], sample_id="Chemistry/101000chem0003", doi="10.1000/Chem.0003")
        for key in ("main_hypothesis", "gold_hypothesis"):
            if key in third:
                third[key] = "Catalyst Z works because mechanisms 5 and 6 combine in a new way."
        (out / name).write_text("".join(json.dumps(r) + "\n" for r in [*rows, third]))
    return out


async def test_judge_always_picking_gold_after_restating_the_format_scores_one(tmp_path: Path) -> None:
    """Issue 9.1 end to end: 3 instances, a judge that always picks the gold hypothesis but first
    restates the answer format: accuracy 1.000 (the first mention read 0.500, every pair "disagree")."""
    data = _three_task_release(tmp_path)
    lines = (data / "ranking.jsonl").read_text().splitlines()
    golds = {json.loads(line)["gold_hypothesis"] for line in lines}

    def judge(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if is_rewrite(user):  # the gold rewritten into the negatives' form (blinding)
            return scripted_rewrite(user)
        first = user.split("<candidate_1>\n", 1)[1].split("\n", 1)[0]
        pick = 1 if first in golds or first.startswith(REWRITTEN) else 2
        return (f"{RESTATED}\n\n**Analysis**: candidate {pick} combines the mechanisms soundly.\n"
                f"**Selection of research hypothesis candidate**: candidate {pick}")

    config = ResearchBenchConfig(data=str(data), tasks=["ranking"])
    model = ScriptedModel(judge)
    results = await arun("researchbench", config=config, options=ExecutionOptions(out=tmp_path / "run",
                                                                                  progress=False),
                                            generator=model, judge=model)
    rank = results["ranking"]["overall"]
    assert rank["n_tasks"] == 3 and rank["pair_parse_failures"] == 0
    assert rank["directional_accuracy"] == 1.0
    assert rank["accuracy_gold_first"] == rank["accuracy_gold_second"] == 1.0
    consistency = rank["pair_consistency"]
    assert consistency["disagree"] == 0 and consistency["both_gold"] == rank["n_pairs"]
    assert rank["rank_score"] == 1.0 and rank["task_outcomes"]["both"] == 3


# ----------------------------------------------------------------------------- item 16: screening


def test_undetermined_candidates_are_left_out_of_the_ratios() -> None:
    assert hit_ratio([], gold=[1, 2], undetermined=[1, 2, 3]) is None
    assert hit_ratio([5], gold=[1, 5], undetermined=[1]) == 1.0
    labels = {0: "gold", 1: "negative_t1", 2: "negative_t1", 3: "negative_t2"}
    assert negative_selection_ratio([1], labels, undetermined=[2, 3]) == {
        "negative_t1": 1.0, "negative_t2": None, "negative_t3": None}


@pytest.mark.parametrize(("seed", "undetermined", "expected"), [(0, 2, None), (1, 1, 1.0)])
async def test_a_screening_parse_failure_never_lowers_the_hit_ratio(
    tmp_path: Path, seed: int, undetermined: int, expected: float | None
) -> None:
    """Issue 9.16 toy: two windows, the one holding the first gold inspiration never parses. The
    hit ratio is computed over the parsed window only and the failure is counted: with both gold
    inspirations in the failed window (seed 0) there is no hit ratio (was 0.0); with the other one
    kept in the parsed window (seed 1) it is 1.0 (was 0.5)."""
    data = tmp_path / "release"
    data.mkdir()
    row = json.loads((RELEASE / "retrieve.jsonl").read_text().splitlines()[0])
    gold = [c for c in row["candidates"] if c["label"] == "gold"]
    negatives = [c for c in row["candidates"] if c["label"] != "gold"][:8]
    row["candidates"] = [dict(c, index=i) for i, c in enumerate(gold + negatives)]  # 2 gold + 8 negatives
    (data / "retrieve.jsonl").write_text(json.dumps(row) + "\n")
    broken_gold = gold[0]["title"]

    def screener(messages: list[dict[str, str]]) -> str:
        titles = SHOWN.findall(messages[-1]["content"])
        if broken_gold in titles:
            return "These papers are all relevant in some way."  # no title: a parse failure
        picks = sorted(titles, key=lambda t: (t not in {g["title"] for g in gold}, t))[:2]
        return "\n".join(f"Title: {t}\nReason: transfers a mechanism." for t in picks)

    config = ResearchBenchConfig(data=str(data), tasks=["retrieval"], window_size=5, keep_size=2, seed=seed)
    model = ScriptedModel(screener)
    results = await arun("researchbench", config=config,
                         options=ExecutionOptions(out=tmp_path / "run", progress=False, max_attempts=2),
                         generator=model, judge=model)
    first = results["retrieval"]["overall"][0]
    assert first["hit_ratio"] == expected and first["n"] == (expected is not None)
    assert first["parse_failures"] == 1 and first["windows_called"] == 2
    assert first["gold_undetermined"] == undetermined


# ----------------------------------------------------------------------------- issue 13.2: hypotheses


@pytest.mark.parametrize(
    "reply",
    [
        "I think both are interesting; it depends.",
        "Hypothesis: I think both are interesting; it depends.",
        "Hypothesis: I'm sorry, but I cannot propose a hypothesis without more information about it.",
        "Hypothesis: ...\nReasoning: none",
        "Hypothesis: \u200b\u200b\nReasoning: none",
        "Hypothesis: x7#qP!2 Zr@9kL%w vB4&eM*1 tY6^nC(3 hU8)jF-5 gD0_sA=7 oI2+lK{9 pQ3}\nReasoning: r",
        "A salt in the hydrogel raises its thermopower because the ions order at the electrodes.",  # no label
    ],
)
def test_a_hypothesis_must_have_the_demanded_form(reply: str) -> None:
    with pytest.raises(ParseError):
        parse_hypothesis(reply)


def test_a_labelled_hypothesis_is_read_up_to_the_reasoning() -> None:
    reply = ("**Hypothesis**: Adding guanidinium sulfate to a PVA hydrogel raises its thermopower, because "
             "the ions order at the electrodes.\n**Reasoning**: inspiration 1 gives the salt.")
    parsed = parse_hypothesis(reply)
    hypothesis = parsed["hypothesis"]
    assert hypothesis.startswith("Adding guanidinium") and hypothesis.endswith("electrodes.")
