"""The reference-rewrite step with the real embedded 0.5B model: its replies are read, what parses
carries none of the cues of the published text, and what fails is refused by a named check after
every attempt (recorded, never shown raw). Slow: marked model."""

from __future__ import annotations

from pathlib import Path

import pytest

from ideaharness.benchmarks._blinding import rewrite_reference, rewritten
from ideaharness.benchmarks.ideabench.blinding import idea_form
from ideaharness.data.tomato import load_tomato_chem
from ideaharness.llm import get_llm
from ideaharness.metrics.surface import measured_results, reference_lead, self_references, word_count
from ideaharness.runner.steps import StepRunner
from ideaharness.runs.store import RunStore

MODEL = "local/qwen2.5-coder-0.5b"
# generated ideas of typical lengths (40-70 words) set the bounds, as in an IdeaBench run
IDEAS = [" ".join(["word"] * n) for n in (40, 55, 70)]


@pytest.mark.model
async def test_the_05b_model_rewrites_tomato_ground_truths_into_clean_ideas(tmp_path: Path) -> None:
    model = get_llm(MODEL, cache_path=tmp_path / "cache.sqlite")
    steps = StepRunner(RunStore(tmp_path / "run", {"test": "rewrite"}), max_attempts=3, progress=False)
    truths = [i for i in load_tomato_chem() if reference_lead(i.ground_truth.idea or "")][:4]
    records = [await rewrite_reference(steps, model, "rewrite", inst.id, inst.ground_truth.idea or "",
                                       idea_form(IDEAS, inst.ground_truth.idea or "")) for inst in truths]
    assert all(r is not None for r in records)
    parsed = [rewritten(r) for r in records]
    # the 0.5B model passes the check for about 2 in 5 TOMATO-Chem ground truths (2 of these 4 when
    # recorded; 5 of 13 in tests/blinding/fixtures): the rest stay too short or keep a measured value
    assert any(p is not None for p in parsed), [r["judgment"]["errors"] for r in records if r]
    for fields, rec in zip(parsed, records, strict=True):
        if fields is None or rec is None:
            continue
        text, bounds = fields["idea"], rec["form"]["fields"][0]
        assert rec["rewriter"] == MODEL
        assert bounds["min_words"] <= word_count(text) <= bounds["max_words"]
        assert not (reference_lead(text) or self_references(text) or measured_results(text))
    checks = ("words, fewer than", "words, more than", "quotes measured results", "claims findings",
              "refers to a publication", "opens like a paper's summary", "is empty")
    for r in records:
        assert r is not None and r["original"] and r["judgment"]["raw_text"]
        if not r["judgment"]["parse_ok"]:
            assert r["judgment"]["attempts"] == 3 and r["judgment"]["parsed"] is None
            assert all(any(c in e for c in checks) for e in r["judgment"]["errors"]), r["judgment"]["errors"]
