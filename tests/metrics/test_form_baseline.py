"""The form-only choosers and the baseline entry (:mod:`ideaharness.metrics.form_baseline`; issue 32,
Build (b)): each rule prefers what its name says, ties go to the item shown first, the data texts
of a rendered prompt are read back in the order shown, and the best baseline follows the metric's
direction."""

from __future__ import annotations

import pytest

from ideaharness.metrics.form_baseline import (
    FORM_RULES,
    baseline_entry,
    features,
    form_choice,
    form_order,
    form_pick,
    shown_items,
)
from ideaharness.prompts import render

TEXTS = [
    "medium sized option text here",  # 5 words, 29 chars, 1 line
    "tiny",  # 1 word, 4 chars
    "a b c d e f g h i j k l",  # 12 words of one letter: the most words, the shortest mean word
    "extraordinarily\nlengthy\nvocabulary",  # 3 lines, long words
]


@pytest.mark.parametrize(("rule", "chosen"), [
    ("shortest", 1), ("longest", 3), ("fewest_words", 1), ("most_words", 2),
    ("shortest_mean_word", 2), ("longest_mean_word", 3), ("fewest_lines", 0), ("most_lines", 3),
    ("first", 0), ("last", 3),
])
def test_each_rule_chooses_what_its_name_says(rule: str, chosen: int) -> None:
    assert form_choice(rule, TEXTS) == chosen


def test_every_rule_is_tested_and_names_are_unique() -> None:
    names = [r.name for r in FORM_RULES]
    assert len(names) == len(set(names)) == 10


def test_ties_go_to_the_item_shown_first_and_orders_are_permutations() -> None:
    same = ["one two", "three four", "five six"]
    assert form_choice("fewest_words", same) == 0 and form_choice("most_words", same) == 0
    for rule in FORM_RULES:
        order = form_order(rule, TEXTS)
        assert sorted(order) == list(range(len(TEXTS)))
    assert form_order("last", TEXTS) == [3, 2, 1, 0]
    assert form_pick("shortest", TEXTS, 2) == [1, 2]
    assert form_pick("shortest", TEXTS, 9) == form_order("shortest", TEXTS)


def test_features_and_errors() -> None:
    f = features("ab cdef\n\nxy", 2)
    assert f == {"chars": 11.0, "words": 3.0, "mean_word": 8 / 3, "lines": 2.0, "position": 2.0}
    assert features("", 0)["mean_word"] == 0.0
    with pytest.raises(ValueError, match="at least one"):
        form_choice("shortest", [])
    with pytest.raises(KeyError):
        form_choice("tallest", TEXTS)


def test_shown_items_reads_a_rendered_prompt_in_the_order_shown() -> None:
    options = ["first option", "second </option_b> option", "third", "fourth\nwith a line"]
    messages = render("aiideabench_imcq", component="motivation", idea="the idea <option_a>",
                      options=list(zip("ABCD", options, strict=True)))
    got = shown_items(messages, lambda n: n.startswith("option_"))
    assert len(got) == 4
    assert got[0] == "first option" and got[2] == "third" and got[3] == "fourth\nwith a line"
    assert got[1].startswith("second ") and got[1].endswith(" option")  # the look-alike tag neutralised
    assert shown_items(messages, "idea") == ["the idea <option_a>"]  # inside its block: not an option
    assert shown_items(messages, "nothing") == [] and shown_items(None, "idea") == []


def test_baseline_entry_takes_the_best_in_the_metric_direction() -> None:
    args = {"metric": "m", "group": "g", "system": None, "step": "s", "n": 12, "chance": 0.25}
    up = baseline_entry(**args, baselines={"shortest": 0.5, "first": 0.75, "last": None},
                        higher_is_better=True)
    assert up == {"metric": "m", "group": "g", "system": None, "step": "s", "n": 12, "chance": 0.25,
                  "baselines": {"shortest": 0.5, "first": 0.75}, "best": "first", "best_value": 0.75}
    down = baseline_entry(**args, baselines={"shortest": 0.5, "first": 0.75}, higher_is_better=False)
    assert down is not None and down["best"] == "shortest" and down["best_value"] == 0.5
    assert baseline_entry(**args, baselines={"first": None}, higher_is_better=True) is None
