"""Blinding of hypothesis ranking on the bundled TOMATO-Chem gold hypotheses: a judge that picks the
candidate carrying a paper's cues ("The hypothesis is that ...", "the paper", measured results)
finds the gold in both orders under ``parity`` (the published text), and only by position once the
gold is rewritten into the negatives' form."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ideaharness import arun
from ideaharness.benchmarks.researchbench import ResearchBenchConfig
from ideaharness.benchmarks.researchbench.config import BenchData
from ideaharness.data.pools import Candidate, CandidatePool
from ideaharness.data.researchbench_jsonl import RankingTask
from ideaharness.data.tomato import load_tomato_chem
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.surface import measured_results, reference_lead, self_references
from ideaharness.runner.options import ExecutionOptions
from tests.blinding_support import is_rewrite, scripted_rewrite

N = 12
CANDIDATE = re.compile(r"<candidate_(\d)>\n(.*?)\n</candidate_\d>", re.S)
SELECTION = "**Analysis**: a paper.\n**Selection of research hypothesis candidate**: candidate {}"


def has_cue(text: str) -> bool:
    return bool(reference_lead(text) or self_references(text) or measured_results(text))


def cue_judge(messages: list[dict[str, str]]) -> str:
    user = messages[-1]["content"]
    if is_rewrite(user):
        return scripted_rewrite(user)
    if "Selection of research hypothesis candidate" in user:
        shown = dict(CANDIDATE.findall(user))
        pick = next((k for k in ("1", "2") if has_cue(shown[k])), "2")
        return SELECTION.format(pick)
    raise AssertionError(f"unexpected prompt: {user[:100]}")


def tomato_ranking_data() -> BenchData:
    instances = load_tomato_chem()[:N]
    ranking, pools = {}, {}
    for k, inst in enumerate(instances):
        gold = inst.ground_truth.hypothesis or ""
        negatives = [f"Combining method {j} with material {k} in a flow reactor would raise the yield of "
                     f"the target product while keeping the catalyst stable over many cycles, variant {j}."
                     for j in range(3)]
        ranking[inst.id] = RankingTask(sample_id=inst.id, discipline="Chemistry", gold_hypothesis=gold,
                                       research_question=inst.research_question or "",
                                       model_negative_hypotheses=negatives)
        pools[inst.id] = CandidatePool(instance_id=inst.id, source="given", candidates=[
            Candidate(index=i, title=r.title, label="gold") for i, r in enumerate(inst.references)])
    return BenchData(instances, given_pools=pools, given_ranking=ranking)


async def _run(tmp_path: Path, name: str, **config: object) -> dict:  # type: ignore[type-arg]
    cfg = ResearchBenchConfig(tasks=["ranking"], **config)  # type: ignore[arg-type]
    model = ScriptedModel(cue_judge)
    return await arun("researchbench", config=cfg, options=ExecutionOptions(out=tmp_path / name,
                                                                            progress=False),
                                         generator=model, judge=model, bench_data=tomato_ranking_data())


async def test_gold_is_found_by_its_form_only_in_the_published_text(tmp_path: Path) -> None:
    # parity (published text, gold always candidate 1): the cue judge finds the gold every time,
    # although without a cue it would pick candidate 2
    parity = await _run(tmp_path, "parity", parity=True)
    assert parity["ranking"]["overall"]["accuracy_gold_first"] == 1.0
    blind = await _run(tmp_path, "blind")
    rank = blind["ranking"]["overall"]
    assert rank["n_tasks"] == N and rank["n_pairs"] == 3 * N
    # rewritten: no cue left, the judge falls back to candidate 2: gold wins exactly when shown second
    assert rank["accuracy_gold_first"] == 0.0 and rank["accuracy_gold_second"] == 1.0
    assert rank["directional_accuracy"] == 0.5
    assert rank["pair_consistency"]["both_gold"] == 0
    assert parity["ranking_blinding"]["surface"]["features"]["reference_lead"]["separation"] > 0.9
    blinding = blind["ranking_blinding"]
    assert blinding["reference_text"] == "rewritten" and blinding["papers"] == {"rewritten": N}
    assert blinding["surface"]["features"]["reference_lead"]["reference"] == 0.0
    assert blinding["surface_published"]["features"]["reference_lead"]["separation"] > 0.9
    records = [json.loads(x)["data"] for x in
               (tmp_path / "blind/records/researchbench_rewrite.jsonl").read_text().splitlines()]
    assert len(records) == N and all(r["original"] for r in records)


async def test_a_gold_that_cannot_be_rewritten_is_not_ranked(tmp_path: Path) -> None:
    def stubborn(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if is_rewrite(user):  # quotes a measured result every time
            return json.dumps({"hypothesis": "Heating the cell to 80 °C would double its output power."})
        return cue_judge(messages)

    cfg = ResearchBenchConfig(tasks=["ranking"])
    model = ScriptedModel(stubborn)
    res = await arun("researchbench", config=cfg,
                     options=ExecutionOptions(out=tmp_path / "r", limit=2, progress=False, max_attempts=2),
                     generator=model, judge=model, bench_data=tomato_ranking_data())
    assert res["ranking"]["overall"]["n_tasks"] == 0
    assert res["ranking"]["overall"]["gold_rewrite_failures"] == 2
    failed = [n for n in res["notes"] if "the gold rewrite of 2 paper(s) failed its check (final" in n]
    assert len(failed) == 1, res["notes"]
    assert "quotes measured results" in failed[0] or "fewer than" in failed[0]
    assert not (tmp_path / "r" / "records" / "researchbench_rank_pair.jsonl").exists()
