"""LiveIdeaBench formulas (golden values from the published leaderboards, research notes §2, §4),
the parsers (final verdict on the stated scale; anything else a parse failure) and the bundled
keyword list."""

from __future__ import annotations

import hashlib
import json
from importlib import resources

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ideaharness.benchmarks.liveideabench import (
    bundled_keywords,
    flexibility,
    fluency_value,
    leaderboard_average,
    model_family,
    parse_critique,
    parse_fluency,
    parse_idea,
)
from ideaharness.errors import ParseError


def test_v1_leaderboard_average_is_the_mean_of_four_columns() -> None:
    # results/LiveIdeaBench-202411.csv @ 04b59fad, rank 1 and rank 20 (notes §4)
    gemini = [8.876354704711348, 6.839345637583893, 7.313968120805369, 7.666666666666667]
    assert leaderboard_average(gemini) == pytest.approx(7.674083782441819, abs=1e-12)
    llama = [7.2474600477285795, 6.7040959040959045, 6.348051948051948, 6.111111]
    assert leaderboard_average(llama) == pytest.approx(6.602679724969109, abs=1e-12)


def test_v2_leaderboard_average_is_the_mean_of_five_columns() -> None:
    # stats_flexibility.ipynb (fork @ 07a2d8a9): claude-3.7-sonnet:thinking, originality implied (notes §4)
    row = [7.477186, 5.703672, 8.0649, 7.807936, 7.041667]
    assert leaderboard_average(row) == pytest.approx(7.219065, abs=1e-5)
    assert leaderboard_average([7.0, None, 5.0]) is None  # never a partial mean


def test_fluency_grades() -> None:
    assert [fluency_value(g, "v1") for g in "ABCD"] == pytest.approx([10, 6.6667, 3.3333, 0], abs=1e-4)
    assert [fluency_value(g, "v2") for g in "ABCD"] == [10, 7, 4, 1]  # the v2 remap onto 1..10


def test_flexibility_is_the_30th_percentile_over_keywords() -> None:
    means = [7.0, 5.5, 8.0, 6.0, 9.0, 4.0]
    assert flexibility(means) == pytest.approx(np.percentile(means, 30))
    # linear interpolation by hand: sorted 4, 5.5, 6, 7, 8, 9; position 0.3 * 5 = 1.5 -> 5.75
    assert flexibility(means) == pytest.approx(5.75)
    assert flexibility(means[:4]) is None  # fewer than 5 keywords: no value (published NaN)


def test_model_family() -> None:
    assert model_family("openai/anthropic/claude-3.7-sonnet:thinking") == model_family("x/claude-3.7-sonnet")
    assert model_family("local/qwen2.5-coder-0.5b") != model_family("local/qwen2.5-coder-1.5b")


V2_REPLY = ("The idea is {bold} but vague.\n```json\n{\n  \"originality\": 8,\n  \"feasibility\": 5,\n"
            "  \"clarity\": 6\n}```")


def test_critique_reads_the_final_score_block() -> None:
    assert parse_critique(V2_REPLY) == {"originality": 8, "feasibility": 5, "clarity": 6}
    v1 = 'SCORES = {\n    "originality": 7,\n    "feasibility": 4\n}'
    assert parse_critique(v1, "v1") == {"originality": 7, "feasibility": 4}


@pytest.mark.parametrize("bad", [
    '{"originality": 11, "feasibility": 5, "clarity": 6}',
    '{"originality": 0, "feasibility": 5, "clarity": 6}',
    '{"originality": 7.5, "feasibility": 5, "clarity": 6}',
    '{"originality": "N/A", "feasibility": 5, "clarity": 6}',
    '{"originality": 7, "feasibility": 5}',  # clarity missing (published: None -> invalid as well)
    "originality: 7, feasibility: 5, clarity: 6",  # no score object (published method 4 read it)
    "I cannot rate this idea.",
])
def test_critique_off_scale_or_missing_is_a_parse_failure(bad: str) -> None:
    with pytest.raises(ParseError):
        parse_critique(bad)


@given(st.fixed_dictionaries({d: st.integers(-5, 20) for d in ("originality", "feasibility", "clarity")}),
       st.text(alphabet="abc .,\n", max_size=40))
def test_critique_property(scores: dict[str, int], prose: str) -> None:
    reply = f"{prose}\n```json\n{json.dumps(scores)}\n```"
    if all(1 <= v <= 10 for v in scores.values()):
        assert parse_critique(reply) == scores
    else:
        with pytest.raises(ParseError):
            parse_critique(reply)


@pytest.mark.parametrize(("reply", "grade"), [
    ("B", "B"), ("  c\n", "C"), ("**D**", "D"), ("(A)", "A"),
    ("B. Different ideas but addressing similar problems.", "B"),
    ("Answer: B", "B"),  # the published cleaned[0] reads this as A (10 points)
    ("The two ideas share a method.\nThe answer is C.", "C"),
])
def test_fluency_grade_is_read_as_written(reply: str, grade: str) -> None:
    assert parse_fluency(reply) == grade


@pytest.mark.parametrize("reply", ["A comparison shows they are similar", "They are similar.", "",
                                   "Answer: B or C", "E"])
def test_fluency_without_a_grade_is_a_parse_failure(reply: str) -> None:
    with pytest.raises(ParseError):
        parse_fluency(reply)


@given(st.sampled_from("ABCD"), st.sampled_from(["{}", "**{}**", "{}.", "({})", "Answer: {}"]))
def test_fluency_property(grade: str, form: str) -> None:
    assert parse_fluency(form.format(grade)) == grade


def test_idea_is_cleaned_and_refusals_fail() -> None:
    parsed = parse_idea("Use\tgraphene\nsensors to detect   early earthquakes from ground strain.")
    assert parsed == {"idea": "Use graphene sensors to detect early earthquakes from ground strain.",
                      "words": 10}
    for bad in ("I'm sorry, but I cannot help with that request.", "...", "ok"):
        with pytest.raises(ParseError):
            parse_idea(bad)


def test_bundled_keywords_are_the_published_list() -> None:
    keywords = bundled_keywords()
    assert len(keywords) == 1180 and len({k.id for k in keywords}) == 1180
    assert keywords[0].id == "meteorology" and keywords[-1].id == "chemical thermodynamics"
    assert len({k.category for k in keywords}) == 22
    assert sum(k.category == "Physics" for k in keywords) == 210
    data = resources.files("ideaharness").joinpath("data/bundled/liveideabench/keywords.csv").read_bytes()
    source = resources.files("ideaharness").joinpath("data/bundled/liveideabench/SOURCE.md").read_text()
    assert hashlib.sha256(data).hexdigest() in source
