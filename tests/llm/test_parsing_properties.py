"""Property tests of the reply parsers (hypothesis): the final verdict is read whatever prose
surrounds it, an off-scale JSON verdict is always a parse failure, and a ranking written as a chain
is always read as that permutation (issue 9, items 1-3)."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ideaharness.benchmarks.aiideabench.judges import parse_i2i, parse_i2t
from ideaharness.benchmarks.ideabench.parsers import parse_overlap
from ideaharness.benchmarks.ligbench.steps import parse_comparison, parse_initial_scores
from ideaharness.errors import ParseError
from ideaharness.llm.parsing import parse_rating
from ideaharness.metrics.matched_score import parse_matched_score
from ideaharness.metrics.pairwise_ranking import parse_pairwise_choice
from ideaharness.metrics.ranking import parse_ranking

PROPERTIES = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# prose: ordinary words and bare numbers ("covers 3 of the 4 aims"), never a verdict label
WORDS = ("the hypothesis covers of aims key points catalyst mechanism hydrogel both ideas differ in approach "
         "and it uses a new salt at room temperature with strong evidence but weak links to prior work "
         "first second this that analysis because however overall").split()
word = st.one_of(st.sampled_from(WORDS), st.integers(0, 12).map(str))
sentence = st.lists(word, min_size=3, max_size=14).map(lambda ws: " ".join(ws).capitalize() + ".")
prose = st.lists(sentence, min_size=0, max_size=4).map(" ".join)
markup = st.sampled_from(["{}", "**{}**", "*{}*", "### {}", "- {}", "> {}"])


def _label(label: str, value: str, wrap: str, bold_value: bool) -> str:
    return wrap.format(label) + ": " + (f"**{value}**" if bold_value else value)


# ----------------------------------------------------------------------------- 1. the final verdict


@PROPERTIES
@given(score=st.integers(0, 5), before=prose, between=prose, after=prose, wrap=markup, bold=st.booleans(),
       restate=st.sampled_from(["", "Matched score: <an integer from 0 to 5>", "Matched score: 0-5",
                                "Answer format: Matched score: 0 to 5", "Matched score: [0-5]"]))
def test_matched_score_is_the_final_verdict(score: int, before: str, between: str, after: str, wrap: str,
                                            bold: bool, restate: str) -> None:
    reply = "\n\n".join(p for p in (before, restate, between) if p)
    reply += "\n\n" + _label("Matched score", str(score), wrap, bold) + "\nReason: " + after
    assert parse_matched_score(reply) == score


@PROPERTIES
@given(choice=st.integers(1, 2), before=prose, analysis=prose, after=prose, wrap=markup,
       label=st.sampled_from(["Selection of research hypothesis candidate", "Selection"]),
       restate=st.booleans(), word_form=st.sampled_from(["candidate {}", "Candidate {}", "{}"]))
def test_selection_is_the_final_verdict(choice: int, before: str, analysis: str, after: str, wrap: str,
                                        label: str, restate: bool, word_form: str) -> None:
    parts = [before]
    if restate:
        parts.append(_label(label, "candidate 1 or candidate 2", wrap, False))
    parts += ["**Analysis**: " + analysis, _label(label, word_form.format(choice), wrap, False)]
    reply = "\n\n".join(p for p in parts if p) + ("\n\n" + after if after else "")
    assert parse_pairwise_choice(reply) == choice


@PROPERTIES
@given(rating=st.integers(1, 10), before=prose, after=prose, wrap=markup,
       restate=st.sampled_from(["", "Rating: 1-10", "Rating: 1 to 10", "Rating: <integer from 1 to 10>"]))
def test_free_text_rating_is_the_final_verdict(rating: int, before: str, after: str, wrap: str,
                                               restate: str) -> None:
    reply = "\n\n".join(p for p in (restate, before) if p)
    reply += "\n\n" + _label("Rating", str(rating), wrap, False) + "\nExplanation: " + after
    assert parse_rating(reply, 1, 10) == rating


def test_a_number_opening_the_next_line_is_not_a_restated_format() -> None:
    """Found by the property test above: "To 0 the." on the line after the verdict was read as the
    range "1 to 0", so the reply had no verdict. Alternatives, ranges and denominators continue the
    verdict's own line."""
    assert parse_pairwise_choice("**Analysis**: x\n\nSelection: candidate 1\n\nTo 0 the.") == 1
    assert parse_pairwise_choice("Selection of research hypothesis candidate: 2\n- 1 point remains") == 2
    assert parse_rating("Rating: 7\n/ 3 of the aims are met", 1, 10) == 7
    assert parse_rating("Rating: 7\nOut of 3 aims, two are met.", 1, 10) == 7
    with pytest.raises(ParseError):  # on the same line it is still a restated format
        parse_pairwise_choice("Selection: candidate 1 or candidate 2")


# ----------------------------------------------------------------------------- 2. off-scale JSON

def off_scale(low: int, high: int) -> st.SearchStrategy[object]:
    return st.one_of(
        st.integers(high + 1, 10_000), st.integers(-10_000, low - 1),
        st.floats(low, high).filter(lambda x: x != int(x)),
        st.sampled_from(["N/A", "", "none", "high", "unknown", None, True, False, [], {}]),
    )


@PROPERTIES
@given(data=st.data(), explanation=prose)
def test_off_scale_json_verdicts_are_parse_failures(data: st.DataObject, explanation: str) -> None:
    # the explanation is full of in-scale numbers: none of them may become the verdict
    explanation += " It covers 3 of the 4 aims; the 2 ideas differ in 5 steps."
    cases = [
        (parse_overlap, "rating", 1, 10),
        (parse_matched_score, "matched_score", 0, 5),
        (parse_i2i, "rating", 1, 5),
    ]
    for parse, key, low, high in cases:
        value = data.draw(off_scale(low, high))
        reply = json.dumps({key: value, "explanation": explanation})
        with pytest.raises(ParseError):
            parse(reply)
    bad = data.draw(off_scale(1, 5))
    with pytest.raises(ParseError):
        parse_i2t(json.dumps({"motivation_alignment": bad, "experiment_plan_alignment": 3,
                              "comments": explanation}))
    bad = data.draw(st.one_of(st.floats(5.001, 1e6), st.floats(-1e6, -0.001), st.sampled_from(["N/A", None])))
    with pytest.raises(ParseError):
        parse_initial_scores(json.dumps({"rating": bad, "contribution": 2, "soundness": 2, "novelty": 2,
                                         "note": explanation}))
    bad = data.draw(st.one_of(st.integers(2, 100), st.sampled_from([0.25, 0.75, -1, "maybe", None])))
    with pytest.raises(ParseError):
        parse_comparison(explanation + json.dumps({"rating": bad, "soundness": 1, "contribution": 0}))


# ----------------------------------------------------------------------------- 3. rankings

labels_and_order = st.integers(2, 8).flatmap(
    lambda n: st.tuples(st.just(list(string.ascii_uppercase[:n])),
                        st.permutations(list(string.ascii_uppercase[:n])))
)


def _token(label: str, style: int) -> str:
    return [label, f"Idea {label}", f"**{label}**", f"**Idea {label}**", f"({label})"][style]


@PROPERTIES
@given(lo=labels_and_order, form=st.sampled_from([">", ",", "numbered", "json", "json-object"]),
       labelled=st.booleans(), style=st.integers(0, 4), before=prose, notes=st.data())
def test_a_chain_is_read_as_written_whatever_the_commentary(lo: tuple[list[str], list[str]], form: str,
                                                           labelled: bool, style: int, before: str,
                                                           notes: st.DataObject) -> None:
    labels, order = lo
    if form == ">":
        chain = " > ".join(_token(x, style) for x in order)
        chain = ("Ranking: " if labelled else "") + chain
    elif form == ",":
        chain = ("Final ranking: " if labelled else "") + ", ".join(_token(x, style) for x in order)
    elif form == "numbered":
        chain = "\n".join(f"{i}. {_token(x, style)}: " + notes.draw(sentence) for i, x in enumerate(order, 1))
    elif form == "json":
        chain = json.dumps([f"Idea {x}" if style % 2 else x for x in order])
    else:
        chain = json.dumps({"ranking": order, "rationale": notes.draw(prose)})
    # commentary after the ranking mentions the labels in another (often alphabetical) order
    mention = notes.draw(st.permutations(labels))
    commentary = "\n".join(
        notes.draw(st.sampled_from(["- {}: ", "Idea {} ", "{} is "])).format(x) + notes.draw(sentence)
        for x in mention
    )
    reply = "\n\n".join(p for p in (before, chain, commentary) if p)
    assert parse_ranking(reply, labels) == order
