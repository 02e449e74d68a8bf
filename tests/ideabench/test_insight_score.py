"""Insight Score golden values (IdeaBench, Guo et al. 2024, Eq. 1) and ranking parsing."""

from __future__ import annotations

import pytest

from ideaharness.errors import ParseError
from ideaharness.metrics.ranking import idea_labels, insight_score, parse_ranking, target_rank


def test_golden_n3_ranked_third() -> None:
    assert insight_score([3], 3) == pytest.approx(0.667, abs=1e-3)


def test_golden_n10_ranked_fifth() -> None:
    assert insight_score([5], 10) == pytest.approx(0.4)


def test_always_first_is_zero_and_always_last_is_one() -> None:
    assert insight_score([1, 1, 1, 1], 3) == 0.0
    assert insight_score([4, 4, 4], 3) == 1.0


def test_mean_over_rankings() -> None:
    assert insight_score([1, 4], 3) == pytest.approx(0.5)


@pytest.mark.parametrize("ranks", [[], [0], [5]])
def test_invalid_ranks_raise(ranks: list[int]) -> None:
    with pytest.raises(ValueError):
        insight_score(ranks, 3)


def test_parse_json_ranking() -> None:
    assert parse_ranking('{"ranking": ["C", "A", "D", "B"], "rationale": "x"}', "ABCD") == list("CADB")


def test_parse_numbered_list_ranking() -> None:
    text = "Here is my ranking:\n1. Idea B: strong\n2. Idea D\n3. **Idea A**\n4. Idea C: weak"
    assert parse_ranking(text, "ABCD") == list("BDAC")


def test_parse_fenced_json_with_prose() -> None:
    text = 'Sure!\n```json\n{"ranking": ["Idea B", "Idea A", "Idea C"]}\n```\nDone.'
    assert parse_ranking(text, "ABC") == list("BAC")


@pytest.mark.parametrize(
    "reply",
    [
        '{"ranking": ["A", "A", "B", "C"]}',  # repeats an idea
        '{"ranking": ["A", "B", "C"]}',  # omits D
        '{"ranking": ["A", "B", "C", "E"]}',  # unknown label
        "I cannot rank these ideas.",
    ],
)
def test_non_permutation_is_a_parse_failure(reply: str) -> None:
    with pytest.raises(ParseError):
        parse_ranking(reply, "ABCD")


def test_target_rank_and_labels() -> None:
    assert idea_labels(4) == ["A", "B", "C", "D"]
    assert target_rank(["C", "A", "B"], "B") == 3
