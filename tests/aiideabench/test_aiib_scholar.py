"""Semantic Scholar failures in AI Idea Bench: an unreachable host is detected once and fast; one
failed request costs only the unit that needed it; citations are counted as far as S2 serves them.
A real loopback server stands in for S2 (recorded 400 body); the judge is scripted."""

from __future__ import annotations

import datetime as dt
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from ideaharness import arun
from ideaharness.benchmarks.aiideabench import AIIdeaBenchConfig
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.feasibility import feasibility_score
from ideaharness.runner.options import ExecutionOptions
from ideaharness.scholarly import SemanticScholar
from ideaharness.scholarly.s2 import PAPER_FIELDS
from ideaharness.testing.scholarly_replay import ReplayServer, Reply
from tests.aiideabench.test_aiib_pipeline import DATA, FIX, toy_embed
from tests.shared_data import RAW, need

IDEAS = str(FIX / "ai_scientist_ideas.json")
CUTOFF = dt.date(2023, 10, 3)


def recorded_400() -> Reply:
    """The real 400 Semantic Scholar returned for a parameter it does not serve (recorded)."""
    cassette = yaml.safe_load(need(RAW / "s2-api-recordings" / "test_bad_query_parameters.yaml").read_text())
    response = cassette["interactions"][0]["response"]
    assert response["status_code"] == 400
    return Reply(400, response["content"])


def judge() -> ScriptedModel:
    def reply(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if "atomic methods" in user:  # one concept per idea: attention ideas vs scribble ideas
            concept = "sparse attention" if "attention" in user else "scribble graphs"
            return json.dumps({"concepts": [concept]})
        if "search keywords" in user:
            return json.dumps({"keywords": ["attention"]})
        raise AssertionError(user[:200])

    return ScriptedModel(reply)


@pytest.fixture
def hanging_host() -> Iterator[tuple[str, list[int]]]:
    """A TCP listener on loopback that accepts connections and never answers (a dead service)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[int] = []
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            accepted.append(1)
            held.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}", accepted
    stop.set()
    thread.join(timeout=2)
    for conn in held:
        conn.close()
    listener.close()


async def test_unreachable_host_is_detected_once_and_every_literature_unit_skipped(
    tmp_path: Path, hanging_host: tuple[str, list[int]]
) -> None:
    url, accepted = hanging_host
    cfg = AIIdeaBenchConfig(data=DATA, judge="j", ideas=IDEAS, n_ideas=1, metrics=["novelty", "feasibility"],
                            scholar_base_url=url, bootstrap_resamples=20)
    judge_model = judge()
    res = await arun("aiideabench", config=cfg, options=ExecutionOptions(out=tmp_path / "run", limit=2,
                                                                         progress=False, timeout_s=1.0),
        judge=judge_model, embed_fn=toy_embed,
    )
    assert len(accepted) == 1  # one probe; no request per instance, no retry against a dead host
    assert not judge_model.calls  # no keyword or concept calls spent either
    assert "unreachable" in res["novelty"]["skipped"] and "unreachable" in res["feasibility"]["skipped"]
    units = res["failed_units"]
    assert res["status"] == "partial" and len(units) == 4  # NA and FA of 2 ideas
    assert {u["step"] for u in units} == {"novelty", "feasibility"}
    assert {u["status"] for u in units} == {"skipped"}
    assert res["novelty"]["skipped_units"] == 2 and res["feasibility"]["mean"] is None


def s2_server() -> ReplayServer:
    server = ReplayServer()
    search = "/graph/v1/paper/search"
    base = {"fields": PAPER_FIELDS, "offset": 0, "limit": 5, "publicationDateOrYear": f":{CUTOFF}"}
    found = [{"paperId": "P1", "title": "sparse attention at scale", "year": 2020},
             {"paperId": "P2", "title": "sparse attention, small", "year": 2021}]
    server.add_json("GET", search, {"data": found}, query={**base, "query": "sparse attention"})
    server.add("GET", search, recorded_400(), query={**base, "query": "scribble graphs"})  # fails for good
    cites = "/graph/v1/paper/{}/citations"
    page = {"fields": "year,publicationDate", "limit": 1000}
    first = [{"citingPaper": {"year": 2022 if i % 4 else 2023}} for i in range(1000)]
    server.add_json("GET", cites.format("P1"), {"offset": 0, "next": 1000, "data": first},
                    query={**page, "offset": 0})
    # past what S2 serves:
    server.add("GET", cites.format("P1"), recorded_400(), query={**page, "offset": 1000})
    server.add_json("GET", cites.format("P2"), {"offset": 0, "data": [{"citingPaper": {"year": 2023}}] * 10},
                    query={**page, "offset": 0})
    return server


async def test_a_400_past_the_served_citations_keeps_what_was_fetched_and_skips_only_failed_units(
    tmp_path: Path,
) -> None:
    cfg = AIIdeaBenchConfig(data=DATA, judge="j", ideas=IDEAS, n_ideas=1, metrics=["feasibility"],
                            bootstrap_resamples=20)
    with s2_server() as server:
        res = await arun("aiideabench", config=cfg.model_copy(update={"scholar_base_url": server.base_url}),
            options=ExecutionOptions(out=tmp_path / "run", limit=2, progress=False), judge=judge(),
            embed_fn=toy_embed,
        )
    fea = res["feasibility"]
    p1 = {2022: 750, 2023: 250}  # the 1,000 citations S2 served before its 400
    expected = feasibility_score([p1, {2023: 10}], CUTOFF.year, cfg.influence_lambda)
    assert fea["n"] == 1 and fea["mean"] == pytest.approx(expected) and fea["papers"] == 2
    assert len(fea["citation_notes"]) == 1 and "offset 1000" in fea["citation_notes"][0]
    [unit] = res["failed_units"]  # only the idea whose search S2 refused
    assert unit["step"] == "feasibility" and unit["instance_id"] == "aiib-1" and unit["status"] == "skipped"
    assert "HTTP 400" in unit["error"] and res["status"] == "partial"
    assert fea["skipped_units"] == 1 and "1 idea(s) skipped" in fea["skipped"]


async def test_citation_counts_stop_at_the_first_refused_page_with_a_note() -> None:
    with s2_server() as server:
        async with SemanticScholar(base_url=server.base_url, api_key="", min_interval_s=0,
                                   max_retries=0) as client:
            notes: list[str] = []
            counts = await client.citation_counts_by_year("P1", notes=notes)
            assert counts == {2022: 750, 2023: 250}
            assert len(notes) == 1 and "P1" in notes[0]
            assert "offset 1000" in notes[0] and "first 1000" in notes[0]
            refs = await client.citations("P1", fields="year,publicationDate")
            assert len(refs) == 1000
