"""AI Idea Bench blinding on the bundled TOMATO-Chem data: IMCQ options that a format-only judge
cannot answer, the true chance level of "any of n ideas", and generators that see the anonymised
topic, not the target's background question."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ideaharness import arun
from ideaharness.benchmarks.aiideabench import AIIdeaBenchConfig, results_tables
from ideaharness.benchmarks.aiideabench.blinding import parse_blind_decomposition
from ideaharness.errors import ParseError
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.choice import imcq_chance
from ideaharness.runner.options import ExecutionOptions
from tests.aiideabench.test_aiib_pipeline import options_of, toy_embed

STEP_LINE = re.compile(r"^[A-Z][\w ]{0,40}:", re.MULTILINE)
ANON = "The topic of this paper is an anonymised question about "


def _block(user: str, tag: str) -> str:
    return user.split(f"<{tag}>\n", 1)[1].split(f"\n</{tag}>", 1)[0] if f"<{tag}>" in user else ""


def decomposition(user: str) -> str:
    """The same form for any paper: a 2-sentence motivation and a 3-step plan from its own words."""
    title = re.sub(r"[^A-Za-z ,-]", "", _block(user, "title"))  # a judge that follows the rules
    found = re.findall(r"[a-z]{5,}", (_block(user, "abstract") or _block(user, "background")).lower())
    words = [w for w in found if w not in ("herein", "paper", "study", "authors")][:6]
    focus = " ".join(words) or "this problem"
    return json.dumps({
        "topic": ANON + title.lower()[:20],
        "motivation": f"Current approaches to {title.lower()} do not yet address {focus}. "
                      "A better design of the key components could close this gap.",
        "experiment_plan": f"Design: prepare candidates for {focus}.\nCharacterisation: measure their "
                           "properties.\nComparison: test them against established baselines.",
    })


def format_judge(user: str) -> str:
    """Picks the option that looks most like a step-per-line plan; on a tie the shortest; then A."""
    options = options_of(user)
    best = max(options, key=lambda k: (len(STEP_LINE.findall(options[k])), -len(options[k]), -ord(k)))
    return json.dumps({"closest_option": best, "explanation": "format"})


def responder(messages: list[dict[str, str]]) -> str:
    user = messages[-1]["content"]
    if "Break the research below" in user:
        return decomposition(user)
    if "Propose one new research idea" in user:
        return json.dumps({"title": "t", "motivation": "Current catalysts need heat; a milder route would "
                           "save energy and waste.",
                           "experiment_plan": "Step 1: synthesise the candidate catalyst\nStep 2: test it "
                           "against the baselines"})
    if "closest in content" in user:
        return format_judge(user)
    raise AssertionError(f"unexpected prompt: {user[:100]}")


async def _run(tmp_path: Path, name: str, limit: int, **cfg: object) -> tuple[dict, ScriptedModel]:  # type: ignore[type-arg]
    config = AIIdeaBenchConfig(generator="scripted/gen", judge="scripted/judge", metrics=["imcq"],
                               bootstrap_resamples=20, **cfg)  # type: ignore[arg-type]
    model = ScriptedModel(responder)
    opts = ExecutionOptions(out=tmp_path / name, limit=limit, progress=False)
    res = await arun("aiideabench", config=config, options=opts, generator=model, judge=model,
                     embed_fn=toy_embed)
    return res, model


def _generation_prompts(model: ScriptedModel) -> list[str]:
    return [m[-1]["content"] for m, _ in model.calls if "Propose one new research idea" in m[-1]["content"]]


async def test_a_format_only_judge_scores_at_chance_on_decomposed_distractors(tmp_path: Path) -> None:
    published, _ = await _run(tmp_path, "parity", 40, n_ideas=1, parity=True)
    # the published options: the plan is the only step-per-line option, the motivation the shortest
    plan = published["imcq"]["experiment_plan"]
    assert plan["mean"] == 1.0 and plan["n"] == 40
    assert published["imcq"]["motivation"]["mean"] >= 0.75
    blind, _ = await _run(tmp_path, "blind", 40, n_ideas=1)
    for comp in ("motivation", "experiment_plan"):
        imcq = blind["imcq"][comp]
        assert imcq["n"] == 40 and imcq["chance"] == 0.25
        assert imcq["mean"] <= 0.4, comp  # 1 - (1 - 1/4)^1 = 0.25 by chance; 1.0 by form
        surface = imcq["blinding"]["surface"]
        assert imcq["blinding"]["options"] == "decomposed" and surface["n_references"] == 40
        assert surface["features"]["words"]["separation"] < 0.75
        assert imcq["blinding"]["surface_published"]["features"]["words"]["separation"] > 0.9
    lines = (tmp_path / "blind/records/imcq_question.jsonl").read_text().splitlines()
    records = [json.loads(x)["data"] for x in lines]
    for rec in records:  # every distractor is a decomposition of the paper it was chosen for
        assert len(rec["distractors"]) == 3 and all(d["published"] and d["id"] for d in rec["distractors"])
    decomposed = (tmp_path / "blind/records/decompose_distractor.jsonl").read_text().splitlines()
    assert {json.loads(x)["key"] for x in decomposed} <= {d["id"] for r in records for d in r["distractors"]}


async def test_chance_level_is_that_of_a_content_blind_judge_not_of_an_independent_guesser(
        tmp_path: Path) -> None:
    """Issue 32, item 5: a judge that ignores content picks the same option for both ideas, so it
    scores 1/4 however many ideas there are; 1 - (1 - 1/4)^n (0.4375 for n = 2) is a guesser
    drawing anew for each idea, kept under its own name and never printed as "chance"."""
    assert imcq_chance(1) == 0.25 and imcq_chance(2) == 0.4375 and imcq_chance(0) == 0.0
    assert imcq_chance(3, 2) == pytest.approx(0.875)
    res, _ = await _run(tmp_path, "n2", 3, n_ideas=2)
    assert res["imcq"]["motivation"]["chance"] == 0.25
    assert res["imcq"]["motivation"]["chance_independent_guesser"] == 0.4375
    note = results_tables(res)[0].note or ""
    assert "ignores the options' content" in note and "motivation 0.2500" in note
    assert "1 - (1 - 1/4)^n (motivation 0.4375" in note and "not the reference" in note


async def test_generators_see_the_anonymised_topic_and_parity_the_published_one(tmp_path: Path) -> None:
    blind, model = await _run(tmp_path, "blind", 4, n_ideas=1)
    prompts = _generation_prompts(model)
    assert len(prompts) == 4
    assert all(ANON in p for p in prompts)
    from ideaharness.data.tomato import load_tomato_chem

    questions = [i.research_question for i in load_tomato_chem()[:4]]
    assert not any(q and q in p for q in questions for p in prompts)
    assert blind["topic"] == {"shown_to_generators": "anonymised", "sources": {"anonymised": 4},
                              "generation_skipped_no_topic": 0}
    ideas = [json.loads(x)["data"] for x in (tmp_path / "blind/records/ideas.jsonl").read_text().splitlines()]
    assert {i["topic_source"] for i in ideas} == {"anonymised"}
    parity, model = await _run(tmp_path, "parity", 4, n_ideas=1, parity=True)
    prompts = _generation_prompts(model)
    assert all(any(q and q in p for q in questions) for p in prompts)
    assert parity["topic"]["shown_to_generators"] == "published"


async def test_no_anonymised_topic_means_no_generation(tmp_path: Path) -> None:
    def leaky(messages: list[dict[str, str]]) -> str:
        if "Break the research below" in messages[-1]["content"]:  # a result in the motivation, every time
            return json.dumps({"topic": ANON + "x", "motivation": "The output rose 13-fold in this design "
                               "when two effects were combined in one device of this kind.",
                               "experiment_plan": "A: one.\nB: two."})
        return responder(messages)

    config = AIIdeaBenchConfig(generator="g", judge="j", metrics=["imcq"], n_ideas=1,
                               bootstrap_resamples=20)
    model = ScriptedModel(leaky)
    res = await arun("aiideabench", config=config,
                     options=ExecutionOptions(out=tmp_path / "r", limit=2, progress=False, max_attempts=2),
                     generator=model, judge=model, embed_fn=toy_embed)
    assert res["decomposition_parse_failures"] == 2 and res["ideas"] == 0
    assert res["topic"]["generation_skipped_no_topic"] == 2 and res["topic"]["sources"] == {"missing": 2}
    assert not any("Propose one new research idea" in m[-1]["content"] for m, _ in model.calls)


def test_blind_decomposition_refuses_cues_and_a_one_line_plan() -> None:
    good = {"topic": ANON + "room-temperature catalysts",
            "motivation": "Existing routes to the product are slow and wasteful; a catalyst "
            "that works at room temperature could make them cleaner.",
            "experiment_plan": "Synthesis: make the new catalyst.\nTest: compare it with the known catalysts "
                               "in water."}
    assert parse_blind_decomposition(json.dumps(good))["motivation"].startswith("Existing")
    for field, value, why in (
        ("motivation", "This paper shows that the catalyst raises the yield by 40% at room temperature "
         "in water.", "measured"),
        ("motivation", "The hypothesis is that a catalyst that works at room temperature could make "
         "these routes cleaner.", "opens like"),
        ("experiment_plan", "Make the catalyst, then test it against the baselines in water at room "
         "temperature.", "at least 2 steps"),
        ("experiment_plan", "Synthesis: the authors make it and test it.\nTest: compare with baselines.",
         "refers to a publication"),
    ):
        with pytest.raises(ParseError, match=why):
            parse_blind_decomposition(json.dumps({**good, field: value}))
