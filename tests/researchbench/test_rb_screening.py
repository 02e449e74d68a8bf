"""Screening logic with a scripted judge: 75 -> 15 -> 3, misses, parse failures, resume."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ideaharness.benchmarks.researchbench.screening import extract_titles, parse_screening_reply, screen_pool
from ideaharness.data.pools import build_pool
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.retrieval import hit_ratio
from ideaharness.runner.steps import StepRunner
from ideaharness.runs.store import RunStore
from ideaharness.schema import Paper

WORDS = (
    "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau"
    .split()
)
GOLD = [
    Paper(id="g1", title="Chain rule for layered functions"),
    Paper(id="g2", title="Gradient flows in graphs"),
]
SHOWN = re.compile(r"^Candidate \d+:\n<title>\n(.+)\n</title>$", re.MULTILINE)


def make_pool(size: int = 75):
    corpus = [
        Paper(id=f"c{i}", title=f"corpus {WORDS[i % 19]} {WORDS[(i * 7) % 19]} report {i}")
        for i in range(150)
    ]
    sim = np.linspace(1, 0, 150)
    return build_pool("inst", GOLD, same_discipline=corpus, similarity=sim, size=size, seed=0)


def steps(tmp_path: Path, max_attempts: int = 3) -> StepRunner:
    return StepRunner(RunStore(tmp_path / "run", {"t": 1}), max_attempts=max_attempts, progress=False)


def shown_titles(messages) -> list[str]:
    return SHOWN.findall(messages[-1]["content"])


async def test_75_to_15_to_3_keeps_exactly_what_the_judge_chose(tmp_path: Path) -> None:
    pool = make_pool()
    chosen: list[list[str]] = []

    def responder(messages) -> str:
        titles = shown_titles(messages)
        picks = sorted(titles, key=lambda t: (t not in {g.title for g in GOLD}, t))[:3]
        chosen.append(picks)
        return "\n".join(f"Title: {t}\nReason: fits." for t in picks)

    result = await screen_pool(steps(tmp_path), ScriptedModel(responder), pool, question="q", seed=5)
    by_title = {c.title: c.index for c in pool.candidates}
    assert [len(r.input) for r in result.rounds] == [75, 15]
    assert [len(r.kept) for r in result.rounds] == [15, 3]
    assert len(chosen) == 6  # 5 windows of 15, then 1 window of 15
    assert set(result.rounds[0].kept) == {by_title[t] for picks in chosen[:5] for t in picks}
    assert result.rounds[1].kept == [by_title[t] for t in chosen[5]]
    gold = [c.index for c in pool.gold()]
    assert hit_ratio(result.rounds[0].kept, gold) == hit_ratio(result.rounds[1].kept, gold) == 1.0
    assert all(r.parse_failures == 0 for r in result.rounds)

    # resume: every window is recorded, so no model call is made again
    def never(messages) -> str:
        raise AssertionError("a recorded window was asked again")

    again = await screen_pool(steps(tmp_path), ScriptedModel(never), pool, question="q", seed=5)
    assert again == result


async def test_invented_title_is_a_miss_never_a_hit(tmp_path: Path) -> None:
    pool = make_pool(15)
    invented = "Chain rules for layered neural operators"  # near gold 1, below the 0.9 threshold

    def responder(messages) -> str:
        others = [t for t in shown_titles(messages) if t not in {g.title for g in GOLD}][:2]
        return "\n".join(f"Title: {t}\nReason: r" for t in [invented, *others])

    result = await screen_pool(steps(tmp_path), ScriptedModel(responder), pool, question="q")
    (only,) = result.rounds
    assert len(only.kept) == 2 and not set(only.kept) & {c.index for c in pool.gold()}
    assert only.windows[0].misses == [invented] and only.parse_failures == 0


async def test_window_with_no_valid_title_is_a_parse_failure_and_keeps_nothing(tmp_path: Path) -> None:
    pool = make_pool(15)
    model = ScriptedModel(lambda m: "Title: A paper nobody wrote\nReason: none")
    result = await screen_pool(steps(tmp_path, max_attempts=2), model, pool, question="q")
    (only,) = result.rounds
    assert only.kept == [] and only.parse_failures == 1 and len(model.calls) == 2
    assert only.windows[0].judgment["parse_ok"] is False


def test_reply_parsing() -> None:
    window = ["Alpha beta", "Gamma delta", "Epsilon zeta", "Eta theta"]
    reply = (
        "1. **Title:** \"Gamma delta\"\nReason: x\n2. Title: alpha BETA.\nReason: y\n"
        "Title: Gamma delta\nTitle: Eta theta"
    )
    parsed = parse_screening_reply(reply, window, keep=2)
    assert parsed["selected"] == [1, 0]  # distinct, reply order, at most keep
    assert [m["method"] for m in parsed["matches"]] == ["exact", "normalised", "exact", "exact"]
    assert extract_titles('[{"title": "Eta theta", "reason": "r"}]') == ["Eta theta"]
    assert extract_titles('{"inspirations": ["Alpha beta"]}') == ["Alpha beta"]
