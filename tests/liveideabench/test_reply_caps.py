"""LiveIdeaBench's reply caps: each prompt kind's answer cap is a config field, the client adds the
role's reasoning budget, and ``--parity`` sends no cap at all, as the published code
(x66ccff/liveideabench@6fc8285:utils/LLM.py:172-176). Runs against real loopback servers."""

from __future__ import annotations

from pathlib import Path

import pytest

from ideaharness.benchmarks.liveideabench.config import PUBLISHED_CAPS, LiveIdeaBenchConfig
from tests.caps_support import BUDGET, assert_cited, run_benchmark, sent_caps


def test_published_caps_are_cited_and_cover_every_prompt_kind() -> None:
    assert_cited(PUBLISHED_CAPS)
    assert set(PUBLISHED_CAPS) == {"idea", "critique", "fluency"}
    assert all(c.tokens is None for c in PUBLISHED_CAPS.values())


def test_reply_cap_is_the_field_and_none_under_parity() -> None:
    cfg = LiveIdeaBenchConfig(generation_max_tokens=300, judge_max_tokens=700, fluency_max_tokens=24)
    assert [cfg.reply_cap(k) for k in ("idea", "critique", "fluency")] == [300, 700, 24]
    default = LiveIdeaBenchConfig()
    assert default.reply_cap("fluency") == 16  # one grade A-D
    parity = LiveIdeaBenchConfig(parity=True, fluency_max_tokens=24)
    assert [parity.reply_cap(k) for k in ("idea", "critique", "fluency")] == [None, None, None]
    with pytest.raises(KeyError):
        cfg.reply_cap("ranking")


def test_each_step_sends_its_answer_cap_plus_the_reasoning_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, bodies = run_benchmark("liveideabench", tmp_path, monkeypatch, "--fluency-max-tokens", "20")
    caps = sent_caps(out, bodies)
    assert caps == {"idea": {400 + BUDGET}, "critique": {500 + BUDGET}, "fluency": {20 + BUDGET}}
