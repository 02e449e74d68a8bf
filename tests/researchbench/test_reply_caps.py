"""ResearchBench's reply caps: the generator's and the judge's answer caps are config fields, the
client adds the role's reasoning budget, and ``--parity`` sends no cap, as the published code
(ankitala/ResearchBench@2501e51: src/utils.py:337-343, code/hypothesis_ranking/ranking.py:41-44).
Runs against real loopback servers."""

from __future__ import annotations

from pathlib import Path

import pytest

from ideaharness.benchmarks.researchbench.config import PUBLISHED_CAPS, ResearchBenchConfig
from tests.caps_support import BUDGET, assert_cited, run_benchmark, sent_caps


def test_published_caps_are_cited_and_send_nothing() -> None:
    assert_cited(PUBLISHED_CAPS)
    assert set(PUBLISHED_CAPS) == {"screening", "compose", "score", "rank"}
    assert all(c.known and c.tokens is None for c in PUBLISHED_CAPS.values())
    assert "MOOSE-Chem@8de57aa:Method/utils.py:481" in PUBLISHED_CAPS["score"].source  # the later 8,192


def test_reply_caps_follow_the_fields() -> None:
    cfg = ResearchBenchConfig(generation_max_tokens=300, judge_max_tokens=700)
    assert [cfg.reply_cap(k) for k in ("compose", "screening", "score", "rank")] == [300, 700, 700, 700]
    parity = ResearchBenchConfig(parity=True)
    assert {parity.reply_cap(k) for k in PUBLISHED_CAPS} == {None}


def test_each_step_sends_its_answer_cap_plus_the_reasoning_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, bodies = run_benchmark("researchbench", tmp_path, monkeypatch, "--judge-max-tokens", "600")
    caps = sent_caps(out, bodies)
    assert caps["researchbench_generate"] == {512 + BUDGET}  # the generated negatives
    assert caps["researchbench_rank_pair"] == {600 + BUDGET}
    [rewrite] = caps["researchbench_rewrite"]  # the gold in the negatives' form: 64 + 2 per word
    assert isinstance(rewrite, int) and rewrite > 64 + BUDGET
    assert "?" not in caps
