"""Issue 32, item 3 through the evidence verdict: on a release whose negatives are much longer than
the gold (``tests/researchbench/test_rb_length.py``'s input: 44-word golds beside 100-180-word
negatives), a judge that always finds the gold scores directional accuracy 1.0. Shown the
published gold (``parity``), the form-only baselines reach it too (the shortest and the fewest-words
judges score 1.0), so the headline is *not evidence* and the console says "not blind". Shown the
rewrite (the default: the gold asked at the negatives' median length), the length and position
baselines stay near chance and the headline is no longer "not blind"."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from ideaharness import arun
from ideaharness.benchmarks.researchbench import ResearchBenchConfig
from ideaharness.errors import PartialRunError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.evidence import WEAK_N
from ideaharness.runner.options import ExecutionOptions
from ideaharness.runner.run import finish_run
from tests.blinding_support import is_rewrite, scripted_rewrite
from tests.researchbench.test_rb_length import CANDIDATE, SELECTION, N, long_negative_release

METRIC = "researchbench.directional_accuracy"


def gold_judge(out: Path) -> Any:
    """Picks the gold: it knows it (the release's gold texts, and the run's recorded rewrites of
    them), whatever its length or position."""
    golds = {task.gold_hypothesis for task in long_negative_release().given_ranking.values()}

    def reply(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if is_rewrite(user):
            return scripted_rewrite(user)
        known = set(golds)
        records = out / "records" / "researchbench_rewrite.jsonl"
        if records.exists():
            for line in records.read_text().splitlines():
                parsed = json.loads(line)["data"]["judgment"].get("parsed") or {}
                known.add(parsed.get("hypothesis"))
        shown = dict(CANDIDATE.findall(user))
        return SELECTION.format("1" if shown["1"] in known else "2")
    return reply


async def _run(out: Path, **config: Any) -> dict[str, Any]:
    model = ScriptedModel(gold_judge(out))
    config = ResearchBenchConfig(tasks=["ranking"], ranking_negatives="given", **config)
    await arun("researchbench", config=config, options=ExecutionOptions(out=out, progress=False),
               generator=model, judge=model, bench_data=long_negative_release())
    results: dict[str, Any] = json.loads((out / "results.json").read_text())
    return results


def _entry(results: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    headline = next(m for m in results["metrics"] if m["metric"] == METRIC)
    entry = next(e for e in results["form_baselines"] if e["metric"] == METRIC)
    verdict = next(v for v in results["evidence"]["verdicts"] if v["metric"] == METRIC)
    return headline, entry, verdict


async def test_published_gold_is_answerable_by_length_and_the_verdict_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "parity"
    results = await _run(out, parity=True)
    headline, entry, verdict = _entry(results)
    assert headline["value"] == 1.0 and headline["n"] == N
    assert entry["baselines"]["shortest"] == 1.0 and entry["baselines"]["fewest_words"] == 1.0
    assert entry["baselines"]["longest"] == 0.0 and entry["best_value"] == 1.0 and entry["chance"] == 0.5
    assert verdict["verdict"] == "not evidence"
    assert any(r.startswith("not blind") and "reaches 1" in r for r in verdict["reasons"]), verdict
    capsys.readouterr()
    with contextlib.suppress(PartialRunError):
        finish_run(results, out)
    console = capsys.readouterr().out
    assert any(line.startswith("NOT EVIDENCE") and METRIC in line and "not blind" in line
               for line in console.splitlines()), console


async def test_the_rewritten_gold_leaves_length_and_position_baselines_near_chance(tmp_path: Path) -> None:
    """Length in words and characters, lines and position stay within a third of chance; the
    scripted rewriter keeps the gold's content words and drops its short ones, so the mean word
    length still tells the rewrite from the negatives: the verdict says so ("near form", the
    judge's interval reaches that baseline) and is weak, never "not blind"."""
    results = await _run(tmp_path / "blind")
    headline, entry, verdict = _entry(results)
    assert headline["value"] == 1.0 and headline["n"] == N < WEAK_N
    assert entry["n"] == N
    for rule in ("shortest", "longest", "fewest_words", "most_words", "fewest_lines", "most_lines", "first",
                 "last"):
        assert 1 / 3 - 0.05 <= entry["baselines"][rule] <= 2 / 3 + 0.05, (rule, entry["baselines"])
    assert entry["baselines"]["first"] == entry["baselines"]["last"] == 0.5  # both orders shown
    assert entry["best"] == "longest_mean_word" and 2 / 3 < entry["best_value"] < 1.0, entry
    assert verdict["verdict"] == "weak" and not any(r.startswith("not blind") for r in verdict["reasons"])
    assert f"small n: n {N} < {WEAK_N}" in verdict["reasons"], verdict
    assert any(r.startswith("near form") and "longest_mean_word" in r for r in verdict["reasons"]), verdict
