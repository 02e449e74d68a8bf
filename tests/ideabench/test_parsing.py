"""IdeaBench reply parsers: overlap ratings, rankings, generated and target ideas; prompts with
braces in paper or model text. Regression tests of issue 9 (items 1-4) and issue 13 (item 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ideaharness
from ideaharness.benchmarks.ideabench import parse_ideas, parse_overlap, parse_target_idea
from ideaharness.errors import ParseError
from ideaharness.llm.parsing import parse_rating
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.metrics.ranking import parse_ranking
from ideaharness.prompts import render
from tests.ideabench.conftest import ideabench_responder

IDEA = "Dope the hydrogel with guanidinium to raise its thermopower, tested by Seebeck measurements."


def test_scale_phrase_is_not_the_rating() -> None:
    assert parse_rating("On a scale of 1-10, I'd give this a 7", 1, 10) == 7


def test_overlap_json_and_free_text() -> None:
    assert parse_overlap('{"rating": 4, "explanation": "partly"}') == {"rating": 4, "explanation": "partly"}
    assert parse_overlap("On a scale of 1-10, I'd give this a 7")["rating"] == 7
    # the final JSON object counts
    reply = 'Draft: {"rating": 2}\nFinal: {"rating": 6, "explanation": "same catalyst"}'
    assert parse_overlap(reply)["rating"] == 6


@pytest.mark.parametrize(
    "reply",
    [
        '{"rating": 11, "explanation": "covers 3 of the 4 aims"}',
        '{"rating": 0, "explanation": "the 2 ideas differ"}',
        '{"rating": "N/A", "explanation": "5 steps missing"}',
        '{"rating": 7.5, "explanation": "close to 8"}',
        '{"score": 7, "explanation": "rated 7"}',
        "Rating: 11. It covers 3 of the 4 aims.",
        "The 2 ideas differ.",
    ],
)
def test_off_scale_overlap_is_a_parse_failure_never_another_number(reply: str) -> None:
    """Issue 9.2: a present but invalid rating never falls back to numbers in the explanation."""
    with pytest.raises(ParseError):
        parse_overlap(reply)


def test_ranking_is_read_as_written_not_from_the_notes() -> None:
    """Issue 9.3: the chain counts, not the order in which the notes mention the labels."""
    reply = "Ranking: B > C > D > A\n- A: restates known work.\n- B: new.\n- C: good.\n- D: plausible."
    assert parse_ranking(reply, ["A", "B", "C", "D"]) == ["B", "C", "D", "A"]
    assert parse_ranking("B > D > A > C", ["A", "B", "C", "D"]) == ["B", "D", "A", "C"]


def test_free_text_ranking_gives_the_true_insight_score(tmp_path: Path) -> None:
    """Issue 9.3 end to end: a judge ranking the target last with alphabetical notes -> Insight 1.0."""
    base = ideabench_responder()

    def respond(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if "Rank the following" in user:
            ranked = json.loads(base(messages))["ranking"]  # the target last
            notes = "\n".join(f"- {label}: note on idea {label}." for label in sorted(ranked))
            return "Ranking: " + " > ".join(ranked) + "\n" + notes
        return base(messages)

    model = ScriptedModel(respond)
    results = ideaharness.run("ideabench", generator=model, judge=model, limit=3, out=tmp_path / "r",
                              progress=False)
    novelty = results["scenarios"]["low"]["insight"]["novelty"]
    assert novelty["m"] == 3 and novelty["parse_failures"] == 0
    assert novelty["insight_score"] == 1.0


def test_parse_ideas_needs_exactly_n() -> None:
    reply = json.dumps({"ideas": [{"title": "a", "idea": IDEA}, {"title": "b", "idea": IDEA + " Twice."}]})
    assert [i["idea"] for i in parse_ideas(reply, 2)] == [IDEA, IDEA + " Twice."]
    with pytest.raises(ParseError):
        parse_ideas(reply, 3)


@pytest.mark.parametrize("degenerate", ["", " ", "\u200b", "\u200b\u2060", "...", "…", "—", "I cannot help."])
def test_degenerate_ideas_are_parse_failures(degenerate: str) -> None:
    """Issue 9.4: whitespace, zero-width characters or punctuation are not ideas."""
    reply = json.dumps({"ideas": [{"title": "a", "idea": IDEA}, {"title": "b", "idea": degenerate}]})
    with pytest.raises(ParseError, match="idea 2"):
        parse_ideas(reply, 2)


def test_degenerate_ideas_are_never_scored_nor_judged(tmp_path: Path) -> None:
    """Issue 9.4 end to end: "..." / "\\u200b" ideas are generation parse failures (retried, counted)."""
    base = ideabench_responder()

    def respond(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if "propose" in user and '"ideas"' in user:
            return json.dumps({"ideas": [{"title": "t", "idea": x} for x in ("...", "\u200b", IDEA)]})
        return base(messages)

    model = ScriptedModel(respond)
    results = ideaharness.run("ideabench", generator=model, judge=model, limit=2, out=tmp_path / "r",
                              max_attempts=2, progress=False)
    low = results["scenarios"]["low"]
    assert low["generation_parse_failures"] == 2 and low["instances_generated"] == 0
    assert low["similarity"]["n"] == 0 and low["overlap"]["n"] == 0
    assert not any("Rate how much" in m[-1]["content"] for m, _ in model.calls)  # nothing sent to the judge


@pytest.mark.parametrize(
    "reply",
    [
        "I think both are interesting; it depends.",
        "Hypothesis: I'm sorry, but I cannot restate this paper's idea.",
        "I'm sorry, but I can't help with that request.",
        "Hypothesis: ...",
        "Hypothesis: \u200b",
        "Hypothesis: x7#qP!2 Zr@9kL%w vB4&eM*1 tY6^nC(3 hU8)jF-5 gD0_sA=7 oI2+lK{9 pQ3}",
        "The hydrogel is doped with guanidinium and tested, as the abstract describes in detail.",  # no label
    ],
)
def test_target_idea_must_have_the_demanded_form(reply: str) -> None:
    """Issue 13.2: a reply of 20+ characters is not yet a target idea."""
    with pytest.raises(ParseError):
        parse_target_idea(reply)


def test_target_idea_takes_the_text_after_the_label() -> None:
    reply = ("Hypothesis: Integrating guanidine sulfate into a poly(vinyl alcohol) hydrogel and freezing it "
             "directionally raises the thermopower while keeping the gel tough; tested by Seebeck and "
             "tensile measurements.")
    assert parse_target_idea(reply).startswith("Integrating guanidine sulfate")
    assert parse_target_idea("**Hypothesis:** " + reply.split(": ", 1)[1]).startswith("Integrating")


def test_braces_in_text_render_unchanged() -> None:
    idea = "Minimise {x_i} subject to {{ y }} and {% raw %} tags"
    messages = render(
        "ideabench_rank",
        domain="chemistry",
        ideas=[("A", idea), ("B", "plain")],
        indicator_name="novelty",
        indicator_definition=None,
        labels=["A", "B"],
    )
    assert idea in messages[-1]["content"]
