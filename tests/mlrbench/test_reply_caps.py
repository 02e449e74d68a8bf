"""MLR-Bench's reply caps: idea, proposal and review answer caps are config fields, the client adds
the role's reasoning budget, and ``--parity`` sends the published code's caps
(chchenhui/mlrbench@806a203: idea 4,096, proposal 16,384, idea review 4,096, proposal review 8,192;
none for OpenAI o1/o3/o4 models) with no reasoning budget added. Runs against real loopback
servers."""

from __future__ import annotations

from pathlib import Path

import pytest

from ideaharness.benchmarks.mlrbench.config import PUBLISHED_CAPS, MLRBenchConfig
from tests.caps_support import BUDGET, assert_cited, run_benchmark, sent_caps

KINDS = ("idea", "proposal", "review/idea", "review/proposal")


def test_published_caps_are_cited() -> None:
    assert_cited(PUBLISHED_CAPS)
    assert {k: c.tokens for k, c in PUBLISHED_CAPS.items()} == {
        "idea": 4096, "proposal": 16384, "review/idea": 4096, "review/proposal": 8192}


def test_reply_caps_follow_the_fields_and_parity_the_published_client() -> None:
    cfg = MLRBenchConfig(idea_max_tokens=500, proposal_max_tokens=2500, judge_max_tokens=900)
    assert [cfg.reply_cap(k, "openai/o3-mini") for k in KINDS] == [500, 2500, 900, 900]
    parity = MLRBenchConfig(parity=True)
    assert [parity.reply_cap(k, "openai/gpt-4o") for k in KINDS] == [4096, 16384, 4096, 8192]
    assert [parity.reply_cap(k, "anthropic/claude-3-7-sonnet") for k in KINDS] == [4096, 16384, 4096, 8192]
    # the published OpenAI client sends no max_tokens to o1/o3/o4 models (mlrbench/llm/llm.py:124-128)
    for model in ("openai/o1", "openai/o3-mini", "openai/o4-mini-2025-04-16"):
        assert [parity.reply_cap(k, model) for k in KINDS] == [None] * 4
    assert parity.reply_cap("idea", "local/o3-like") == 4096  # the rule is the OpenAI client's only


def test_each_step_sends_its_answer_cap_plus_the_reasoning_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, bodies = run_benchmark("mlrbench", tmp_path, monkeypatch, "--idea-max-tokens", "500")
    caps = sent_caps(out, bodies)
    assert caps == {"idea": {500 + BUDGET}, "proposal": {3000 + BUDGET}, "review/idea": {1500 + BUDGET},
                    "review/proposal": {1500 + BUDGET}}
