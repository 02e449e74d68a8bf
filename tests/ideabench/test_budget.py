"""Bounds hold: one 10 MB reference abstract is cut to the prompt budget, with a recorded note
counted in results.json, and the two normal references stay in the prompt (IdeaBench over a real
loopback endpoint, through the Python API)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ideaharness
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.ideabench.conftest import ideabench_responder

HUGE = 10 * 1024 * 1024
CHARS_PER_TOKEN = 4  # ideaharness.prompts.CHARS_PER_TOKEN


def _instances(path: Path) -> Path:
    refs = [
        {"id": "r-huge", "title": "An endless abstract", "abstract": "interminable " * (HUGE // 13)},
        {"id": "r1", "title": "Normal one", "abstract": "NORMAL-ONE: thermoelectric gels conduct ions."},
        {"id": "r2", "title": "Normal two", "abstract": "NORMAL-TWO: redox couples raise thermopower."},
    ]
    inst = {"id": "big/1", "dataset": "test", "domain": "chemistry",
            "target": {"id": "t1", "title": "Target", "abstract": "We raise thermopower with a redox gel."},
            "references": refs, "ground_truth": {"idea": "Redox gels raise ionic thermopower."}}
    path.write_text(json.dumps(inst) + "\n", encoding="utf-8")
    return path


def test_a_10_mb_abstract_is_cut_and_the_other_references_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    respond = ideabench_responder()
    with OpenAICompatServer(lambda body: respond(body["messages"])) as srv:
        results = ideaharness.run(
            "ideabench", data=str(_instances(tmp_path / "big.jsonl")), generator="openai/m", judge="openai/m",
            base_url=srv.base_url, reference_filter="none", out=tmp_path / "run", use_cache=False,
            progress=False, max_prompt_tokens=6000,
        )
        prompts = [r.body["messages"] for r in srv.requests]
    generate = next(p for p in prompts if "holding exactly" in p[-1]["content"])
    size = sum(len(m["content"]) for m in generate)
    assert size <= 6000 * CHARS_PER_TOKEN  # was 10,486,703 characters
    user = generate[-1]["content"]
    assert "NORMAL-ONE: thermoelectric gels conduct ions." in user  # both normal references kept whole
    assert "NORMAL-TWO: redox couples raise thermopower." in user
    assert "[... truncated]" in user
    assert all(sum(len(m["content"]) for m in p) <= 6000 * CHARS_PER_TOKEN for p in prompts)
    record = next(json.loads(line)["data"] for line in (tmp_path / "run/records/generate_low.jsonl").open())
    assert record["references"] == ["r-huge", "r1", "r2"] and record["truncated"] is False
    [cut] = record["prompt_truncations"]
    assert cut["field"] == "abstract" and cut["chars"] >= HUGE - 13 and cut["kept_chars"] < 24_000
    assert results["truncated_texts"] == 1 and results["truncated_prompts"] == 1
    assert results["status"] == "complete"
    assert "cut to fit the prompt budget" in (tmp_path / "run/report.html").read_text()
