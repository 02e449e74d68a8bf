"""AI Idea Bench under the knowledge cutoff: an inspiration dated after the instance's cutoff is
never shown to the generator; NA's historical search and FA's concept searches send the cutoff to
Semantic Scholar (a real loopback server) AND drop a paper dated after it that the server returns
anyway (counted; its citations are never fetched); NA's contemporary search is the declared future
window. Scripted models (no LLM), a toy embedding."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ideaharness import arun
from ideaharness.benchmarks.aiideabench import AIIdeaBenchConfig
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.runner.options import ExecutionOptions
from ideaharness.scholarly.s2 import PAPER_FIELDS
from ideaharness.testing.scholarly_replay import ReplayServer
from tests.aiideabench.test_aiib_pipeline import responder, toy_embed
from tests.cutoff.support import covers, cutoff_records, prompt_texts, results, step_prompts

CUTOFF = dt.date(2023, 10, 3)
NEW_INSPIRATION = "Retrieval heads explain long context factuality"
LEAKED_HISTORICAL = "Attention sinks stream infinite context"
LEAKED_CONCEPT = "Sparse attention kernels revisited after the cutoff"


def _instances(path: Path) -> Path:
    rows = []
    for i in range(2):
        refs = [{"id": f"old{i}", "title": f"Longformer style sparse attention {i}", "year": 2021,
                 "abstract": "Sparse attention for long documents."},
                {"id": f"new{i}", "title": f"{NEW_INSPIRATION} {i}", "publication_date": "2024-01-15",
                 "year": 2024, "abstract": "Some heads retrieve facts from long contexts."}]
        rows.append({"id": f"i{i}", "dataset": "cutoff-test", "research_question": "How can attention scale "
                     "to long documents?", "knowledge_cutoff": CUTOFF.isoformat(), "references": refs,
                     "target": {"id": f"t{i}", "title": f"Efficient attention for long documents {i}",
                                "abstract": "Block sparse attention with memory tokens.",
                                "publication_date": "2024-02-01", "year": 2024}})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _paper(pid: str, title: str, date: str) -> dict[str, Any]:
    return {"paperId": pid, "title": title, "abstract": f"{title} abstract about attention",
            "year": int(date[:4]), "publicationDate": date, "citationCount": 7}


def _s2() -> ReplayServer:
    """Semantic Scholar on loopback: each search answers for its own date window, but the historical
    and the concept searches also return one paper dated after the cutoff (a service that rounds or
    ignores the filter)."""
    server = ReplayServer()
    search = "/graph/v1/paper/search"
    base = {"fields": PAPER_FIELDS, "offset": 0, "limit": 5}
    before = (CUTOFF - dt.timedelta(days=1)).isoformat()
    server.add_json("GET", search, {"data": [_paper("h1", "Attention is all you need", "2017-06-12"),
                                             _paper("hx", LEAKED_HISTORICAL, "2023-11-20")]},
                    query={**base, "query": "attention", "publicationDateOrYear": f":{before}"})
    server.add_json("GET", search, {"data": [_paper("c1", "Contemporary attention study", "2024-01-01"),
                                             _paper("cx", "An older paper in the window", "2022-01-01")]},
                    query={**base, "query": "attention", "publicationDateOrYear": f"{CUTOFF}:"})
    server.add_json("GET", search, {"data": [_paper("f1", "Sparse transformers", "2019-04-23"),
                                             _paper("fx", LEAKED_CONCEPT, "2024-05-05")]},
                    query={**base, "query": "sparse attention", "publicationDateOrYear": f":{CUTOFF}"})
    server.add_json("GET", "/graph/v1/paper/f1/citations", {"data": [{"citingPaper": {"year": 2023}}] * 3},
                    query={"fields": "year,publicationDate", "offset": 0, "limit": 1000})
    return server


def _responder() -> Any:
    """The pipeline's scripted replies, but a decomposition that does not restate the target's title
    in its topic (the scripted one does: the leakage check rightly flags that title in a prompt)."""
    base = responder()

    def reply(messages: list[dict[str, str]]) -> str:
        if "Break the research below" in messages[-1]["content"]:
            return json.dumps({
                "topic": "The topic of this paper is making attention scale to long inputs.",
                "motivation": "Attention cost grows with length; long inputs need a cheaper mechanism that "
                              "keeps the global context a model needs.",
                "experiment_plan": "Setup: build the mechanism.\nEvaluation: compare it with baselines on "
                                   "long-input benchmarks."})
        return base(messages)

    return reply


@covers("aiideabench")
async def test_inspirations_and_searches_end_at_the_cutoff(tmp_path: Path) -> None:
    data = _instances(tmp_path / "instances.jsonl")
    out = tmp_path / "run"
    with _s2() as server:
        cfg = AIIdeaBenchConfig(data=str(data), generator="scripted/gen", judge="scripted/judge", n_ideas=1,
                                metrics=["novelty", "feasibility"], digest_inspirations=True,
                                scholar_base_url=server.base_url, bootstrap_resamples=20)
        gen = ScriptedModel(_responder())
        await arun("aiideabench", config=cfg, options=ExecutionOptions(out=out, progress=False),
                   generator=gen, judge=ScriptedModel(_responder()), embed_fn=toy_embed)
        searches = [dict(parse_qsl(urlsplit(key[1]).query)) | dict(key[2]) for key, _ in server.log
                    if key[1].endswith("/paper/search")]
        fetched = [key[1] for key, _ in server.log]
    # every search sent its date bound; the leaked concept paper's citations were never fetched
    assert searches and all("publicationDateOrYear" in q for q in searches)
    assert not any("/paper/fx/" in p for p in fetched) and any("/paper/f1/citations" in p for p in fetched)
    # the later inspiration reached neither the generator nor the digests
    shown = [m[-1]["content"] for m, _ in gen.calls]
    assert shown and all(NEW_INSPIRATION not in t for t in shown)
    assert any("Longformer style sparse attention" in t for t in step_prompts(out, "generate"))
    assert not any(NEW_INSPIRATION in t for t in prompt_texts(out))
    # the literature records hold no paper from after the cutoff on the historical side
    lit = [json.loads(x)["data"] for x in (out / "records" / "literature.jsonl").read_text().splitlines()]
    assert lit and all({p["paperId"] if "paperId" in p else p["id"] for p in r["historical"]} == {"h1"}
                       for r in lit)
    assert all({p["id"] for p in r["contemporary"]} == {"c1"} for r in lit)  # the window's own floor
    fa = [json.loads(x)["data"] for x in (out / "records" / "feasibility.jsonl").read_text().splitlines()]
    assert fa and all({p["paper_id"] for p in r["papers"]} == {"f1"} for r in fa)
    rows = {(r["instance_id"], r["key"]): r["data"] for r in cutoff_records(out)}
    assert rows[("i0", "s2_search_historical")]["excluded"] == 1
    assert rows[("i0", "s2_search_historical")]["window"] == [None, "2023-10-02"]
    assert rows[("i0", "s2_search_contemporary")]["window"] == ["2023-10-03", None]
    leakage = results(out)["leakage"]
    assert leakage["excluded"]["inspirations"]["excluded"] == 2
    assert leakage["excluded"]["s2_search_historical"] == {"kept": 2, "excluded": 2, "undated": 0}
    assert leakage["excluded"]["s2_search_feasibility"] == {"kept": 2, "excluded": 2, "undated": 0}
    assert leakage["excluded"]["s2_search_contemporary"]["excluded"] == 2  # dated before the window
    assert leakage["check"]["leaks"] == 0 and leakage["check"]["prompts_checked"] >= 2


async def test_a_topic_restating_the_target_title_is_reported(tmp_path: Path) -> None:
    """The pipeline's scripted decomposition restates the target's title (dated after the cutoff) in
    the topic shown to the generator: the leakage check, reading the recorded prompts, reports it."""
    data = _instances(tmp_path / "instances.jsonl")
    out = tmp_path / "run"
    cfg = AIIdeaBenchConfig(data=str(data), generator="scripted/gen", judge="scripted/judge", n_ideas=1,
                            metrics=["i2i"], bootstrap_resamples=20)
    await arun("aiideabench", config=cfg, options=ExecutionOptions(out=out, progress=False),
               generator=ScriptedModel(responder()), judge=ScriptedModel(responder()), embed_fn=toy_embed)
    check = results(out)["leakage"]["check"]
    assert check["leaks"] == 2
    assert {(e["kind"], e["step"], e["work"]["id"]) for e in check["examples"]} == {
        ("prompt", "generate", "t0"), ("prompt", "generate", "t1")}
