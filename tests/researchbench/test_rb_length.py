"""ResearchBench ranking is not answerable by length (issue 32, item 3).

Input of the issue's shape: a small release whose gold hypotheses are short (about 44 words) and
whose 15 negatives per paper are long (about 100 to 180 words, median 138). A judge that always
picks the shorter (or the longer) hypothesis, never reading them, must score directional accuracy
near 0.5 once the gold is rewritten, and the blindness note must not say "not blind".

Tolerance: the rewrite is checked within the negatives' middle third by words
(:func:`~ideaharness.benchmarks._blinding.matched_bounds`), so a gold rewritten anywhere in the
band is shorter than between about 1/3 and 2/3 of its paper's negatives: a length-only judge then
scores within [1/3, 2/3] whatever the rewriter does inside the band (asserted with rewriters that
write at either end of it), and 0.5 to within one negative's tie (1/30 of a paper's 30 judgments)
with a rewriter that writes the length asked for (the negatives' median), asserted to ±0.05.
Before, the bounds came from the gold's own length (at most 1.5·w + 10 = 76 words): every rewrite
was shorter than all these negatives and the shorter-picking judge scored 1.0, as it does on the
published text (asserted: the test can fail).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ideaharness import arun
from ideaharness.benchmarks._blinding import matched_bounds, matched_form, stretched
from ideaharness.benchmarks.researchbench import ResearchBenchConfig
from ideaharness.benchmarks.researchbench.config import BenchData
from ideaharness.data.pools import Candidate, CandidatePool
from ideaharness.data.researchbench_jsonl import RankingTask
from ideaharness.data.tomato import load_tomato_chem
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.surface import word_count
from ideaharness.runner.options import ExecutionOptions
from tests.blinding_support import is_rewrite, scripted_rewrite

N = 8
NEGATIVE_WORDS = [100, 108, 115, 121, 126, 131, 135, 138, 142, 147, 152, 158, 165, 172, 180]
CANDIDATE = re.compile(r"<candidate_(\d)>\n(.*?)\n</candidate_\d>", re.S)
SELECTION = "**Analysis**: a paper.\n**Selection of research hypothesis candidate**: candidate {}"
FILLER = ("the layered oxide electrode would store more charge when its surface is coated with a thin "
          "polymer film that guides lithium ions and blocks side reactions with the liquid electrolyte "
          "during fast cycling at room temperature").split()


def _text(words: int, seed: int) -> str:
    body = [FILLER[(i + seed) % len(FILLER)] for i in range(words - 4)]
    return "We would test whether " + " ".join(body) + "."


def long_negative_release() -> BenchData:
    """N papers: a 44-word gold (the median of the issue's release) beside 15 negatives of
    100-180 words (median 138), the negatives' lengths rotated per paper."""
    instances = load_tomato_chem()[:N]
    ranking, pools = {}, {}
    for k, inst in enumerate(instances):
        gold = _text(44, k)
        lengths = NEGATIVE_WORDS[k:] + NEGATIVE_WORDS[:k]
        ranking[inst.id] = RankingTask(sample_id=inst.id, discipline="Chemistry", gold_hypothesis=gold,
                                       research_question=inst.research_question or "",
                                       model_negative_hypotheses=[_text(n, j) for j, n in enumerate(lengths)])
        pools[inst.id] = CandidatePool(instance_id=inst.id, source="given", candidates=[
            Candidate(index=i, title=r.title, label="gold") for i, r in enumerate(inst.references)])
    return BenchData(instances, given_pools=pools, given_ranking=ranking)


def _asked(user: str) -> tuple[int, int]:
    lo, hi = re.search(r'^- "hypothesis" \((\d+) to (\d+) words', user, re.M).groups()  # type: ignore[union-attr]
    return int(lo), int(hi)


def length_judge(shorter: bool, rewrite_at: str = "asked") -> Any:
    """Picks the candidate with fewer (``shorter``) or more words, ties to candidate 1; rewrites
    the gold at the asked length, or at the band's low or high end (``rewrite_at``)."""
    def reply(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if is_rewrite(user):
            if rewrite_at == "asked":
                return scripted_rewrite(user)
            lo, hi = _asked(user)
            words = (["we", "would", "test", "whether"] + FILLER * 9)[: lo if rewrite_at == "low" else hi]
            return json.dumps({"hypothesis": " ".join(words)})
        shown = dict(CANDIDATE.findall(user))
        one, two = word_count(shown["1"]), word_count(shown["2"])
        pick = ("1" if one <= two else "2") if shorter else ("1" if one >= two else "2")
        return SELECTION.format(pick)
    return reply


async def _run(tmp_path: Path, name: str, responder: Any, **config: Any) -> dict[str, Any]:
    cfg = ResearchBenchConfig(tasks=["ranking"], ranking_negatives="given", **config)
    model = ScriptedModel(responder)
    options = ExecutionOptions(out=tmp_path / name, progress=False)
    return await arun("researchbench", config=cfg, options=options, generator=model, judge=model,
                      bench_data=long_negative_release())


@pytest.mark.parametrize("shorter", [True, False], ids=["shortest", "longest"])
async def test_a_length_only_judge_is_at_chance_on_a_release_with_long_negatives(
        tmp_path: Path, shorter: bool) -> None:
    published = await _run(tmp_path, "parity", length_judge(shorter), parity=True)
    # the release has the shape: on the published text length alone finds the gold
    expected = 1.0 if shorter else 0.0
    assert published["ranking"]["overall"]["directional_accuracy"] == expected
    res = await _run(tmp_path, "blind", length_judge(shorter))
    rank = res["ranking"]["overall"]
    assert rank["n_tasks"] == N and rank["n_pairs"] == 15 * N
    assert rank["directional_accuracy"] == pytest.approx(0.5, abs=0.05)
    rewrites = [json.loads(x)["data"] for x in
                (tmp_path / "blind/records/researchbench_rewrite.jsonl").read_text().splitlines()]
    assert {word_count(r["judgment"]["parsed"]["hypothesis"]) for r in rewrites} == {138}
    assert {r["form"]["length_from"] for r in rewrites} == {"compared"}
    # the blindness check: words no longer separate the gold; no "not blind" note (parity's has one)
    assert "words" in published["ranking_blinding"]["surface"]["separating"]
    assert any("'words'" in n and "not blind" in n for n in published["notes"])
    assert res["ranking_blinding"]["surface"]["separating"] == []
    assert not any("not blind" in n for n in res["notes"])
    # asked beyond a faithful rewrite's length (44 words -> 138): said in the notes
    assert any("was asked longer than a faithful rewrite" in n and f"of {N} paper(s)" in n
               for n in res["notes"])


@pytest.mark.parametrize("rewrite_at", ["low", "high"])
async def test_anywhere_in_the_band_a_length_only_judge_stays_within_a_third_of_chance(
        tmp_path: Path, rewrite_at: str) -> None:
    for shorter in (True, False):
        res = await _run(tmp_path, f"{rewrite_at}-{shorter}", length_judge(shorter, rewrite_at))
        accuracy = res["ranking"]["overall"]["directional_accuracy"]
        assert res["ranking"]["overall"]["n_tasks"] == N
        assert 1 / 3 - 0.05 <= accuracy <= 2 / 3 + 0.05, (rewrite_at, shorter, accuracy)


async def test_a_rewrite_that_misses_the_band_is_dropped_final_and_said_once(tmp_path: Path) -> None:
    calls: list[str] = []

    def faithful_only(messages: list[dict[str, str]]) -> str:  # keeps the gold's own 44 words
        user = messages[-1]["content"]
        if is_rewrite(user):
            calls.append(user)
            return json.dumps({"hypothesis": " ".join(["we", "would", "test", "whether", *FILLER[:40]])})
        return length_judge(True)(messages)

    cfg = ResearchBenchConfig(tasks=["ranking"], ranking_negatives="given")
    for run in (1, 2):
        res = await arun("researchbench", config=cfg, options=ExecutionOptions(
            out=tmp_path / "r", progress=False, max_attempts=2, limit=2),
            generator=ScriptedModel(faithful_only), judge=ScriptedModel(faithful_only),
            bench_data=long_negative_release())
        assert len(calls) == 4, run  # 2 papers x 2 attempts, in the first run only
        assert res["ranking"]["overall"]["n_tasks"] == 0
        notes = [n for n in res["notes"] if "gold rewrite of 2 paper(s) failed its check (final" in n]
        assert len(notes) == 1 and "fewer than" in notes[0], res["notes"]
        assert not any("skipped (gold rewrite failed" in n for n in res["notes"])
        unparsed = [u for u in res["unparsed_units"] if u["step"] == "researchbench_rewrite"]
        assert len(unparsed) == 2 and all(u["final"] for u in unparsed)


def test_matched_bounds_take_the_compared_lengths_not_the_original() -> None:
    compared = [" ".join(["w"] * n) for n in (120, 130, 138, 150, 160)]
    assert matched_bounds(compared) == (132, 146, 138)
    # tightly spread items: at least MATCH_MIN_HALF_WIDTH words either side of the median
    assert matched_bounds([" ".join(["w"] * n) for n in (99, 100, 100, 101)]) == (95, 105, 100)
    form = matched_form("research hypothesis", "hypothesis", "d", " ".join(["w"] * 44), compared)
    field = form.fields[0]
    assert (field.min_words, field.max_words, field.target_words) == (132, 146, 138)
    assert form.faithful_words == (22, 76) and stretched(form) == "longer"
    short = matched_form("h", "hypothesis", "d", " ".join(["w"] * 400), compared)
    assert stretched(short) == "shorter"
    assert stretched(matched_form("h", "hypothesis", "d", " ".join(["w"] * 120), compared)) is None
    with pytest.raises(ValueError):
        matched_bounds(["", "  "])
