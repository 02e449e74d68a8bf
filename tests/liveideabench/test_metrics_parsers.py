"""LiveIdeaBench formulas (golden values from the published leaderboards, research notes §2, §4),
the parsers (final verdict on the stated scale; anything else a parse failure) and the bundled
keyword list."""

from __future__ import annotations

import csv
import hashlib
import json
import random
from importlib import resources
from pathlib import Path

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

LEADERBOARD_V1 = Path(__file__).parent / "fixtures" / "leaderboard_v1_202412.csv"


def test_v1_leaderboard_average_is_the_mean_of_four_columns_in_every_published_row() -> None:
    # the published v1 leaderboard, all 20 rows (results/LiveIdeaBench-202412.csv, fixtures/SOURCE.md)
    with LEADERBOARD_V1.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 20
    for row in rows:
        columns = [float(row[c]) for c in ("Fluency", "Feasibility", "Originality", "Flexibility")]
        assert leaderboard_average(columns) == pytest.approx(float(row["Average"]), abs=1e-12), row["Model"]


def test_v2_leaderboard_average_is_the_unweighted_mean_of_five_columns() -> None:
    # The formula on a worked example, not a published row: no v2 table with numbers is published
    # (assets/bench.png is a bar chart). (9 + 6 + 7 + 8 + 5) / 5 = 7.
    assert leaderboard_average([9.0, 6.0, 7.0, 8.0, 5.0]) == 7.0
    assert leaderboard_average([7.0, None, 5.0]) is None  # never a partial mean
    assert leaderboard_average([]) is None


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
    # the rule and the family pairs themselves: tests/liveideabench/test_parity.py


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
    "originality: 7, feasibility: 5, clarity: 6",  # values in prose only (published method 4 read it)
    "I cannot rate this idea.",
    # several conflicting objects: the published parser took the first, we took the last
    'Draft: {"originality": 3, "feasibility": 5, "clarity": 6}\nFinal: {"originality": 8, "feasibility": 5, '
    '"clarity": 6}',
    '{"originality": 8, "feasibility": 5, "clarity": 6, "originality": 2}',  # a dimension twice
    '{"originality": 8, "feasibility": 5, "clarity": 6}\nOn reflection, originality is 4.',  # text after it
    # a shuffled, half-dropped critique (what the fault proxy sends)
    'vague. "clarity": 6 ```json {"originality": 8, "feasibility": 5, analysis',
    '{"originality": 8, "feasibility": 5, "clarity": 6' + "}" * 0,  # cut off
    '{"originality": ' + "9" * 4301 + ', "feasibility": 5, "clarity": 6}',  # a 4,301-digit number
    "[" * 100_000 + "]" * 100_000,  # nested 100,000 deep
])
def test_critique_that_is_not_one_final_score_object_is_a_parse_failure(bad: str) -> None:
    with pytest.raises(ParseError):
        parse_critique(bad)


def test_critique_forms_that_are_one_answer() -> None:
    compact = '{"originality":8,"feasibility":5,"clarity":6}'
    expected = {"originality": 8, "feasibility": 5, "clarity": 6}
    for reply in (compact, f"Fine.\n```json\n{compact}\n```\n", f"[{compact}]", f"Scores: {compact}.",
                  f"Example kept: {compact} and again {compact}",  # a repeat, not a conflict
                  '{"Originality": 8, "feasibility": "5", "clarity": 6, "overall": 7}'):
        assert parse_critique(reply) == expected, reply


DIMS = ("originality", "feasibility", "clarity")


def _garble(text: str, rng: random.Random) -> str:
    words = text.split()
    rng.shuffle(words)
    return " ".join(words[: max(1, len(words) // 2)])


@given(st.fixed_dictionaries({d: st.integers(1, 10) for d in DIMS}), st.integers(0, 2**32 - 1),
       st.sampled_from(["fenced", "inline", "compact"]))
def test_critique_property_a_garbled_reply_never_reads_as_other_scores(
        scores: dict[str, int], seed: int, form: str) -> None:
    """Any reply with its words shuffled and half dropped either fails to parse or reads as the
    scores the judge gave (a compact object kept whole): never as other values."""
    body = {"fenced": "```json\n" + json.dumps(scores, indent=4) + "\n```", "inline": json.dumps(scores),
            "compact": json.dumps(scores, separators=(",", ":"))}[form]
    reply = f"The idea is novel in scope but vague on methods (score {scores['clarity']}).\n{body}"
    assert parse_critique(reply) == scores
    try:
        parsed = parse_critique(_garble(reply, random.Random(seed)))
    except ParseError:
        return
    assert parsed == scores


@given(st.dictionaries(st.sampled_from([*DIMS, "overall", "Originality"]),
                       st.one_of(st.integers(-5, 20), st.floats(0, 12), st.text("0123456789 ./", max_size=4),
                                 st.none()),
                       max_size=5),
       st.text(alphabet="abc .,{}\n\"", max_size=30), st.text(alphabet=" .`\n", max_size=5))
def test_critique_property(obj: dict[str, object], prose: str, tail: str) -> None:
    """The parser returns scores only when the final object gives every dimension once as an
    integer on 1-10 with nothing but closing markup after it, and then returns exactly those."""
    reply = f"{prose}\n```json\n{json.dumps(obj)}\n```{tail}"
    try:
        parsed = parse_critique(reply)
    except ParseError:
        return
    folded = {k.lower(): v for k, v in obj.items()}
    assert set(parsed) == set(DIMS)
    for d in DIMS:
        v = folded[d]
        assert isinstance(v, int | float | str) and not isinstance(v, bool)
        number = float(v.split("/")[0]) if isinstance(v, str) else v
        assert parsed[d] == number and 1 <= parsed[d] <= 10


@pytest.mark.parametrize(("reply", "grade"), [
    ("B", "B"), ("  c\n", "C"), ("**D**", "D"), ("(A)", "A"),
    ("B. Different ideas but addressing similar problems.", "B"),
    ("Answer: B", "B"),  # the published cleaned[0] reads this as A (10 points)
    ("The two ideas share a method.\nThe answer is C.", "C"),
])
def test_fluency_grade_is_read_as_written(reply: str, grade: str) -> None:
    assert parse_fluency(reply) == grade


@pytest.mark.parametrize("reply", ["A comparison shows they are similar", "They are similar.", "",
                                   "Answer: B or C", "E",
                                   # two different grades: not one answer (a shuffled reply can read so)
                                   "C) Answer: B (not", "B\nC. is close too", "Answer: B. Answer: C"])
def test_fluency_without_a_grade_is_a_parse_failure(reply: str) -> None:
    with pytest.raises(ParseError):
        parse_fluency(reply)


@given(st.sampled_from("ABCD"), st.sampled_from(["{}", "**{}**", "{}.", "({})", "Answer: {}"]))
def test_fluency_property(grade: str, form: str) -> None:
    assert parse_fluency(form.format(grade)) == grade


@given(st.sampled_from("ABCD"), st.sampled_from("ABCD"), st.integers(0, 2**32 - 1))
def test_fluency_property_a_garbled_reply_never_reads_as_another_grade(grade: str, other: str,
                                                                      seed: int) -> None:
    """A reply giving one grade (the other letter only as a word) shuffled and half dropped either
    fails to parse or reads as that grade."""
    reply = f"{grade}. The ideas differ in method, not in aim, so {other} would overstate it."
    assert parse_fluency(reply) == grade
    try:
        parsed = parse_fluency(_garble(reply, random.Random(seed)))
    except ParseError:
        return
    assert parsed == grade


def test_idea_is_cleaned_and_refusals_fail() -> None:
    parsed = parse_idea("Use\tgraphene\nsensors to detect   early earthquakes from ground strain.")
    assert parsed == {"idea": "Use graphene sensors to detect early earthquakes from ground strain.",
                      "words": 10}
    for bad in ("I'm sorry, but I cannot help with that request.", "...", "ok"):
        with pytest.raises(ParseError):
            parse_idea(bad)


IDEA = ("Idea on meteorology: we propose pairing sparse sensor networks with a coupled lattice model "
        "(Smith et al. 2020) to improve short-range forecasts, e.g. of convective storms. The model "
        "assimilates humidity data every minute. A controlled field trial would test it against radar.")


@pytest.mark.parametrize("good", [
    IDEA,
    "mRNA vaccines could be delivered by gel patches to improve uptake in remote clinics.",
    "**Idea:** Measure soil pH with dyes.\n- Step 1: sample the field\n- Step 2: image the dye",
    "Sensors, cameras etc. are placed near faults, and vs. the baseline we compare strain rates.",
])
def test_complete_ideas_parse(good: str) -> None:
    assert parse_idea(good)["idea"] == " ".join(good.split())


@pytest.mark.parametrize("bad", [
    IDEA.rsplit(" ", 6)[0],  # cut off mid-sentence
    "sensors improve forecasts of storms in the plains using lattice models.",  # opens mid-sentence
    "We propose sensors. the model assimilates data every minute. A trial tests it.",
    "We propose sensors 2020) to improve forecasts (Smith of storms.",
    "We propose the to improve forecasts of storms with sensors.",
])
def test_incomplete_or_shuffled_ideas_are_parse_failures(bad: str) -> None:
    with pytest.raises(ParseError):
        parse_idea(bad)


def test_shuffled_halves_of_an_idea_are_rejected() -> None:
    """Over 2,000 seeded shuffles of a 46-word idea cut to half, at most 0.25 % parse (measured:
    see the report); a parsed one would be a reply that is not the generator's idea."""
    passed = 0
    for seed in range(2000):
        try:
            parse_idea(_garble(IDEA, random.Random(seed)))
            passed += 1
        except ParseError:
            pass
    assert passed <= 5


def test_bundled_keywords_are_the_published_list() -> None:
    keywords = bundled_keywords()
    assert len(keywords) == 1180 and len({k.id for k in keywords}) == 1180
    assert keywords[0].id == "meteorology" and keywords[-1].id == "chemical thermodynamics"
    assert len({k.category for k in keywords}) == 22
    assert sum(k.category == "Physics" for k in keywords) == 210
    folder = resources.files("ideaharness.benchmarks.liveideabench").joinpath("data")
    data, source = folder.joinpath("keywords.csv").read_bytes(), folder.joinpath("SOURCE.md").read_text()
    assert hashlib.sha256(data).hexdigest() in source
