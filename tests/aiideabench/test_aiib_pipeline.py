"""End-to-end logic of the AI Idea Bench run with scripted models (no LLM), a toy embedding, and a
real local HTTP replay server standing in for Semantic Scholar."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from ideaharness import arun
from ideaharness.benchmarks.aiideabench import AIIdeaBenchConfig, results_tables
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.feasibility import influence_norm
from ideaharness.runner.options import ExecutionOptions
from ideaharness.scholarly.s2 import PAPER_FIELDS
from ideaharness.testing.scholarly_replay import ReplayServer

FIX = Path(__file__).parent / "fixtures"
DATA = str(FIX / "target_paper_data.json")


def toy_embed(texts: list[str]) -> np.ndarray:
    """Hashed bag of words, L2-normalised: deterministic and cheap."""
    out = np.zeros((len(texts), 64))
    for i, t in enumerate(texts):
        for w in re.findall(r"\w+", t.lower()):
            out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 64] += 1
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1, norms)


def options_of(user: str) -> dict[str, str]:
    """The options of an IMCQ prompt by letter."""
    return dict(re.findall(r"Option ([A-D]):\n<option_[a-d]>\n(.*?)\n</option_[a-d]>", user, re.S))


def scripted_decomposition(user: str) -> str:
    """A decomposition in the ground truth's form (motivation + step-per-line plan) of any paper."""
    title = user.split("<title>\n", 1)[1].split("\n</title>", 1)[0]
    return json.dumps({
        "topic": f"The topic of this paper is {title.lower()}.",
        "motivation": f"Existing approaches to {title.lower()} leave a gap; a new insight about this setting "
                      "could close it and make such systems more useful.",
        "experiment_plan": f"Setup: build a system for {title.lower()}.\nEvaluation: compare it with "
                           "baselines on standard benchmarks.",
    })


def responder(style: str = "good", imcq_letter: str | None = None):  # type: ignore[no-untyped-def]
    def reply(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if "Propose one new research idea" in user:
            tag = "STRONG" if style == "good" else "weak"
            return json.dumps(
                {
                    "title": f"{tag} idea",
                    "motivation": f"{tag} motivation about attention: windows are too short for documents",
                    "experiment_plan": f"Step 1: {tag} experiment on long inputs. Step 2: measure the cost",
                }
            )
        if "closest in content" in user:
            if imcq_letter:
                return json.dumps({"closest_option": imcq_letter, "explanation": "x"})
            # pick the option that repeats the ground-truth motivation / plan wording of the fixture
            # (options show a run of their words, not always the first: any of its distinctive ones)
            for letter, text in options_of(user).items():
                if any(w in text for w in ("Long-document", "Block-sparse", "quadratic", "blocks and")):
                    return json.dumps({"closest_option": letter, "explanation": "x"})
            return "I cannot decide."
        if "Break the research below" in user:
            return scripted_decomposition(user)
        if "Rate how similar" in user:
            return json.dumps({"rating": 4, "explanation": "x"})
        if "how well the motivation" in user:
            return json.dumps({"motivation_alignment": 3, "experiment_plan_alignment": 5, "comments": "x"})
        if "choose the better idea" in user:
            first = user.index("Idea 0:")
            second = user.index("Idea 1:")
            strong_first = "STRONG" in user[first:second]
            return json.dumps({"final_choice": 0 if strong_first else 1})
        if "atomic methods" in user:
            return json.dumps({"concepts": ["sparse attention"]})
        if "Summarise this paper" in user:
            return json.dumps({"idea": "DIGEST of " + user.split("<title>\n")[1].split("\n")[0]
                               + ": the paper's core idea, what is new and how it works",
                               "experiment_steps": "Step 1: run the method on its benchmark data"})
        if "search keywords" in user:
            return json.dumps({"keywords": ["attention"]})
        raise AssertionError(f"unexpected prompt: {user[:200]}")

    return reply


def options(tmp: Path, name: str, limit: int = 2) -> ExecutionOptions:
    return ExecutionOptions(out=tmp / name, limit=limit, progress=False)


async def test_run_tables_and_resume(tmp_path: Path) -> None:
    cfg = AIIdeaBenchConfig(
        data=DATA,
        generator="scripted/gen",
        judge="scripted/judge",
        n_ideas=2,
        metrics=["imcq", "i2i", "i2t"],
        bootstrap_resamples=50,
    )
    judge = ScriptedModel(responder())
    gen = ScriptedModel(responder())
    res = await arun("aiideabench", config=cfg, options=options(tmp_path, "a"), generator=gen, judge=judge,
                     embed_fn=toy_embed
    )
    assert res["instances"] == 2 and res["ideas"] == 4
    # the scripted generator repeats its idea: the second of each instance is an exact duplicate
    assert res["duplicates"]["exact_duplicates"] == 2 and res["duplicates"]["distinct"] == 2
    assert "Duplicate ideas among the n per instance" in (tmp_path / "a" / "report.html").read_text()
    assert res["i2i"]["motivation"]["mean"] == 4.0 and res["i2i"]["motivation"]["n"] == 2
    assert res["i2t"]["experiment_plan"]["mean"] == 5.0 and res["i2t"]["motivation"]["mean"] == 3.0
    # instance 0: the judge finds the ground truth; instance 1: it never answers -> parse failures
    imcq = res["imcq"]["motivation"]
    assert imcq["n"] == 1 and imcq["mean"] == 1.0 and imcq["parse_failures"] == 2
    assert (tmp_path / "a" / "report.html").exists()
    tables = results_tables(res)
    assert tables[0].columns[1] == "I2T motivation" and tables[0].rows[0][1] == 3.0
    assert "NA skipped: not requested" in (tables[1].note or "")
    calls = len(judge.calls) + len(gen.calls)
    # resume: nothing that parsed is asked again; only the IMCQ judgments that never parsed are
    # re-asked (a cached parse failure is not a final answer)
    judge2, gen2 = ScriptedModel(responder()), ScriptedModel(responder())
    again = await arun("aiideabench", config=cfg, options=options(tmp_path, "a"), generator=gen2,
                       judge=judge2, embed_fn=toy_embed
    )
    assert gen2.calls == [] and calls > 0
    assert all("closest in content" in m[-1]["content"] for m, _ in judge2.calls)
    assert again["i2i"] == res["i2i"]


async def test_imcq_wrong_answers_score_zero(tmp_path: Path) -> None:
    cfg = AIIdeaBenchConfig(
        data=DATA, generator="g", judge="j", n_ideas=1, metrics=["imcq"], seed=5, bootstrap_resamples=20
    )
    res = await arun("aiideabench", config=cfg,
        options=options(tmp_path, "b", limit=3),
        generator=ScriptedModel(responder()),
        judge=ScriptedModel(responder(imcq_letter="A")),
        embed_fn=toy_embed,
    )
    store_q = [json.loads(x) for x in (tmp_path / "b/records/imcq_question.jsonl").read_text().splitlines()]
    answers = [q["data"]["question"]["answer"] for q in store_q if q["key"] == "motivation"]
    expected = sum(a == "A" for a in answers) / len(answers)
    assert res["imcq"]["motivation"]["mean"] == pytest.approx(expected)
    for q in store_q:
        question = q["data"]["question"]
        gt_index = "ABCD".index(question["answer"])
        assert question["sources"][gt_index] == "ground_truth"


async def test_competition_both_orders_and_parity(tmp_path: Path) -> None:
    common = {"data": DATA, "judge": "j", "n_ideas": 1, "metrics": ["i2t"], "bootstrap_resamples": 50}
    weak = AIIdeaBenchConfig(generator="weak-model", **common)
    await arun("aiideabench", config=weak,
        options=options(tmp_path, "weak", 3),
        generator=ScriptedModel(responder("weak")),
        judge=ScriptedModel(responder()),
        embed_fn=toy_embed,
    )
    strong = AIIdeaBenchConfig(generator="strong-model", **common)
    judge = ScriptedModel(responder())
    res = await arun("aiideabench", config=strong,
        options=options(tmp_path, "strong", 3),
        compare=[tmp_path / "weak"],
        generator=ScriptedModel(responder("good")),
        judge=judge,
        embed_fn=toy_embed,
    )
    comp = res["competition"]
    assert comp["systems"] == ["strong-model", "weak-model"] and comp["topics"] == 3
    assert comp["points"] == {"strong-model": 3 * 7 * 3, "weak-model": 0.0}
    assert comp["rank"] == {"strong-model": 1, "weak-model": 2}
    # intervals resample topics (3 here), for the points and for Bradley-Terry
    assert comp["points_ci"] == {"strong-model": (63.0, 63.0), "weak-model": (0.0, 0.0)}
    assert comp["bradley_terry_bootstrap"]["resampled_unit"] == "topic"
    assert comp["points_bootstrap"] == {"method": "percentile", "resampled_unit": "topic", "confidence": 0.95,
                                        "n_resamples": 50, "seed": 0, "statistic": "sum over topics",
                                        "implementation": "scipy.stats.bootstrap"}
    assert "points 95% CI" in (tmp_path / "strong" / "report.html").read_text()
    assert comp["pairs"] == 3 and comp["judgments"] == 6 and comp["inconsistent_pairs"] == 0
    # both sides show motivation and plan only: no title (which one system might lack) on either side
    compete = [m[-1]["content"] for m, _ in judge.calls if "choose the better idea" in m[-1]["content"]]
    assert compete and not any("Title:" in p for p in compete)
    assert all(p.count("Motivation:") == p.count("Experiment plan:") == 2 for p in compete)
    bt = comp["bradley_terry"]
    assert bt["strong-model"]["rating"] == 1000.0 and bt["weak-model"]["rating"] < 1000.0
    assert "never lost or never won" in comp["bradley_terry_note"]
    # a judge that always picks idea 0 is inconsistent on every pair -> ties, recorded as such
    biased = ScriptedModel(
        lambda m: '{"final_choice": 0}' if "choose the better" in m[-1]["content"] else responder()(m)
    )
    res2 = await arun("aiideabench", config=strong.model_copy(update={"seed": 1}),
        options=options(tmp_path, "s2", 3),
        compare=[tmp_path / "weak"],
        generator=ScriptedModel(responder("good")),
        judge=biased,
        embed_fn=toy_embed,
    )
    c2 = res2["competition"]
    assert (
        c2["inconsistent_pairs"] == 3
        and c2["points"]["strong-model"] == c2["points"]["weak-model"] == 1.5 * 21
    )
    # parity: one order, higher-ranked is idea 0, +1 per loss
    parity = strong.model_copy(update={"parity": True, "seed": 2})
    res3 = await arun("aiideabench", config=parity,
        options=options(tmp_path, "s3", 3),
        compare=[tmp_path / "weak"],
        generator=ScriptedModel(responder("good")),
        judge=judge,
        embed_fn=toy_embed,
    )
    c3 = res3["competition"]
    assert c3["points"] == {"strong-model": 63.0, "weak-model": 21.0} and not c3["both_orders"]


def _s2_server(cutoff: dt.date) -> ReplayServer:
    server = ReplayServer()
    search = "/graph/v1/paper/search"
    base = {"fields": PAPER_FIELDS, "offset": 0, "limit": 5}
    hist = [
        {
            "paperId": "h1",
            "title": "attention old",
            "abstract": "attention",
            "year": 2020,
            "publicationDate": "2020-01-01",
            "citationCount": 10,
        }
    ]
    cont = [
        {
            "paperId": "c1",
            "title": "attention new",
            "abstract": "attention study",
            "year": 2024,
            "publicationDate": "2024-01-01",
            "citationCount": 30,
        },
        {
            "paperId": "c2",
            "title": "other new",
            "abstract": "other",
            "year": 2024,
            "publicationDate": "2024-02-01",
            "citationCount": 50,
        },
    ]
    before = (cutoff - dt.timedelta(days=1)).isoformat()
    for q in ("long document sparse attention", "weak supervision semantic segmentation"):
        server.add_json(
            "GET", search, {"data": hist}, query={**base, "query": q, "publicationDateOrYear": f":{before}"}
        )
        server.add_json(
            "GET", search, {"data": cont}, query={**base, "query": q, "publicationDateOrYear": f"{cutoff}:"}
        )
    fa = [{"paperId": f"f{i}", "title": f"sparse {i}", "year": 2021, "citationCount": 5} for i in range(5)]
    server.add_json(
        "GET",
        search,
        {"data": fa},
        query={**base, "query": "sparse attention", "publicationDateOrYear": f":{cutoff}"},
    )
    for i in range(5):
        edges = [{"citingPaper": {"year": 2023}}] * (10 * (i + 1))
        server.add_json(
            "GET",
            f"/graph/v1/paper/f{i}/citations",
            {"data": edges},
            query={"fields": "year,publicationDate", "offset": 0, "limit": 1000},
        )
    return server


async def test_novelty_and_feasibility_against_local_server(tmp_path: Path) -> None:
    cutoff = dt.date(2023, 10, 3)
    with _s2_server(cutoff) as server:
        cfg = AIIdeaBenchConfig(
            data=DATA,
            generator="g",
            judge="j",
            n_ideas=1,
            metrics=["novelty", "feasibility"],
            scholar_base_url=server.base_url,
            bootstrap_resamples=20,
        )
        res = await arun("aiideabench", config=cfg,
            options=options(tmp_path, "lit"),
            generator=ScriptedModel(responder()),
            judge=ScriptedModel(responder()),
            embed_fn=toy_embed,
        )
    nov, fea = res["novelty"], res["feasibility"]
    assert nov["skipped"] is None and fea["skipped"] is None
    assert nov["motivation/novelty"]["n"] == 2
    assert nov["motivation/novelty"]["mean"] > 0 and nov["motivation/novelty_bounded"]["mean"] < 2
    # FA: all 5 papers of the single concept count; y_l = 2023 (cutoff year), citations in 2023
    expected = sum(influence_norm(10 * (i + 1)) for i in range(5)) / 5
    assert fea["mean"] == pytest.approx(expected) and fea["papers"] == 10


async def test_literature_skipped_when_offline(tmp_path: Path) -> None:
    cfg = AIIdeaBenchConfig(
        data=DATA,
        generator="g",
        judge="j",
        n_ideas=1,
        metrics=["novelty", "feasibility"],
        scholar_base_url="http://127.0.0.1:9",
        bootstrap_resamples=20,
    )
    res = await arun("aiideabench", config=cfg,
        options=options(tmp_path, "off"),
        generator=ScriptedModel(responder()),
        judge=ScriptedModel(responder()),
        embed_fn=toy_embed,
    )
    assert "unreachable" in res["novelty"]["skipped"] and res["novelty"]["motivation/novelty"]["mean"] is None
    assert res["feasibility"]["mean"] is None and res["feasibility"]["skipped"]
    note = results_tables(res)[1].note or ""
    assert "NA skipped" in note and "FA skipped" in note


async def test_external_ideas_and_inspiration_digests(tmp_path: Path) -> None:
    cfg = AIIdeaBenchConfig(data=DATA, judge="j", ideas=str(FIX / "ai_scientist_ideas.json"), n_ideas=1,
                            metrics=["i2t", "imcq"], digest_inspirations=True, bootstrap_resamples=20)
    judge = ScriptedModel(responder())
    res = await arun("aiideabench", config=cfg, options=options(tmp_path, "ext", 3), judge=judge,
                     embed_fn=toy_embed)
    assert res["system"] == "ai_scientist_ideas" and res["generator"] is None
    # aiib-2 has no external idea: a failed unit (the run is partial), not scored
    assert res["instances_with_ideas"] == 2 and res["ideas"] == 2 and res["i2t"]["motivation"]["n"] == 2
    assert [(u["step"], u["instance_id"]) for u in res["failed_units"]] == [("generate", "aiib-2")]
    lines = (tmp_path / "ext/records/imcq_question.jsonl").read_text().splitlines()
    records = [json.loads(x)["data"] for x in lines]
    # the digests (not the abstracts) are the inspiration texts of the run's own instances (they
    # choose the distractors; the options are the distractor papers' decompositions)
    assert any(d["published"].startswith("DIGEST of ") for r in records for d in r["distractors"])
    assert not any(o.startswith("DIGEST of ") for r in records for o in r["question"]["options"])
    assert not any("Propose one new research idea" in m[-1]["content"] for m, _ in judge.calls)
