"""HindSight with OpenAlex: ``data build hindsight --source openalex`` and ``run hindsight --search
openalex`` against an OpenAlex ``/works?search=`` endpoint emulated on 127.0.0.1 over the recorded
real Semantic Scholar records (each served as an OpenAlex work: ``id``, ``title``,
``publication_date``, ``publication_year``, ``cited_by_count``, ``abstract_inverted_index``), with
the ``from_publication_date`` / ``to_publication_date`` filter applied as OpenAlex applies it."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import pytest

from ideaharness.benchmarks.hindsight.topics import load_topics, window_place
from ideaharness.cutoff import verdict
from ideaharness.testing.openai_server import OpenAICompatServer
from ideaharness.testing.scholarly_replay import ReplayServer, Reply
from tests.cli_support import cli_output as cli
from tests.hindsight.support import SURVEY, scenario_topics, server_reply, write_topics
from tests.shared_data import RAW, need


def _work(paper: dict[str, Any]) -> dict[str, Any]:
    words = (paper.get("abstract") or "").split()
    index: dict[str, list[int]] = {}
    for i, word in enumerate(words):
        index.setdefault(word, []).append(i)
    return {"id": f"https://openalex.org/W{paper['corpusId']}", "title": paper["title"],
            "publication_date": paper.get("publicationDate"), "publication_year": paper.get("year"),
            "cited_by_count": paper.get("citationCount"), "abstract_inverted_index": index or None,
            "type": "article"}


def works_endpoint(asked: list[dict[str, str]]) -> Any:
    data = json.loads(need(RAW / "s2-api-recordings" / "Paper.json").read_text(encoding="utf-8"))
    works = [_work(p) for p in data["citations"] if p.get("corpusId") and p.get("publicationDate")]

    def handler(match: re.Match[str], query: dict[str, str], body: Any) -> Reply:
        asked.append(query)
        terms = set(re.findall(r"\w\w+", query.get("search", "").lower()))
        low = re.search(r"from_publication_date:([\d-]+)", query.get("filter", ""))
        high = re.search(r"to_publication_date:([\d-]+)", query.get("filter", ""))
        hits = []
        for w in works:
            day = w["publication_date"]
            if (low and day < low.group(1)) or (high and day > high.group(1)):
                continue
            text = f"{w['title']} {' '.join(w['abstract_inverted_index'] or {})}".lower()
            shared = len(terms & set(re.findall(r"\w\w+", text)))
            if shared:
                hits.append((-shared, -(w["cited_by_count"] or 0), w["id"], w))
        hits.sort(key=lambda t: t[:3])
        per, page = int(query.get("per-page", 25)), int(query.get("page", 1))
        chosen = [t[3] for t in hits[(page - 1) * per: page * per]]
        return Reply(200, json.dumps({"meta": {"count": len(hits)}, "results": chosen}))

    return handler


def test_topics_built_from_openalex(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENALEX_API_KEY", raising=False)
    asked: list[dict[str, str]] = []
    with ReplayServer() as server:
        server.add_handler("GET", r"/works", works_endpoint(asked))
        code, err = cli(["data", "build", "hindsight", "--topic", "Chatbots in education", "--cutoff",
                         "2022-11-30", "--source", "openalex", "--n-literature", "5", "--n-future", "20",
                         "--openalex-base-url", server.base_url, "--min-interval", "0",
                         "--out", str(tmp_path / "out")], capsys)
    assert code == 0, err
    topic = load_topics(str(tmp_path / "out" / "topics.jsonl"))[0]
    cutoff = dt.date(2022, 11, 30)
    assert len(topic.literature) == 5 and len(topic.future) == 20
    assert all(verdict(p, cutoff) == "before" for p in topic.literature)
    assert topic.window_end is not None
    assert all(window_place(p, cutoff, topic.window_end) == "in" for p in topic.future)
    assert {q["filter"] for q in asked} == {"to_publication_date:2022-11-30",
                                            "from_publication_date:2022-12-01,to_publication_date:2025-05-30"}


def test_a_run_searches_openalex_in_the_window(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENALEX_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    topics = scenario_topics(pool_before=False)[:1]
    topics[0]["future"] = []
    data = write_topics(tmp_path / "topics.jsonl", topics)
    asked: list[dict[str, str]] = []
    with OpenAICompatServer(server_reply([SURVEY])) as llm, ReplayServer() as oa:
        oa.add_handler("GET", r"/works", works_endpoint(asked))
        code, err = cli(["run", "hindsight", "--data", str(data), "--generator", "openai/gen", "--judge",
                         "openai/judge", "--base-url", llm.base_url, "--search", "openalex",
                         "--openalex-base-url", oa.base_url, "--bootstrap-resamples", "50", "--no-progress",
                         "--max-retries", "0", "--out", str(tmp_path / "run")], capsys)
    assert code == 0, err
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    assert asked and all(q["filter"] == "from_publication_date:2022-12-01,to_publication_date:2025-05-30"
                         for q in asked)
    assert results["window"]["sources"]["openalex_search"]["in"] > 0
    survey = next(i for i in results["per_idea"] if i["idea_id"] == "llm/0")
    assert survey["status"] == "matched"
    assert survey["best_match"]["title"] == "A Survey of Large Language Models"
    assert survey["best_match"]["sources"] == ["openalex_search"]
