"""MLR-Bench parsers: the published reviews read to their scores, strictness (a malformed reply
is a parse failure, never a score) and property tests over any scores and any surrounding text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ideaharness.benchmarks.mlrbench.parsers import DIMENSIONS, parse_idea, parse_proposal, parse_review
from ideaharness.errors import ParseError
from tests.mlrbench.replies import IDEA, PROPOSAL

FIXTURES = Path(__file__).parent / "fixtures"
UPSTREAM_KEYS = {"consistency": "Consistency", "clarity": "Clarity", "novelty": "Novelty",
                 "soundness": "Soundness", "feasibility": "Feasibility", "significance": "Significance",
                 "overall": "OverallAssessment"}


@pytest.mark.parametrize(("name", "stage", "expected"), [
    ("published_review_idea_claude_ministral.json", "idea",
     {"consistency": 9, "clarity": 8, "novelty": 7, "feasibility": 6, "significance": 8, "overall": 7}),
    ("published_review_proposal_gemini_ministral.json", "proposal",
     {"consistency": 9, "clarity": 7, "novelty": 8, "soundness": 6, "feasibility": 7, "significance": 9,
      "overall": 7}),
])
def test_published_reviews_read_to_their_scores(name: str, stage: str, expected: dict[str, int]) -> None:
    """Golden values: the scores in the upstream review files (fixtures/SOURCE.md), read from the
    file fenced as a judge's reply with prose around it."""
    text = (FIXTURES / name).read_text()
    assert parse_review(f"Here is my review.\n```json\n{text}\n```\nThank you.", stage) == expected


def test_the_upstream_template_form_with_trailing_commas_is_read() -> None:
    body = ",\n".join(f'"{UPSTREAM_KEYS[d]}": {{"score": 7, "justification": "fine",}}'
                      for d in DIMENSIONS["idea"])
    assert parse_review("```json\n{" + body + ",\n}\n```", "idea") == dict.fromkeys(DIMENSIONS["idea"], 7)


def test_bare_numbers_and_number_strings_are_scores() -> None:
    reply = json.dumps({"consistency": 3, "clarity": "4", "novelty": "5/10", "feasibility": 6,
                        "significance": 7, "overall_assessment": {"score": 8}})
    assert parse_review(reply, "idea") == {"consistency": 3, "clarity": 4, "novelty": 5, "feasibility": 6,
                                           "significance": 7, "overall": 8}


def test_a_stray_bracket_is_read_from_the_labelled_scores() -> None:
    """A real 0.5B reply (Qwen2.5-Coder-0.5B on iclr2023_bands): ``[""])`` for ``[""]}`` breaks the
    JSON, yet every dimension is written with its score once."""
    reply = ('```json\n{\n  "consistency": {"score": 7, "justification": "Addresses the call."},\n'
             '  "clarity": {"score": 5, "justification": "Well defined."},\n'
             '  "novelty": {"score": 5, "justification": "Off-topic."},\n'
             '  "feasibility": {"score": 8, "justification": "Straightforward."},\n'
             '  "significance": {"score": 6, "justification": "Relevant."},\n'
             '  "overall": {"score": 6, "strengths": ["Defining attacks"], "weaknesses": [""])\n}\n```')
    assert parse_review(reply, "idea") == {"consistency": 7, "clarity": 5, "novelty": 5, "feasibility": 8,
                                           "significance": 6, "overall": 6}
    with pytest.raises(ParseError, match="two different scores"):
        parse_review(reply.replace('  "overall"', '  "novelty": {"score": 9},\n  "overall"'), "idea")
    with pytest.raises(ParseError):  # the overall assessment cut off before its score
        parse_review(reply.split('"overall"')[0], "idea")


def test_a_wrapped_review_object_is_read() -> None:
    inner = {d: {"score": 2} for d in DIMENSIONS["idea"]}
    assert parse_review(json.dumps({"review": inner}), "idea") == dict.fromkeys(DIMENSIONS["idea"], 2)


def _review(stage: str, **override: object) -> str:
    scores: dict[str, object] = {d: {"score": 6, "justification": "x"} for d in DIMENSIONS[stage]}
    scores.update(override)
    return json.dumps({k: v for k, v in scores.items() if v is not None})


@pytest.mark.parametrize("reply", [
    "The idea is good. Consistency: 8, clarity: 7, novelty: 6, feasibility: 5, significance: 6, overall 7.",
    _review("idea", novelty={"score": 11}),
    _review("idea", novelty={"score": 0}),
    _review("idea", novelty={"score": 7.5}),
    _review("idea", novelty={"score": "N/A"}),
    _review("idea", novelty={"score": True}),
    _review("idea", novelty={"justification": "no score given"}),
    _review("idea", overall=None),  # the overall assessment missing
    _review("proposal", soundness=None),
    _review("idea") + "\n" + _review("idea", clarity={"score": 2}),  # two different verdicts
    _review("idea") + '\nCorrection: {"clarity": {"score": 2}}',  # a later, partial answer
    '{"Overall": {"score": 5}, ' + _review("idea")[1:],  # Overall and overall: one dimension twice
    "",
    "x" * 70_000,
])
def test_malformed_reviews_are_parse_failures(reply: str) -> None:
    stage = "proposal" if reply == _review("proposal", soundness=None) else "idea"
    with pytest.raises(ParseError):
        parse_review(reply, stage)


def test_the_idea_rubric_is_not_enough_for_a_proposal() -> None:
    with pytest.raises(ParseError, match="soundness"):
        parse_review(_review("idea"), "proposal")


def test_an_unknown_stage_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        parse_review(_review("idea"), "paper")


def test_ideas_and_proposals() -> None:
    idea = parse_idea(IDEA.format(topic="backdoors"))
    assert idea["title"] == "Cross-domain probes for backdoors" and idea["words"] > 30
    proposal = parse_proposal(PROPOSAL.format(topic="backdoors"))
    assert proposal["title"] == "Cross-domain probes for backdoors" and proposal["words"] > 100
    for bad in ("", "I'm sorry, but I cannot help with that request because it is outside my scope today.",
                "$$ ## !! ?? " * 40, "Title: too short"):
        with pytest.raises(ParseError):
            parse_idea(bad)
    with pytest.raises(ParseError):
        parse_proposal(IDEA.format(topic="x"))  # an idea is too short to be a proposal


scores_st = st.integers(min_value=1, max_value=10)


def _not_on_the_scale(value: float) -> bool:
    return not (1 <= value <= 10 and value == int(value))
prose = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="{}"), max_size=200)


@settings(max_examples=200, deadline=None)
@given(stage=st.sampled_from(sorted(DIMENSIONS)), data=st.data(), before=prose, after=prose,
       fence=st.booleans(), upstream_keys=st.booleans(), bare=st.booleans())
def test_any_well_formed_review_reads_to_its_scores(stage: str, data: st.DataObject, before: str, after: str,
                                                    fence: bool, upstream_keys: bool, bare: bool) -> None:
    """Whatever the scores, key spelling and the prose around the object, the parser returns the
    scores given."""
    scores = {d: data.draw(scores_st) for d in DIMENSIONS[stage]}
    obj = {UPSTREAM_KEYS[d] if upstream_keys else d: (v if bare else {"score": v, "justification": "j"})
           for d, v in scores.items()}
    body = json.dumps(obj, indent=data.draw(st.sampled_from([None, 2])))
    reply = f"{before}\n```json\n{body}\n```\n{after}" if fence else f"{before}\n{body}\n{after}"
    assert parse_review(reply, stage) == scores


@settings(max_examples=200, deadline=None)
@given(stage=st.sampled_from(sorted(DIMENSIONS)), data=st.data(), off=st.one_of(
    st.integers(max_value=0), st.integers(min_value=11), st.floats().filter(_not_on_the_scale)))
def test_one_off_scale_score_fails_the_whole_review(stage: str, data: st.DataObject, off: float) -> None:
    """A score off the 1-10 integer scale is never clipped, rounded or skipped: the reply fails."""
    scores: dict[str, object] = {d: data.draw(scores_st) for d in DIMENSIONS[stage]}
    scores[data.draw(st.sampled_from(DIMENSIONS[stage]))] = off
    try:
        reply = json.dumps(scores)
    except ValueError:
        return
    with pytest.raises(ParseError):
        parse_review(reply, stage)


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=400), stage=st.sampled_from(sorted(DIMENSIONS)))
def test_any_text_is_scores_on_the_scale_or_a_parse_failure(text: str, stage: str) -> None:
    """Any reply at all: either every dimension on 1-10 or a ParseError (never another exception)."""
    try:
        scores = parse_review(text, stage)
    except ParseError:
        return
    assert set(scores) == set(DIMENSIONS[stage]) and all(1 <= v <= 10 for v in scores.values())
