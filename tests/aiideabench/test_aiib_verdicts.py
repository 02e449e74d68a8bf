"""AI Idea Bench replies: the final JSON verdict, degenerate ideas, and judgments that never parse
never lowering a best-of-n score (issue 9, items 1, 4 and 16)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ideaharness import arun
from ideaharness.benchmarks.aiideabench import AIIdeaBenchConfig
from ideaharness.benchmarks.aiideabench import judges as J
from ideaharness.errors import ParseError
from ideaharness.generation.aiideabench import parse_idea
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.runner.options import ExecutionOptions
from tests.aiideabench.test_aiib_pipeline import DATA, responder, toy_embed

MOTIVATION = "Quadratic attention is slow on long documents; learned global tokens keep context cheaply."
PLAN = "Step 1: add 8 global tokens.\nStep 2: compare with Longformer on arXiv summarisation."


def test_the_final_json_verdict_counts() -> None:
    assert J.parse_i2i('Example answer: {"rating": 1, "explanation": "x"}\nMy answer: {"rating": 4, '
                       '"explanation": "mostly the same"}') == 4
    reply = 'At first {"final_choice": 0}; having weighed novelty, {"novelty": 1, "final_choice": 1}'
    assert J.parse_compete(reply)["final_choice"] == 1


@pytest.mark.parametrize("rating", [0, 6, 9, "N/A", 2.5, None])
def test_off_scale_ratings_fail_even_with_numbers_in_the_explanation(rating: object) -> None:
    with pytest.raises(ParseError):
        J.parse_i2i(json.dumps({"rating": rating, "explanation": "shares 3 of the 4 steps"}))


@pytest.mark.parametrize(("field", "bad"), [("motivation", "\u200b"), ("motivation", "..."),
                                            ("experiment_plan", " \n "), ("experiment_plan", "—"),
                                            ("motivation", "I'm sorry, I cannot propose an idea on this.")])
def test_degenerate_generated_ideas_are_parse_failures(field: str, bad: str) -> None:
    idea = {"title": "Global tokens", "motivation": MOTIVATION, "experiment_plan": PLAN, field: bad}
    with pytest.raises(ParseError, match=field.replace("_", " ")):
        parse_idea(json.dumps(idea))
    good = {"title": "t", "motivation": MOTIVATION, "experiment_plan": PLAN}
    assert parse_idea(json.dumps(good))["motivation"] == MOTIVATION


async def test_degenerate_ideas_are_counted_not_judged(tmp_path: Path) -> None:
    base = responder()

    def gen(messages: list[dict[str, str]]) -> str:
        return json.dumps({"title": "t", "motivation": "...", "experiment_plan": "\u200b"})

    cfg = AIIdeaBenchConfig(data=DATA, generator="g", judge="j", n_ideas=1, metrics=["i2i"],
                            bootstrap_resamples=20)
    judge = ScriptedModel(base)
    res = await arun("aiideabench", config=cfg, options=ExecutionOptions(out=tmp_path / "r", limit=2,
                                                                         progress=False, max_attempts=2),
                                      generator=ScriptedModel(gen), judge=judge, embed_fn=toy_embed)
    assert res["ideas"] == 0 and res["generation_parse_failures"] == 2
    assert res["i2i"]["motivation"]["n"] == 0
    assert not any("Rate how similar" in m[-1]["content"] for m, _ in judge.calls)


async def test_an_unparsed_judgment_leaves_the_best_of_n_undetermined(tmp_path: Path) -> None:
    """I2I is the best rating over an instance's ideas (Eq. 3). When one idea's judgment never
    parses, the best of the others is a lower bound, not the score: the instance is left out and
    counted (before: its value was the other idea's 2, pulling the mean down)."""
    base = responder()
    seen: dict[str, int] = {}

    def gen(messages: list[dict[str, str]]) -> str:  # two different ideas per instance: ALPHA, BETA
        k = seen[messages[-1]["content"]] = seen.get(messages[-1]["content"], 0) + 1
        marker = "ALPHA" if k == 1 else "BETA"
        return json.dumps({"title": "t", "motivation": f"{marker}: {MOTIVATION}", "experiment_plan": PLAN})

    def judge(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if "Rate how similar" in user:
            if "Pixel labels" not in user:  # the first instance: both ideas rated 4
                return json.dumps({"rating": 4, "explanation": "mostly the same"})
            # the second instance: ALPHA rated 2, BETA's judgment is never on the scale
            return json.dumps({"rating": 2 if "ALPHA" in user else 7, "explanation": "shares 3 of 4 steps"})
        return base(messages)

    judge_model = ScriptedModel(judge)
    cfg = AIIdeaBenchConfig(data=DATA, generator="g", judge="j", n_ideas=2, metrics=["i2i"],
                            bootstrap_resamples=20)
    res = await arun("aiideabench", config=cfg, options=ExecutionOptions(out=tmp_path / "r", limit=2,
                                                                         progress=False, max_attempts=1),
                                      generator=ScriptedModel(gen), judge=judge_model, embed_fn=toy_embed)
    i2i = res["i2i"]["motivation"]
    assert i2i["n"] == 1 and i2i["mean"] == 4.0  # was n = 2, mean 3.0
    assert i2i["parse_failures"] == 1 and i2i["instances_undetermined"] == 1
