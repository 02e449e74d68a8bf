"""LigBench's reply caps: the generator's and each judge prompt's answer cap are settings
(``--free-text`` adds room for the reasoning the prompts ask to write), the client adds the role's
reasoning budget, and ``--parity`` keeps them: LigBench's code is not released, so there is no
published cap to send. A run recorded before the caps were settings resumes (its ``scoring``
compares equal). Runs against real loopback servers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ideaharness.benchmarks.ligbench.config import LigBenchConfig
from ideaharness.benchmarks.ligbench.judge_eval import JudgeAccuracyConfig
from ideaharness.benchmarks.ligbench.steps import CAP_FIELDS, FREE_TEXT_EXTRA_TOKENS, ScoringSettings
from tests.caps_support import BUDGET, run_benchmark, sent_caps


def test_caps_are_settings_and_free_text_adds_room() -> None:
    s = ScoringSettings()
    assert [s.reply_cap(k) for k in ("formalize", "initial_score", "compare")] == [700, 200, 400]
    free = ScoringSettings(structured_output=False, compare_max_tokens=300, free_text_extra_tokens=100)
    assert free.reply_cap("compare") == 400 and free.reply_cap("formalize") == 700 + 100
    assert ScoringSettings(structured_output=False).reply_cap("initial_score") == 200 + FREE_TEXT_EXTRA_TOKENS
    judge = JudgeAccuracyConfig(corpus="c.jsonl")
    assert (judge.compare_max_tokens, judge.free_text_extra_tokens) == (400, FREE_TEXT_EXTRA_TOKENS)


def test_default_caps_are_not_recorded_so_an_old_run_resumes() -> None:
    old = json.loads(ScoringSettings().model_dump_json())
    assert not set(CAP_FIELDS) & set(old)  # the scoring block of a run recorded before issue 21
    assert ScoringSettings.model_validate(old) == ScoringSettings()
    set_ = ScoringSettings(compare_max_tokens=512).model_dump(mode="json")
    assert set_["compare_max_tokens"] == 512 and "formalize_max_tokens" not in set_
    assert ScoringSettings.model_validate(set_).compare_max_tokens == 512
    cfg = LigBenchConfig(corpus="c.jsonl", scoring=ScoringSettings(compare_max_tokens=512))
    assert cfg.model_dump(mode="json")["scoring"]["compare_max_tokens"] == 512


def test_each_step_sends_its_answer_cap_plus_the_reasoning_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, bodies = run_benchmark("ligbench", tmp_path, monkeypatch, "--compare-max-tokens", "350")
    caps = sent_caps(out, bodies)
    assert caps["ligbench/generate"] == caps["ligbench/formalize"] == {700 + BUDGET}
    assert caps["ligbench/initial_score"] == {200 + BUDGET}
    assert caps["ligbench/compare"] == {350 + BUDGET}
    assert "?" not in caps
    config = json.loads((out / "config.json").read_text())
    assert config["scoring"]["compare_max_tokens"] == 350



def test_judge_accuracy_sends_its_compare_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, bodies = run_benchmark("ligbench-judge", tmp_path, monkeypatch, "--free-text",
                                "--compare-max-tokens", "300", "--free-text-extra-tokens", "50")
    assert sent_caps(out, bodies) == {"ligbench/judge_pair": {300 + 50 + BUDGET}}
