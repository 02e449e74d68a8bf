"""AI Idea Bench 2025's reply caps: every prompt kind's answer cap is a config field, the client
adds the role's reasoning budget, and ``--parity`` sends the published code's caps
(yansheng-qiu/AI_Idea_Bench_2025@4ea6390: ``max_tokens=8000`` for every DeepSeek judge call,
4,096 for the AI-Scientist generator) with no reasoning budget added. Runs against real loopback
servers."""

from __future__ import annotations

from pathlib import Path

import pytest

from ideaharness.benchmarks.aiideabench.config import PUBLISHED_CAPS, AIIdeaBenchConfig
from tests.caps_support import BUDGET, assert_cited, run_benchmark, sent_caps

KINDS = ("generate", "decompose", "digest", "judge", "keywords", "concepts")


def test_published_caps_are_cited() -> None:
    assert_cited(PUBLISHED_CAPS)
    assert set(PUBLISHED_CAPS) == set(KINDS)
    assert PUBLISHED_CAPS["generate"].tokens == 4096
    assert {PUBLISHED_CAPS[k].tokens for k in KINDS if k != "generate"} == {8000}


def test_reply_caps_follow_the_fields() -> None:
    cfg = AIIdeaBenchConfig(generation_max_tokens=700, judge_max_tokens=200, decomposition_max_tokens=600,
                            digest_max_tokens=400, keywords_max_tokens=100, concepts_max_tokens=150)
    assert [cfg.reply_cap(k) for k in KINDS] == [700, 600, 400, 200, 100, 150]
    assert [AIIdeaBenchConfig().reply_cap(k) for k in KINDS] == [768, 768, 512, 384, 200, 300]
    parity = AIIdeaBenchConfig(parity=True, judge_max_tokens=200)
    assert [parity.reply_cap(k) for k in KINDS] == [4096, 8000, 8000, 8000, 8000, 8000]


def test_each_step_sends_its_answer_cap_plus_the_reasoning_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, bodies = run_benchmark("aiideabench", tmp_path, monkeypatch, "--judge-max-tokens", "256")
    caps = sent_caps(out, bodies)
    assert caps["generate"] == {768 + BUDGET}
    assert caps["decompose_distractor"] == {768 + BUDGET}
    assert caps["imcq"] == caps["i2t"] == {256 + BUDGET}
    assert "?" not in caps
