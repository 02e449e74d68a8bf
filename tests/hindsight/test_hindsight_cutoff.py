"""HindSight under the knowledge cutoff: with ``--cutoff`` before a topic's own T, the literature
between the two never reaches the generator (prompt or request), the exclusion is counted, the
window moves with T (the key-phrase searches ask for it), and the leakage check finds 0 leaks, as
``ideaharness check leakage`` on the saved run."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ideaharness.runner.leakage import check_run
from ideaharness.testing.openai_server import OpenAICompatServer
from ideaharness.testing.s2_emulator import S2Emulator
from ideaharness.testing.scholarly_replay import ReplayServer, Reply
from tests.cli_support import run_cli
from tests.cutoff.support import covers, cutoff_records, request_texts, results, step_prompts
from tests.hindsight.support import (
    LLM_POOL,
    SURVEY,
    papers,
    raw_records,
    recorded,
    scenario_topics,
    server_reply,
    write_topics,
)

PLAGIARISM = "f158e70e9ead719e8a524eaf8ec79270574f2eda"  # literature of 2022-10-07
POORLY = "5c02d55fe14e2baf4b6b59a476ee6a20698397ef"  # literature of 2022-10-19
ELITE = "7f84d56fb8feb4e50cd6c3da3e3fd4ff6c4772cf"  # literature of 2022-05-03


@covers("hindsight")
def test_literature_after_the_run_cutoff_never_reaches_the_generator(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    topic = scenario_topics(pool_before=False)[0]
    topic["future"] += papers([POORLY])  # the pool reaches back before T: it covers the earlier window
    data = write_topics(tmp_path / "topics.jsonl", [topic])
    windows: list[str] = []
    emulator = S2Emulator(raw_records(LLM_POOL), {})

    def search(match: re.Match[str], query: dict[str, str], body: Any) -> Reply:
        windows.append(query.get("publicationDateOrYear", ""))
        return emulator._search(match, query, body)

    out = tmp_path / "run"
    with OpenAICompatServer(server_reply([SURVEY])) as llm, ReplayServer() as s2:
        s2.add_handler("GET", r"/graph/v1/paper/search", search)
        code, _, err = run_cli(["run", "hindsight", "--data", str(data), "--cutoff", "2022-10-01",
                             "--generator", "openai/gen", "--judge", "openai/judge", "--base-url",
                             llm.base_url, "--search", "s2", "--scholar-base-url", s2.base_url,
                             "--bootstrap-resamples", "50", "--no-progress", "--max-retries", "0",
                             "--out", str(out)], capsys)
        generation = [t for t in request_texts(llm.requests) if "idea number" in t]
    assert code in (0, 3), err
    later = [recorded()[p].title for p in (PLAGIARISM, POORLY)]  # after 2022-10-01, before the topic's T
    prompts = step_prompts(out, "generate")
    assert prompts and generation
    assert all(title not in text for title in later for text in [*prompts, *generation])
    assert all(recorded()[ELITE].title in text for text in prompts)  # what may be shown is shown
    literature = next(r["data"] for r in cutoff_records(out) if r["key"] == "literature")
    assert literature["cutoff"] == "2022-10-01" and literature["excluded"] == 3  # 2 of Oct-Nov, 1 of 2023
    assert windows and set(windows) == {"2022-10-02:2025-04-01"}  # the window of the effective T
    saved = results(out)
    assert saved["per_topic"]["llm"]["cutoff"] == "2022-10-01"
    assert saved["leakage"]["check"]["leaks"] == 0
    assert saved["leakage"]["excluded"]["literature"]["excluded"] == 3
    assert check_run(out)["check"] == saved["leakage"]["check"]  # ideaharness check leakage RUN_DIR
