"""The shared reply readers: final verdicts, strict JSON fields, ratings, rankings, generated text."""

from __future__ import annotations

import json

import pytest

from ideaharness.errors import ParseError
from ideaharness.llm.parsing import (
    NoVerdict,
    check_text,
    extract_json_object,
    final_verdict,
    parse_rating,
    read_ranking,
    scale_value,
    verdict_pattern,
)

SCORE = verdict_pattern(r"score")


def _int(v: str) -> int:
    return int(v)


# ----------------------------------------------------------------------------- final verdicts


def test_the_last_verdict_counts_and_a_restated_format_is_none() -> None:
    assert final_verdict("Score: 1\nReason: first guess.\n\nOn reflection,\nScore: 4", SCORE, _int) == 4
    assert final_verdict("Answer as Score: 0-5 or Score: 0 to 5.\n\nScore: 3", SCORE, _int) == 3
    with pytest.raises(NoVerdict):
        final_verdict("Score: <an integer from 0 to 5>", SCORE, _int)


@pytest.mark.parametrize(
    "reply", ["Score: 3\nScore: 4", "Score: 3 or Score: 4", "**Score**: 3, **Score**: 4."]
)
def test_two_different_verdicts_in_the_final_section_are_ambiguous(reply: str) -> None:
    with pytest.raises(ParseError, match="two different"):
        final_verdict(reply, SCORE, _int)


def test_the_same_verdict_repeated_is_not_ambiguous() -> None:
    assert final_verdict("Score: 4\n**Score: 4**", SCORE, _int) == 4


def test_an_invalid_final_verdict_is_a_failure_not_a_reason_to_look_earlier() -> None:
    def on_scale(v: str) -> int:
        if not 0 <= int(v) <= 5:
            raise ParseError("off the scale")
        return int(v)

    with pytest.raises(ParseError, match="off the scale"):
        final_verdict("Score: 3\nReason: covers three points.\n\nScore: 7", SCORE, on_scale)


# ----------------------------------------------------------------------------- JSON


def test_json_object_is_the_last_one_holding_the_keys() -> None:
    reply = 'Format: {"rating": <1-10>}. Draft {"rating": 2}. Final: {"rating": 6, "explanation": "x"}'
    assert extract_json_object(reply, required=("rating",))["rating"] == 6
    assert extract_json_object('{"Rating": 3}', required=("rating",))["rating"] == 3
    with pytest.raises(ParseError, match="lacks"):
        extract_json_object('{"score": 3}', required=("rating",))
    with pytest.raises(ParseError):
        extract_json_object("no json at all", required=("rating",))
    with pytest.raises(ParseError, match="two different"):  # two final answers side by side
        extract_json_object('{"rating": 3}\n{"rating": 8}', required=("rating",))
    assert extract_json_object('{"rating": 3, "x": 1} {"rating": 3, "x": 2}', required=("rating",))["x"] == 2


@pytest.mark.parametrize("value", [11, 0, -1, "N/A", "", None, True, 7.5, "7 (high)", "3/5", [7], {"v": 7}])
def test_scale_value_refuses_everything_off_the_scale(value: object) -> None:
    with pytest.raises(ParseError):
        scale_value(value, 1, 10)


@pytest.mark.parametrize(("value", "expected"), [(7, 7), (7.0, 7), ("7", 7), (" 10 ", 10), ("4/10", 4)])
def test_scale_value_accepts_numbers_on_the_scale(value: object, expected: int) -> None:
    assert scale_value(value, 1, 10) == expected


# ----------------------------------------------------------------------------- ratings


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("On a scale of 1-10, I'd give this a 7", 7),
        ("Rating: 3\nExplanation: little overlap", 3),
        ("I'd say 9/10.", 9),
        ("6 out of 10", 6),
        ("On a scale from 1 to 10 the overlap is 2.", 2),
        ("**8**", 8),
        ("Rating: 1-10\n\nThe ideas share the catalyst.\nRating: 5", 5),
    ],
)
def test_rating_forms(text: str, expected: int) -> None:
    assert parse_rating(text, 1, 10) == expected


@pytest.mark.parametrize(
    "text",
    [
        "No rating here.",
        "Rating: 12",
        "Rating: 7.5",
        "the 2 ideas differ",  # a number in the text is not a rating
        "The ideas share 3 of 4 aims.",
        "Rating: 11. It covers 3 of the 4 aims.",  # off the scale: never the 3 or the 4
        "I'd give this a 3/5",  # another scale
        "Rating: 3\nRating: 8",
    ],
)
def test_bad_ratings_fail(text: str) -> None:
    with pytest.raises(ParseError):
        parse_rating(text, 1, 10)


# ----------------------------------------------------------------------------- rankings


@pytest.mark.parametrize(
    "reply",
    [
        "Ranking: B > C > D > A\n- A: solid but known.\n- B: most novel.\n- C: good.\n- D: fine.",
        "B > C > D > A",
        "**Final ranking:** Idea B, Idea C, Idea D, Idea A",
        "1. Idea B: most novel\n2. Idea C: good\n3. **Idea D**\n4. A - known already\n\nA and D are close.",
        '{"ranking": ["B", "C", "D", "A"], "rationale": "A, B, C and D differ; A > B on clarity only"}',
        '["Idea B", "Idea C", "Idea D", "Idea A"]',
        "I compared them.\nB, C, D, A\nIdea A restates known work.",
    ],
)
def test_ranking_is_read_as_written(reply: str) -> None:
    assert read_ranking(reply, "ABCD") == ["B", "C", "D", "A"]


@pytest.mark.parametrize(
    "reply",
    [
        "- A: good\n- B: better\n- C: best\n- D: worst",  # commentary, no ranking
        "Idea A is strong, Idea B is weak, C and D are fine.",
        "Ranking: B > C > D",  # omits A
        "Ranking: B > C > D > A > B",  # repeats B
        '{"ranking": ["B", "C", "E", "A"]}',  # unknown label, and JSON is never second-guessed
        '{"ranking": ["B", "C", "D"]}\nRanking: B > C > D > A',
        "Ranking: B > C > D > A\nRanking: A > B > C > D",  # two different final rankings
        "1. A new catalyst is proposed\n2. B",  # "A" as an article is not a label
    ],
)
def test_rankings_that_are_not_a_complete_written_permutation_fail(reply: str) -> None:
    with pytest.raises(ParseError):
        read_ranking(reply, "ABCD")


def test_a_revised_ranking_counts() -> None:
    reply = "Ranking: A > B > C > D\n\nOn second thought, D is stronger than A.\n\nRanking: D > B > C > A"
    assert read_ranking(reply, "ABCD") == ["D", "B", "C", "A"]


# ----------------------------------------------------------------------------- generated text


@pytest.mark.parametrize(
    "text",
    [
        "", "   ", "\u200b", "\u200b\u200c\u2060\ufeff", "...", "…", "- - -", "!!!?",
        "I think both are interesting; it depends.",
        "I'm sorry, but I cannot propose a hypothesis for this question without more data.",
        "As an AI language model, I am unable to generate research hypotheses on this topic.",
        "x7#qP!2 Zr@9kL%w vB4&eM*1 tY6^nC(3 hU8)jF-5 gD0_sA=7 oI2+lK{9",
        "short idea",
    ],
)
def test_degenerate_texts_are_not_ideas(text: str) -> None:
    with pytest.raises(ParseError):
        check_text(text, "idea")


def test_real_prose_passes_and_is_cleaned() -> None:
    text = ("\u200bBy integrating guanidine sulfate (Gdm)2SO4 into a poly(vinyl alcohol) hydrogel and "
            "freezing it directionally, the thermopower rises to -21.5 mV/K while the gel stays tough.\n")
    assert check_text(text, "idea") == text.replace("\u200b", "").strip()
    assert check_text("Step 1: make the gel.\nStep 2: measure the Seebeck coefficient.", "plan", min_words=6)


def test_messages_name_what_failed() -> None:
    with pytest.raises(ParseError, match="idea 2 is empty"):
        check_text(json.loads('"\\u200b"'), "idea 2")
