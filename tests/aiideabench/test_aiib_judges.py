"""Parsers of the AI Idea Bench judge replies, prompt rendering, and CLI user errors."""

from __future__ import annotations

import pytest

from ideaharness.benchmarks.aiideabench import judges as J
from ideaharness.errors import ParseError


def test_parse_imcq_variants() -> None:
    assert J.parse_imcq('{"closest_option": "b", "explanation": "x"}') == "B"
    assert J.parse_imcq('Sure: {"closest_plan": "Option C"}') == "C"
    for bad in ('{"closest_option": "E"}', '{"explanation": "A"}', "A"):
        with pytest.raises(ParseError):
            J.parse_imcq(bad)


def test_parse_ratings_keep_the_published_scale() -> None:
    assert J.parse_i2i('{"rating": 5, "explanation": ""}') == 5
    assert J.parse_i2i('{"motivation_similarity": {"rating": 2, "explanation": "x"}}') == 2
    with pytest.raises(ParseError):
        J.parse_i2i('{"rating": 0}')  # the published scale is 1-5
    with pytest.raises(ParseError):
        J.parse_i2i('{"rating": 3.5}')
    assert J.parse_i2t('{"motivation_alignment": 4, "experiment_plan_alignment": 2}') == {
        "motivation": 4, "experiment_plan": 2}
    nested = '{"motivation": {"alignment": 1, "comments": ""}, "experiment_plan": {"alignment": 5}}'
    assert J.parse_i2t(nested) == {"motivation": 1, "experiment_plan": 5}


def test_parse_compete_needs_final_choice() -> None:
    assert J.parse_compete('{"novelty": {"thinking_process": "x", "choice": 1}, "Final_choice": 0}') == {
        "final_choice": 0, "novelty": 1}
    with pytest.raises(ParseError):
        J.parse_compete('{"novelty": 1}')
    with pytest.raises(ParseError):
        J.parse_compete('{"final_choice": 2}')


def test_prompts_insert_text_as_data() -> None:
    tricky = "uses {braces} and {{ jinja }} and {% raw %}"
    msgs = J.imcq_messages("experiment_plan", tricky, ["a", "b", "c", "d"])
    assert tricky in msgs[-1]["content"] and "Option D:\n<option_d>\nd\n</option_d>" in msgs[-1]["content"]
    assert "experiment plan" in msgs[-1]["content"]
    msgs = J.compete_messages("topic", tricky, "other")
    assert tricky in msgs[-1]["content"]


def test_cli_user_errors_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    from ideaharness.cli import main

    for args, message in (
        (["--metric", "bogus"], "--metric 'bogus'"),
        (["--inconsistent", "x"], "--inconsistent"),
        (["--ideas", "/nonexistent/ideas.jsonl"], "--ideas"),
    ):
        with pytest.raises(SystemExit) as exc:
            main(["run", "aiideabench", *args])
        assert exc.value.code == 1
        assert message in capsys.readouterr().err
