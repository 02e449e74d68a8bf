"""IdeaBench's reply caps: each prompt kind's answer cap is a config field (a ranking's grows with
the ideas ranked), the client adds the role's reasoning budget, and ``--parity`` sends no cap, as
the published code (langchain ``ChatOpenAI(model=...)`` without ``max_tokens``,
amir-hassan25/IdeaBench@9dbd125). Runs against real loopback servers."""

from __future__ import annotations

from pathlib import Path

import pytest

from ideaharness.benchmarks.ideabench.config import PUBLISHED_CAPS, IdeaBenchConfig
from tests.caps_support import BUDGET, assert_cited, run_benchmark, sent_caps


def test_published_caps_are_cited_and_send_nothing() -> None:
    assert_cited(PUBLISHED_CAPS)
    assert set(PUBLISHED_CAPS) == {"target_idea", "generate", "overlap", "rank"}
    assert all(c.known and c.tokens is None for c in PUBLISHED_CAPS.values())


def test_reply_caps_follow_the_fields_and_their_automatic_sizes() -> None:
    cfg = IdeaBenchConfig(n_ideas=4)
    assert cfg.reply_cap("generate") == 80 + 220 * 4
    assert (cfg.reply_cap("target_idea"), cfg.reply_cap("overlap")) == (400, 300)
    assert cfg.rank_cap(5) == 120 + 40 * 5
    set_ = IdeaBenchConfig(generation_max_tokens=900, target_idea_max_tokens=250, overlap_max_tokens=64,
                           rank_max_tokens=500)
    assert [set_.reply_cap(k) for k in ("generate", "target_idea", "overlap")] == [900, 250, 64]
    assert set_.rank_cap(5) == 500
    parity = IdeaBenchConfig(parity=True, rank_max_tokens=500)
    assert [parity.reply_cap(k) for k in ("generate", "target_idea", "overlap")] == [None, None, None]
    assert parity.rank_cap(4) is None


def test_each_step_sends_its_answer_cap_plus_the_reasoning_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, bodies = run_benchmark("ideabench", tmp_path, monkeypatch, "--overlap-max-tokens", "120")
    caps = sent_caps(out, bodies)
    ranked = 1 + IdeaBenchConfig().n_ideas  # the target and the ideas
    assert caps["generate/low"] == {80 + 220 * 3 + BUDGET}
    assert caps["overlap/low"] == {120 + BUDGET}
    assert caps["rank/low/novelty"] == caps["rank/low/feasibility"] == {120 + 40 * ranked + BUDGET}
    [rewrite] = caps["rewrite/low"]  # the blind ranking's target rewrite: 64 + 2 per word of its form
    assert isinstance(rewrite, int) and rewrite > 64 + BUDGET
    assert "?" not in caps
