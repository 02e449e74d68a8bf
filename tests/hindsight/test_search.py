"""HindSight's key-phrase searches through the command line against Semantic Scholar emulated on
127.0.0.1 over recorded real records (``ideaharness.testing.s2_emulator``), and a loopback
OpenAI-compatible model: a refused search page (HTTP 500 after the client's retries) is a skipped
unit, counted, and the run partial (exit 3); the same command resumes it; a service that ignores
the date window returns a paper dated before the cutoff, which is excluded and counted."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ideaharness.testing.openai_server import OpenAICompatServer
from ideaharness.testing.s2_emulator import S2Emulator
from ideaharness.testing.scholarly_replay import ReplayServer, Reply
from tests.cli_support import cli_output as cli
from tests.hindsight.support import (
    LLM_POOL,
    SIMULATE,
    SURVEY,
    raw_records,
    scenario_topics,
    server_reply,
    write_topics,
)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "S2_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def args(tmp_path: Path, llm: str, s2: str) -> list[str]:
    topics = scenario_topics(pool_before=False)[:1]
    topics[0]["future"] = []  # every candidate comes from the search
    data = write_topics(tmp_path / "topics.jsonl", topics)
    return ["run", "hindsight", "--data", str(data), "--generator", "openai/gen", "--judge", "openai/judge",
            "--base-url", llm, "--search", "s2", "--scholar-base-url", s2, "--search-limit", "10",
            "--bootstrap-resamples", "50", "--max-retries", "0", "--no-progress",
            "--out", str(tmp_path / "run")]


def test_a_refused_search_page_is_counted_the_run_partial_and_a_rerun_resumes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], env: None) -> None:
    emulator = S2Emulator(raw_records([*LLM_POOL, SIMULATE]), {})
    refuse = {"on": True}
    asked: list[str] = []

    def search(match: re.Match[str], query: dict[str, str], body: Any) -> Reply:
        asked.append(query.get("query", ""))
        if refuse["on"] and "soil" in query.get("query", ""):  # the unrelated idea's key words
            return Reply(500, json.dumps({"message": "Internal Server Error"}))
        return emulator._search(match, query, body)

    with OpenAICompatServer(server_reply([SURVEY])) as llm, ReplayServer() as s2:
        s2.add_handler("GET", r"/graph/v1/paper/search", search)
        emulator.mount(s2)
        code, err = cli(args(tmp_path, llm.base_url, s2.base_url), capsys)
        assert code == 3, err
        results = json.loads((tmp_path / "run" / "results.json").read_text())
        assert results["status"] == "partial"
        failed = [u for u in results["failed_units"] if u["step"] == "candidates"]
        assert [(u["instance_id"], u["key"], u["status"]) for u in failed] == [("llm", "1", "skipped")]
        assert "500" in failed[0]["error"]
        assert results["counts"]["ideas_no_candidates"] == 1
        assert next(i for i in results["per_idea"] if i["idea_id"] == "llm/1")["status"] == "no candidates"
        assert next(i for i in results["per_idea"] if i["idea_id"] == "llm/0")["status"] == "matched"
        generated = sum(1 for r in llm.requests if "idea number" in r.body["messages"][-1]["content"])
        assert generated == 3

        refuse["on"] = False
        before = len(llm.requests)
        asked.clear()
        code, err = cli(args(tmp_path, llm.base_url, s2.base_url), capsys)
        assert code == 0, err
        again = json.loads((tmp_path / "run" / "results.json").read_text())
        assert again["status"] == "complete" and not again["failed_units"]
        assert again["counts"]["ideas_no_candidates"] == 0
        assert next(i for i in again["per_idea"] if i["idea_id"] == "llm/1")["status"] == "unmatched"
        new = [r.body["messages"][-1]["content"] for r in llm.requests[before:]]
        assert not any("idea number" in text for text in new), "a generation was asked again"
        assert asked and all("soil" in q for q in asked), "a search that succeeded was asked again"


def test_a_paper_before_the_cutoff_from_a_service_that_ignores_the_window_is_excluded(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], env: None) -> None:
    records = raw_records([SIMULATE, SURVEY])

    def ignoring(match: re.Match[str], query: dict[str, str], body: Any) -> Reply:
        assert query.get("publicationDateOrYear") == "2022-12-01:2025-05-30"  # the window was sent
        return Reply(200, json.dumps({"total": 2, "offset": 0, "data": records}))

    with OpenAICompatServer(server_reply([SURVEY, SIMULATE])) as llm, ReplayServer() as s2:
        s2.add_handler("GET", r"/graph/v1/paper/search", ignoring)
        code, err = cli(args(tmp_path, llm.base_url, s2.base_url), capsys)
    assert code == 0, err
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    window = results["window"]["sources"]["s2_search"]
    assert window["before"] >= 1 and window["in"] >= 1 and window["after"] == 0
    judged = [json.loads(line)["data"]["paper_id"] for line in
              (tmp_path / "run" / "records" / "match.jsonl").read_text().splitlines()]
    assert SURVEY in judged and SIMULATE not in judged
    restating = next(i for i in results["per_idea"] if i["idea_id"] == "llm/2")  # restates SIMULATE
    assert restating["status"] != "matched"
    assert results["leakage"]["check"]["leaks"] == 0
    excluded = results["leakage"]["excluded"]["s2_search"]
    assert excluded["excluded"] == window["before"]
