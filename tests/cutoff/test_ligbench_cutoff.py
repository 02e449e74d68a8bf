"""LigBench under the knowledge cutoff: corpus papers dated after an idea's cutoff are never
retrieved, shown to the judge (calibration, opponents) or used as novelty neighbours, and the
``--online`` Semantic Scholar search (a real loopback server) sends the cutoff and drops a later
paper the server returns anyway; both exclusions are counted. A real PAIR-IQ-format fixture corpus
(ICLR/NeurIPS 2024 and ICLR 2025 records), loopback OpenAI-compatible servers for the models."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ideaharness.testing.openai_server import OpenAICompatServer
from ideaharness.testing.scholarly_replay import ReplayServer, Reply
from tests.cli_support import run_cli
from tests.cutoff.support import covers, cutoff_records, prompt_texts, request_texts, results
from tests.ligbench.registry_fixtures import PAIRIQ, corpus, reply

LATER_S2 = "Concept rules for graph networks published after the cutoff"


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[OpenAICompatServer, ...]]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    with OpenAICompatServer(reply) as gen, OpenAICompatServer(reply) as judge:
        yield gen, judge


@covers("ligbench")
def test_corpus_and_online_search_end_at_the_idea_cutoff(
    servers: tuple[OpenAICompatServer, OpenAICompatServer], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gen, judge = servers
    later = [json.loads(x) for x in PAIRIQ.read_text().splitlines() if json.loads(x)["year"] == 2025]
    assert len(later) == 6
    searches: list[dict[str, Any]] = []

    def search(match: Any, query: dict[str, str], body: Any) -> Reply:
        searches.append(query)
        data = [{"paperId": "s1", "title": "Logic explanations of graph neural networks", "year": 2022,
                 "publicationDate": "2022-05-01", "abstract": "Rules over concepts explain GNNs."},
                {"paperId": "s9", "title": LATER_S2, "year": 2025, "publicationDate": "2025-02-01",
                 "abstract": "Later rules."}]
        return Reply(200, json.dumps({"total": 2, "offset": 0, "data": data}))

    with ReplayServer() as s2:
        s2.add_handler("GET", r"/graph/v1/paper/search", search)
        config = tmp_path / "config.json"
        config.write_text(json.dumps({"corpus": str(corpus(tmp_path)), "topics": ["Graph neural networks"],
                                      "scoring": {"scholar_base_url": s2.base_url}}))
        out = tmp_path / "run"
        code, _, err = run_cli(["run", "ligbench", "--config", str(config), "--generator", "openai/gen",
                             "--judge", "openai/judge", "--base-url", gen.base_url, "--judge-base-url",
                             judge.base_url, "--cutoff", "2024-12-31", "--max-retries", "0", "--no-progress",
                             "--consistency-sample", "0", "--out", str(out)], capsys)
    assert code in (0, 3), err
    assert searches and all(q.get("publicationDateOrYear") == ":2024-12-31" for q in searches)
    judged = request_texts(judge.requests)
    assert any("Compare Idea A and Idea B" in t for t in judged)
    for paper in later:
        assert not any(paper["title"] in t for t in [*judged, *prompt_texts(out)]), paper["title"]
    rows = {r["key"]: r["data"] for r in cutoff_records(out)}
    assert rows["corpus"]["excluded"] == 6 and rows["corpus"]["cutoff"] == "2024-12-31"
    assert {w["title"] for w in rows["corpus"]["excluded_works"]} == {p["title"] for p in later}
    assert all(w["year"] <= 2024 for w in rows["corpus"]["kept_works"]) and rows["corpus"]["kept_works"]
    assert rows["s2_search"]["excluded"] == 1 and rows["s2_search"]["excluded_works"][0]["id"] == "s9"
    lines = (out / "records" / "ligbench_novelty_search.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["data"]["paper_ids"] == ["s1"]
    leakage = results(out)["leakage"]
    assert leakage["excluded"]["corpus"]["excluded"] == 6
    assert leakage["excluded"]["s2_search"]["excluded"] == 1
    assert leakage["check"]["leaks"] == 0 and leakage["check"]["prompts_checked"] > 0


def test_an_idea_with_too_few_papers_before_its_cutoff_is_not_scored(
    servers: tuple[OpenAICompatServer, OpenAICompatServer], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every corpus paper is from 2024 or 2025: with a 2022 cutoff none may be used, so the idea is
    left unscored with its reason, never judged against later papers."""
    gen, judge = servers
    topics = tmp_path / "topics.txt"
    topics.write_text("Graph neural networks\n")
    out = tmp_path / "run"
    pairiq = str(corpus(tmp_path))  # a copy: the corpus's embeddings are written next to it
    code, _, err = run_cli(["run", "ligbench", "--corpus", pairiq, "--topics", str(topics), "--generator",
                         "openai/gen", "--judge", "openai/judge", "--base-url", gen.base_url,
                         "--judge-base-url", judge.base_url, "--cutoff", "2022-12-31", "--max-retries", "0",
                         "--no-progress", "--out", str(out)], capsys)
    assert code == 3, err  # nothing scored: the headline is not computed
    assert not any("Compare Idea A and Idea B" in t for t in request_texts(judge.requests))
    status = results(out)["systems"]
    assert any("too_few_references_before_cutoff" in json.dumps(s) for s in status.values())
    assert results(out)["leakage"]["excluded"]["corpus"] == {"kept": 0, "excluded": 20, "undated": 0}


async def test_a_scholarideas_plan_keeps_its_own_cutoff_unless_the_run_is_stricter(tmp_path: Path) -> None:
    """ScholarIdeas ships cutoff.txt per plan (ai_1: 2024-09-24): the plan is scored against the
    corpus before it (ICLR/NeurIPS 2024 records are of its year: kept, counted undated; ICLR 2025
    excluded); with --cutoff 2023-12-31 the stricter run cutoff applies to it."""
    from ideaharness import arun
    from ideaharness.benchmarks.ligbench import LigBenchConfig
    from ideaharness.data.scholarideas import bundled_root
    from ideaharness.llm.scripted import ScriptedModel
    from ideaharness.runner.options import ExecutionOptions
    from tests.ligbench.test_cli import _scripted_judge

    pairiq = str(corpus(tmp_path))  # a copy: the corpus's embeddings are written next to it
    cutoffs = {}
    for name, cutoff in (("own", None), ("stricter", "2023-12-31")):
        config = LigBenchConfig(judge="scripted/judge", corpus=pairiq, topics=[], scholarideas=1,
                                scholarideas_root=str(bundled_root()), cutoff=cutoff)
        out = tmp_path / name
        await arun("ligbench", config=config, options=ExecutionOptions(out=out, progress=False),
                   judge=ScriptedModel(_scripted_judge, model="scripted/judge"))
        rows = {r["key"]: r["data"] for r in cutoff_records(out) if r["instance_id"] == "scholarideas::ai_1"}
        cutoffs[name] = rows["corpus"]
    assert cutoffs["own"]["cutoff"] == "2024-09-24"
    assert cutoffs["own"]["excluded"] == 6 and cutoffs["own"]["undated"] == 14
    assert cutoffs["stricter"]["cutoff"] == "2023-12-31" and cutoffs["stricter"]["excluded"] == 20


def test_score_idea_takes_the_earlier_of_a_plans_cutoff_and_the_flag(
    servers: tuple[OpenAICompatServer, OpenAICompatServer], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from ideaharness.data.scholarideas import bundled_root

    _, judge = servers
    plan = bundled_root() / "ScholarIdeas" / "ai_1"  # cutoff.txt: 2024-09-24
    pairiq = str(corpus(tmp_path))  # a copy: the corpus's embeddings are written next to it
    seen = {}
    for name, extra in (("own", []), ("flag", ["--cutoff", "2023-12-31"])):
        out = tmp_path / name
        code, _, err = run_cli(["score-idea", str(plan), "--corpus", pairiq, "--judge", "openai/judge",
                             "--base-url", judge.base_url, "--max-retries", "0", "--out", str(out), *extra],
                            capsys)
        assert code in (0, 3), err
        seen[name] = {r["key"]: r["data"] for r in cutoff_records(out)}["corpus"]
    assert seen["own"]["cutoff"] == "2024-09-24" and seen["own"]["excluded"] == 6
    assert seen["flag"]["cutoff"] == "2023-12-31" and seen["flag"]["excluded"] == 20
