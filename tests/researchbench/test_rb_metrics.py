"""Retrieval, matched-score and two-order ranking metrics; golden values worked by hand."""

from __future__ import annotations

import pytest

from ideaharness.errors import ParseError
from ideaharness.metrics.matched_score import mean_excluding_zeros, mean_including_zeros, parse_matched_score
from ideaharness.metrics.pairwise_ranking import (
    PairResult,
    choice_of,
    consistency_counts,
    directional_accuracy,
    parse_pairwise_choice,
    rank_score,
    two_order_outcome,
)
from ideaharness.metrics.retrieval import hit_ratio, hit_ratio_top1, negative_selection_ratio


def test_hit_ratio_and_negative_selection_ratio() -> None:
    assert hit_ratio([1, 5, 9], gold=[1, 2, 9]) == pytest.approx(2 / 3)
    assert hit_ratio([1], gold=[]) is None
    assert hit_ratio_top1([2], gold=[1, 2]) == 0.5
    labels = {0: "gold", 1: "negative_t1", 2: "negative_t1"} | {i: "negative_t2" for i in (3, 4, 5)}
    nsr = negative_selection_ratio([0, 1, 3], labels)
    assert nsr == {"negative_t1": 0.5, "negative_t2": pytest.approx(1 / 3), "negative_t3": None}


def test_parse_matched_score() -> None:
    assert parse_matched_score("Matched score: 4\nReason: covers three key points") == 4
    assert parse_matched_score("**Matched Score**: **0**") == 0
    assert parse_matched_score('{"matched_score": 3, "reason": "x"}') == 3
    for bad in ("Key point 1 is covered, overall good", "Matched score: 7", "Matched score: 2.5"):
        with pytest.raises(ParseError):
            parse_matched_score(bad)


def test_matched_score_means() -> None:
    assert mean_including_zeros([0, 4, None, 2]) == 2.0  # parse failure excluded, zero kept
    # published parity: drop zeros, mean per paper, then over papers; all-zero paper drops out
    assert mean_excluding_zeros({"a": [0, 4], "b": [2, 3], "c": [0]}) == pytest.approx((4 + 2.5) / 2)


def test_parse_pairwise_choice() -> None:
    reply = "**Analysis**: ...\n**Selection of research hypothesis candidate**: candidate 2"
    assert parse_pairwise_choice(reply) == 2
    assert parse_pairwise_choice("Selection of research hypothesis candidate: 1") == 1
    assert parse_pairwise_choice('{"selection": "candidate 1"}') == 1
    stated = ("**Analysis**: Candidate 2, integrating a salt (X) into a PVA gel, is more likely to prove "
              "correct and effective.")
    assert parse_pairwise_choice(stated) == 2
    assert parse_pairwise_choice("Overall I prefer candidate 1.") == 1
    for bad in ("Both are good.", "Selection of research hypothesis candidate: candidate 3",
                "Candidate 1 is more promising, but candidate 2 is more likely to work.",
                "Candidate 1 mentions salts; candidate 2 is more specific"):
        with pytest.raises(ParseError):
            parse_pairwise_choice(bad)


def test_choice_depends_on_order() -> None:
    assert choice_of(1, "gold_first") == "gold" and choice_of(1, "gold_second") == "negative"
    assert choice_of(None, "gold_first") is None


def test_two_order_metrics() -> None:
    pairs = [
        PairResult(negative_id="a", choices={"gold_first": "gold", "gold_second": "gold"}),
        PairResult(negative_id="b", choices={"gold_first": "gold", "gold_second": "negative"}),
        PairResult(negative_id="c", choices={"gold_first": "negative", "gold_second": "negative"}),
        PairResult(negative_id="d", choices={"gold_first": None, "gold_second": "gold"}),
    ]
    assert directional_accuracy(pairs) == pytest.approx(4 / 7)
    assert directional_accuracy(pairs, "gold_first") == pytest.approx(2 / 3)
    assert directional_accuracy(pairs, "gold_second") == pytest.approx(2 / 4)
    assert consistency_counts(pairs) == {"both_gold": 1, "both_negative": 1, "disagree": 1, "incomplete": 1}
    # k = 3 complete pairs; only 'a' is a two-order win -> Rank = 2, score 2/4
    assert rank_score(pairs) == (2, 3, 0.5)
    # published single order: wins a, b -> Rank 3 of k + 1 = 4
    assert rank_score(pairs, ["gold_first"]) == (3, 3, 0.75)
    assert two_order_outcome(pairs) == "neither"
    assert two_order_outcome(pairs[:1]) == "both"
    assert two_order_outcome(pairs[:2]) == "one"
    assert two_order_outcome([pairs[0], pairs[3]]) == "undetermined"


def test_unparsable_pair_is_never_a_win() -> None:
    failed = [PairResult(negative_id="x", choices={"gold_first": None, "gold_second": None})]
    assert directional_accuracy(failed) is None
    assert rank_score(failed) is None
    assert consistency_counts(failed)["incomplete"] == 1


def test_paper_rank_score_averages_the_orders() -> None:
    """Always "candidate 1" over k = 15 pairs: ours 1/16, the paper's (16/16 + 1/16) / 2."""
    from ideaharness.metrics.pairwise_ranking import rank_score_per_order_mean

    pairs = [PairResult(negative_id=str(j), choices={"gold_first": "gold", "gold_second": "negative"})
             for j in range(15)]
    assert rank_score(pairs)[2] == 0.0625
    assert rank_score_per_order_mean(pairs) == (1.0 + 0.0625) / 2
    assert rank_score_per_order_mean(pairs, ["gold_first"]) == 1.0
    assert rank_score_per_order_mean([PairResult(negative_id="x", choices={"gold_first": None})]) is None
