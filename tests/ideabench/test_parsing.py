"""Parsing of ratings and generated ideas; prompts with braces in paper or model text."""

from __future__ import annotations

import pytest

from ideaharness.benchmarks.ideabench import parse_ideas, parse_overlap
from ideaharness.errors import ParseError
from ideaharness.llm.parsing import parse_rating
from ideaharness.prompts import render


def test_scale_phrase_is_not_the_rating() -> None:
    assert parse_rating("On a scale of 1-10, I'd give this a 7", 1, 10) == 7


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Rating: 3\nExplanation: little overlap", 3),
        ("I'd say 9/10.", 9),
        ("6 out of 10", 6),
        ("On a scale from 1 to 10 the overlap is 2.", 2),
    ],
)
def test_rating_forms(text: str, expected: int) -> None:
    assert parse_rating(text, 1, 10) == expected


@pytest.mark.parametrize("text", ["No rating here.", "Rating: 12", "Rating: 7.5"])
def test_bad_ratings_fail(text: str) -> None:
    with pytest.raises(ParseError):
        parse_rating(text, 1, 10)


def test_overlap_json_and_free_text() -> None:
    assert parse_overlap('{"rating": 4, "explanation": "partly"}') == {"rating": 4, "explanation": "partly"}
    assert parse_overlap("On a scale of 1-10, I'd give this a 7")["rating"] == 7


def test_parse_ideas_needs_exactly_n() -> None:
    reply = '```json\n{"ideas": [{"title": "a", "idea": "x"}, {"title": "b", "idea": "y"}]}\n```'
    assert [i["idea"] for i in parse_ideas(reply, 2)] == ["x", "y"]
    with pytest.raises(ParseError):
        parse_ideas(reply, 3)


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
