"""Seeded re-ask selection, re-ask permutation and balanced placement of the target."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ideaharness.metrics.ranking import insight_score
from ideaharness.metrics.reliability.sampling import (
    balanced_positions,
    expected_chance_insight_score,
    order_with_target_at,
    original_key,
    permute,
    reask_key,
    reask_permutation,
    select_for_reask,
)
from ideaharness.seeding import rng_for


def test_reask_selection_is_seeded_order_free_and_about_f() -> None:
    units = [f"rank|inst{i}|" for i in range(2000)]
    chosen = select_for_reask(units, 0.1, seed=3)
    assert chosen == select_for_reask(list(reversed(units)), 0.1, seed=3)
    assert 150 <= len(chosen) <= 250
    assert chosen != select_for_reask(units, 0.1, seed=4)
    # stable under growth: a unit chosen among 1000 stays chosen among 2000 (shards and resumes agree)
    assert set(select_for_reask(units[:1000], 0.1, seed=3)) <= set(chosen)
    assert select_for_reask(units[:3], 0.1, seed=3, min_count=1)  # a tiny run still measures something
    assert select_for_reask(units, 0.0, seed=3) == []
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        select_for_reask(units, 1.5)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 12), st.integers(0, 10**6), st.text(max_size=8))
def test_reask_permutation_moves_every_item(n: int, seed: int, unit: str) -> None:
    perm = reask_permutation(n, seed=seed, unit=unit)
    assert sorted(perm) == list(range(n))
    assert n == 1 or all(p != i for i, p in enumerate(perm))
    assert perm == reask_permutation(n, seed=seed, unit=unit)
    assert permute(list("abcdefghijkl"[:n]), perm) == ["abcdefghijkl"[p] for p in perm]


def test_reask_key_pairs_with_its_original() -> None:
    assert original_key(reask_key("given0/gold_first")) == ("given0/gold_first", True)
    assert original_key("given0/gold_first") == ("given0/gold_first", False)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.text(min_size=1, max_size=6), unique=True, max_size=40), st.integers(1, 6), st.integers(0, 99)
)
def test_balanced_positions_use_each_position_equally_often(ids: list[str], k: int, seed: int) -> None:
    placed = balanced_positions(ids, k, seed)
    assert set(placed) == set(ids) and all(0 <= p < k for p in placed.values())
    counts = Counter(placed.values())
    if ids:
        assert max(counts.get(p, 0) for p in range(k)) - min(counts.get(p, 0) for p in range(k)) <= 1
    assert placed == balanced_positions(list(reversed(ids)), k, seed)


def test_order_with_target_at_places_the_target() -> None:
    for pos in range(4):
        order = order_with_target_at(4, 0, pos, seed=1, unit="x")
        assert sorted(order) == [0, 1, 2, 3] and order[pos] == 0


def always_a_first_insight(target_positions: list[int], k: int) -> float:
    """Insight Score of a judge that always answers A > B > C > D: the target's rank = its position + 1."""
    return insight_score([p + 1 for p in target_positions], k - 1)


def test_position_only_judge_scores_exactly_chance_with_balanced_placement() -> None:
    ids = [f"tomato-chem/{i}" for i in range(12)]
    placed = balanced_positions(ids, 4, seed=0)
    assert always_a_first_insight(list(placed.values()), 4) == pytest.approx(0.5)
    assert expected_chance_insight_score(4) == pytest.approx(0.5)
    # IdeaBench's plain per-instance shuffle (rng_for(seed, id, scenario, "rank", indicator)) is off chance
    shuffled = [rng_for(0, i, "low", "rank", "novelty").permutation(4).tolist().index(0) for i in ids]
    assert always_a_first_insight(shuffled, 4) == pytest.approx(1 / 3)  # the 0.333 at 12 instances
