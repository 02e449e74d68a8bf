"""``--ideas`` judges only what it can score (issue 18, item 5): an ideas file covering 5 of the 51
bundled TOMATO-Chem instances decomposes those 5 ground truths and only the distractor papers their
IMCQ questions use, counted as requests on a real loopback endpoint (was 51 + 215 decompositions).
The other 46 are listed as failed units (issue 20: missing instances are listed, never dropped)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ideaharness
from ideaharness.data.tomato import load_tomato_chem
from ideaharness.errors import DataError
from ideaharness.testing.openai_server import OpenAICompatServer
from tests.aiideabench.test_aiib_blinding import decomposition
from tests.aiideabench.test_aiib_pipeline import options_of, toy_embed

PICKED = (3, 10, 20, 30, 45)
"""Indices (data order) of the bundled instances the ideas file covers: not a prefix of the data."""


def _reply(body: dict[str, object]) -> str:
    user = body["messages"][-1]["content"]  # type: ignore[index]
    if "Break the research below" in user:
        return decomposition(user)
    if "closest in content" in user:
        return json.dumps({"closest_option": min(options_of(user)), "explanation": "x"})
    if "Rate how similar" in user:
        return json.dumps({"rating": 3, "explanation": "x"})
    if "how well the motivation" in user:
        return json.dumps({"motivation_alignment": 4, "experiment_plan_alignment": 2, "comments": "x"})
    raise AssertionError(f"unexpected prompt: {user[:120]}")


def _ideas_file(path: Path, ids: list[str]) -> Path:
    rows = [{"instance_id": iid,
             "motivation": f"Catalysts for case {k} need heat; milder route {j} would save energy.",
             "experiment_plan": f"Step 1: make catalyst {k}-{j}.\nStep 2: test it against known catalysts."}
            for k, iid in enumerate(ids) for j in range(2)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _prompt_kind(user: str) -> str:
    if "Break the research below" in user:
        return "decompose" if "<research_question>" in user else "decompose_distractor"
    if "closest in content" in user:
        return "imcq"
    return "i2i" if "Rate how similar" in user else "i2t"


def test_ideas_for_5_of_51_instances_decompose_only_what_they_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    pool = load_tomato_chem()
    assert len(pool) == 51
    ids = [pool[i].id for i in PICKED]
    ideas = _ideas_file(tmp_path / "ideas.jsonl", ids)
    with OpenAICompatServer(_reply) as srv:
        res = ideaharness.run("aiideabench", ideas=str(ideas), judge="openai/judge",
                              base_url=srv.base_url, metrics=["imcq", "i2i", "i2t"], out=tmp_path / "run",
                              use_cache=False, progress=False, bootstrap_resamples=20, embed_fn=toy_embed)
        users = [r.body["messages"][-1]["content"] for r in srv.requests]
    kinds = [_prompt_kind(u) for u in users]
    questions = [json.loads(x)["data"] for x in (tmp_path / "run/records/imcq_question.jsonl").open()]
    needed = {d["id"] for q in questions for d in q["distractors"]}
    assert len(questions) == 10 and all("question" in q for q in questions)
    # 5 ground truths, the distractor papers of 10 questions (3 each, some shared), 10 ideas judged:
    # IMCQ and I2I per component (2 x 10 each), I2T once per idea
    assert kinds.count("decompose") == 5
    assert kinds.count("decompose_distractor") == len(needed) <= 30  # one request per paper, shared
    decomposed = [json.loads(x) for x in (tmp_path / "run/records/decompose_distractor.jsonl").open()]
    assert sorted(r["key"] for r in decomposed) == sorted(needed)
    # plus the default --consistency-sample re-asks of IMCQ questions (never scored)
    reasks = [json.loads(x)["key"] for x in (tmp_path / "run/records/imcq.jsonl").open()
              if json.loads(x)["key"].endswith("#reask")]
    assert len(reasks) >= 1
    assert kinds.count("imcq") == 20 + len(reasks) and kinds.count("i2i") == 20 and kinds.count("i2t") == 10
    assert len(users) == 55 + len(needed) + len(reasks)  # was 266 decompositions before any judgment
    titles = {r.title for i in PICKED for r in pool[i].references} | {
        r.title for inst in pool for r in inst.references if r.id in needed}
    distractor_titles = {u.split("<title>\n", 1)[1].split("\n</title>", 1)[0]
                         for u, k in zip(users, kinds, strict=True) if k == "decompose_distractor"}
    assert distractor_titles <= titles
    assert res["instances"] == 51 and res["instances_not_in_ideas_file"] == 46
    assert res["selection"]["available"] == 51 and res["status"] == "partial"
    failed = {(u["step"], u["instance_id"]) for u in res["failed_units"]}
    assert len(res["failed_units"]) == 46 * 2 and {s for s, _ in failed} == {"generate"}
    assert {i for _, i in failed} == {inst.id for inst in pool} - set(ids)
    assert res["imcq"]["motivation"]["n"] == 5 and res["i2t"]["motivation"]["n"] == 5
    assert any("--ideas covers 5 of the data's 51 instances" in note for note in res["notes"])


def test_an_ideas_file_for_no_instance_of_the_data_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "none.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(DataError, match=r"none\.jsonl: no idea"):
        ideaharness.run("aiideabench", ideas=str(empty), judge="openai/judge", metrics=["imcq"],
                        out=tmp_path / "run", progress=False, embed_fn=toy_embed)
