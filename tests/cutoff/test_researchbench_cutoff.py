"""ResearchBench under the knowledge cutoff: a gold inspiration and a corpus negative dated after the
instance's cutoff never enter the candidate pool, the screening prompts or the composition prompts;
both exclusions are counted; a given pool loses its later candidates (matched by title)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from ideaharness import arun
from ideaharness.benchmarks.researchbench import ResearchBenchConfig
from ideaharness.benchmarks.researchbench.cutoff import POOL_SOURCE, pool_before
from ideaharness.cutoff import CutoffLedger
from ideaharness.data.pools import Candidate, CandidatePool
from ideaharness.runner.options import ExecutionOptions
from ideaharness.schema import Paper
from tests.cutoff.support import covers, cutoff_records, prompt_texts, results
from tests.researchbench.test_rb_run import scripted

NEW_GOLD = "Hofmeister ions order water around polymer chains"
NEW_NEGATIVE = "Redox couples for wearable thermocells released late"
OLD_GOLD = "Salting out toughens gels through chain bundling"


def _data(tmp_path: Path) -> tuple[Path, Path]:
    rows = []
    for i in range(2):
        rows.append({
            "id": f"chem{i}", "dataset": "cutoff-test", "domain": "Chemistry",
            "research_question": f"How can a hydrogel thermocell reach a higher thermopower ({i})?",
            "knowledge_cutoff": "2023-06-30",
            "target": {"id": f"t{i}", "title": f"Tough thermogalvanic hydrogel armour {i}",
                       "publication_date": "2024-03-01", "year": 2024},
            "references": [
                {"id": f"g{i}", "title": f"{OLD_GOLD} {i}", "abstract": "Salts bundle chains.", "year": 2019},
                {"id": f"n{i}", "title": f"{NEW_GOLD} {i}", "abstract": "Ions order water.",
                 "publication_date": "2023-09-01", "year": 2023}],
            "ground_truth": {"hypothesis": "Salting out a gel raises thermopower.",
                             "fine_grained_hypothesis": "Salting out with a Hofmeister salt raises it."}})
    data = tmp_path / "instances.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    corpus = [{"id": f"c{k}", "title": f"Earlier corpus paper on electrolytes number {k}", "year": 2015 + k,
               "abstract": "Electrolytes."} for k in range(6)]
    corpus.append({"id": "cnew", "title": NEW_NEGATIVE, "publication_date": "2023-12-01", "year": 2023,
                   "abstract": "Redox couples."})
    corpus_path = tmp_path / "corpus.jsonl"
    corpus_path.write_text("".join(json.dumps(p) + "\n" for p in corpus), encoding="utf-8")
    return data, corpus_path


@covers("researchbench")
async def test_later_inspirations_and_negatives_never_reach_the_pool_or_a_prompt(tmp_path: Path) -> None:
    data, corpus = _data(tmp_path)
    model = scripted("**Analysis**: x\n**Selection of research hypothesis candidate**: candidate 1")
    config = ResearchBenchConfig(data=str(data), corpus=str(corpus), tasks=["retrieval", "composition"],
                                 methods=["one_step"], pool_size=8, per_level=8, window_size=4, keep_size=2,
                                 bootstrap_resamples=20)
    out = tmp_path / "run"
    await arun("researchbench", config=config, options=ExecutionOptions(out=out, progress=False),
               generator=model, judge=model)
    asked = [m[-1]["content"] for m, _ in model.calls]
    assert any(OLD_GOLD in t for t in asked)  # what may be shown is shown
    for text in [*asked, *prompt_texts(out)]:
        assert NEW_GOLD not in text and NEW_NEGATIVE not in text
    lines = (out / "records" / "researchbench_pool.jsonl").read_text().splitlines()
    pools = [json.loads(x)["data"] for x in lines]
    for pool in pools:
        titles = [c["title"] for c in pool["candidates"]]
        assert not any(NEW_GOLD in t or NEW_NEGATIVE in t for t in titles)
        assert [c["label"] for c in pool["candidates"]].count("gold") == 1
    rows = {(r["instance_id"], r["key"]): r["data"] for r in cutoff_records(out)}
    assert rows[("chem0", "inspirations")]["excluded"] == 1
    assert {w["id"] for w in rows[("chem0", POOL_SOURCE)]["excluded_works"]} == {"cnew"}
    leakage = results(out)["leakage"]
    assert leakage["excluded"]["inspirations"] == {"kept": 2, "excluded": 2, "undated": 0}
    assert leakage["excluded"][POOL_SOURCE]["excluded"] == 2
    assert leakage["check"]["leaks"] == 0 and leakage["check"]["prompts_checked"] > 0
    per = results(out)["per_instance"]["chem0"]["retrieval"]
    assert per["n_gold"] == 1  # the hit ratio counts the gold that remains


def test_a_given_pool_loses_its_later_candidates() -> None:
    pool = CandidatePool(instance_id="x", source="given", candidates=[
        Candidate(index=0, title="Gold before", label="gold"),
        Candidate(index=1, title="Gold after the cutoff", label="gold"),
        Candidate(index=2, title="Negative after the cutoff", label="negative_t2"),
        Candidate(index=3, title="Negative of unknown date", label="negative_t1")])
    dated = {"gold before": Paper(id="a", title="Gold before", year=2020),
             "gold after the cutoff": Paper(id="b", title="Gold after the cutoff",
                                            publication_date=dt.date(2024, 1, 2)),
             "negative after the cutoff": Paper(id="c", title="Negative after the cutoff", year=2025)}
    kept, record = pool_before(pool, dt.date(2023, 12, 31), dated, CutoffLedger())
    assert [c.title for c in kept.candidates] == ["Gold before", "Negative of unknown date"]
    assert [c.index for c in kept.candidates] == [0, 1] and kept.source == "given"
    assert record["kept"] == 2 and record["excluded"] == 2 and record["undated"] == 1
    assert "2 candidate(s) dated after the cutoff 2023-12-31 removed" in kept.notes
