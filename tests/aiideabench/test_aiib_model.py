"""End to end on the bundled TOMATO-Chem data with the real embedded 0.5B model (slow: marked model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ideaharness import arun
from ideaharness.benchmarks.aiideabench import AIIdeaBenchConfig
from ideaharness.runner.options import ExecutionOptions

MODEL = "local/qwen2.5-coder-0.5b"


@pytest.mark.model
async def test_tomato_end_to_end_with_local_model(tmp_path: Path) -> None:
    cfg = AIIdeaBenchConfig(
        data="tomato-chem", generator=MODEL, judge=MODEL, n_ideas=1, metrics=["imcq", "i2t"],
        decomposition_max_tokens=400, generation_max_tokens=320, judge_max_tokens=80,
        bootstrap_resamples=20,
    )
    options = ExecutionOptions(out=tmp_path / "run", limit=1, cache_path=tmp_path / "cache.sqlite",
                               progress=False, max_attempts=1)
    res = await arun("aiideabench", config=cfg, options=options)
    records = tmp_path / "run" / "records"
    decomposition = json.loads((records / "decompose.jsonl").read_text().splitlines()[0])["data"]["judgment"]
    assert decomposition["judge_model"] == MODEL and decomposition["raw_text"]
    if decomposition["parse_ok"]:
        # ground truth exists -> both IMCQ questions were built with the ground truth among 4 options,
        # or not asked because a distractor paper's decomposition failed (counted)
        lines = (records / "imcq_question.jsonl").read_text().splitlines()
        questions = [json.loads(x)["data"] for x in lines]
        assert len(questions) == 2
        for q in questions:
            if "skipped" in q:
                assert q["skipped"] == "distractor decomposition failed"
                continue
            assert len(q["question"]["options"]) == 4 and q["question"]["sources"].count("ground_truth") == 1
        assert res["topic"]["sources"] == {"anonymised": 1}
    else:  # no ground truth and no anonymised topic: nothing generated, both counted
        assert res["instances_without_ground_truth"] == 1
        assert res["topic"]["generation_skipped_no_topic"] == 1
    # every I2T judgment either parsed into ratings on the 1-5 scale or is counted as a parse failure
    path = records / "i2t.jsonl"
    text = path.read_text() if path.exists() else ""
    judgments = [json.loads(x)["data"]["judgment"] for x in text.splitlines()]
    assert sum(not j["parse_ok"] for j in judgments) == res["i2t"]["motivation"]["parse_failures"]
    for j in judgments:
        if j["parse_ok"]:
            assert all(1 <= v <= 5 for v in j["parsed"].values())
    ideas = res["ideas"]
    assert len(judgments) == ideas
    assert res["i2t"]["motivation"]["n"] == (1 if ideas and judgments[0]["parse_ok"] else 0)
    assert (tmp_path / "run" / "report.html").exists()
    assert res["llm_stats"]["generator"]["calls"] >= (2 if decomposition["parse_ok"] else 1)
