"""Elo update, novelty map and judge accuracy (LigBench Appendices E, F; §5)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ideaharness.metrics.elo import (
    EloSettings,
    bound_score,
    elo_score,
    elo_update,
    expected_outcome,
    k_factor,
)
from ideaharness.metrics.judge_accuracy import (
    judge_accuracy,
    preference_label,
    similar_pairs,
    wilson_interval,
)
from ideaharness.metrics.novelty_ligbench import (
    hybrid_novelty,
    novelty_score,
    similarity_novelty,
    weighted_similarity,
)


@pytest.mark.parametrize(("s_weighted", "expected"), [(0.61, 3.95), (0.72, 2.50), (0.79, 1.51), (0.90, 0.52)])
def test_novelty_map_matches_paper_examples(s_weighted: float, expected: float) -> None:
    assert similarity_novelty(s_weighted) == pytest.approx(expected, abs=0.01)


def test_weighted_similarity_and_blend() -> None:
    assert weighted_similarity([0.9, 0.5, 0.4]) == pytest.approx(0.6 * 0.9 + 0.4 * 0.6)
    assert novelty_score(2.0, 4.0) == pytest.approx(0.7 * 2.0 + 0.3 * 4.0)
    detail = hybrid_novelty([0.72], s_llm=1.0)
    assert detail["s_sim"] == pytest.approx(2.5)
    assert detail["novelty"] == pytest.approx(0.7 * 2.5 + 0.3 * 1.0)
    with pytest.raises(ValueError):
        weighted_similarity([])


def test_elo_formulas() -> None:
    assert expected_outcome(2.0, 2.0) == pytest.approx(0.5)
    assert expected_outcome(3.5, 2.0, d=1.5) == pytest.approx(1 / (1 + 10 ** (-1)))
    assert k_factor(0) == pytest.approx(0.5)
    assert k_factor(2) == pytest.approx(0.5 * 0.95**2)
    assert bound_score(2.5) == pytest.approx(2.5)
    assert bound_score(4.0) == pytest.approx(2.5 + 2.5 * math.tanh(0.6))
    # one step by hand: s = 3, s_ref = 2, win at t = 1
    e = 1 / (1 + 10 ** ((2 - 3) / 1.5))
    assert elo_update(3.0, 2.0, 1.0, 1) == pytest.approx(3.0 + 0.5 * 0.95 * (1 - e))


def _expected_outcome_comparisons(s: float, n: int) -> list[tuple[str, float, float]]:
    # A reference of equal score and a tie: S = E = 0.5 exactly.
    return [(f"r{i}", s, 0.5) for i in range(n)]


def test_outcome_equal_to_expectation_leaves_score_unchanged_by_default() -> None:
    cfg = EloSettings(min_comparisons=5, max_comparisons=5, epsilon=0.0)
    traj = elo_score(4.0, _expected_outcome_comparisons(4.0, 5), cfg)
    assert traj.final == pytest.approx(4.0)
    assert all(step.after == pytest.approx(4.0) for step in traj.steps)


def test_each_step_clamp_drifts_toward_the_middle() -> None:
    cfg = EloSettings(clamp="each-step", min_comparisons=5, max_comparisons=5, epsilon=0.0)
    # S = E at every step: the reference moves with the score, so only C changes anything.
    s, path = 4.0, []
    for t in range(3):
        s = elo_update(s, s, 0.5, t, cfg)
        path.append(round(s, 2))
    assert path == [3.84, 3.73, 3.64]  # the drift the issue describes (4.0 -> 3.84 -> 3.73 ...)
    traj = elo_score(4.0, _expected_outcome_comparisons(4.0, 5), cfg)
    assert traj.final < 3.9


def test_wins_raise_score_monotonically_within_bounds() -> None:
    cfg = EloSettings(max_comparisons=40, min_comparisons=40, epsilon=0.0)
    traj = elo_score(3.5, [(f"r{i}", 4.8, 1.0) for i in range(40)], cfg)
    scores = [traj.initial] + [s.score for s in traj.steps]
    assert all(b >= a for a, b in zip(scores, scores[1:], strict=False))
    assert all(b > a for a, b in zip(scores[:5], scores[1:5], strict=False))  # strictly below the cap
    assert all(0.0 <= s <= 5.0 for s in scores) and traj.final == 5.0
    assert len(traj.steps) == 40 and traj.stopped == "max_comparisons"
    # from below the middle too
    low = elo_score(0.2, [(f"r{i}", 1.0, 1.0) for i in range(10)], EloSettings(max_comparisons=10,
                                                                               min_comparisons=10))
    path = [low.initial] + [s.score for s in low.steps]
    assert all(b > a for a, b in zip(path, path[1:], strict=False)) and 0.2 < low.final <= 5.0


def test_each_step_clamp_turns_a_winning_streak_downwards() -> None:
    # The paper's per-step bound: wins first raise the score, then C's pull exceeds K_t (1 - E).
    cfg = EloSettings(clamp="each-step", max_comparisons=40, min_comparisons=40, epsilon=0.0)
    traj = elo_score(3.5, [(f"r{i}", 4.8, 1.0) for i in range(40)], cfg)
    scores = [s.score for s in traj.steps]
    assert all(0.0 < s < 5.0 for s in scores)
    assert max(scores) == pytest.approx(4.10, abs=0.01) and scores[-1] == pytest.approx(3.56, abs=0.01)


def test_stopping_rule() -> None:
    cfg = EloSettings(epsilon=0.01, min_comparisons=3, max_comparisons=8)
    ties = elo_score(2.0, [(f"r{i}", 2.0, 0.5) for i in range(10)], cfg)
    assert ties.stopped == "converged" and len(ties.steps) == 3
    wins = elo_score(2.0, [(f"r{i}", 2.0, 1.0) for i in range(10)], cfg)
    capped = elo_score(4.9, [(f"r{i}", 4.8, 1.0) for i in range(10)], cfg)  # reported score stuck at 5
    assert capped.stopped == "converged" and capped.final == 5.0 and len(capped.steps) == 3
    assert wins.stopped == "max_comparisons" and len(wins.steps) == 8
    few = elo_score(2.0, [("r0", 2.0, 1.0)], cfg)
    assert few.stopped == "exhausted"


def test_judge_accuracy_exact_on_fixture_labels() -> None:
    # Scores of 5 pairs (a, b) on one dimension and a judge's outcomes (1 = a better).
    pairs = [(3.1, 2.0), (1.5, 2.5), (4.0, 3.0), (2.2, 2.9), (3.3, 1.1), (2.0, 3.0)]
    labels = [preference_label(a, b) for a, b in pairs]
    assert labels == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    predictions = [1.0, 0.0, 0.25, 0.5, None, 0.0]  # right, right, wrong, tie (wrong), failed, right
    result = judge_accuracy(predictions, labels)
    assert (result.n, result.n_correct, result.n_ties, result.n_failed) == (5, 3, 1, 1)
    assert result.accuracy == pytest.approx(3 / 5)
    lo, hi = result.interval  # type: ignore[misc]
    assert (lo, hi) == pytest.approx(wilson_interval(3, 5))
    assert lo == pytest.approx(0.2307, abs=1e-3) and hi == pytest.approx(0.8824, abs=1e-3)
    with pytest.raises(ValueError):
        judge_accuracy([1.0], [0.5])


def test_similar_pairs_are_neighbours_with_a_gap() -> None:
    emb = np.eye(4, dtype=np.float32)
    emb[1] = emb[0] * 0.8 + emb[1] * 0.6  # 0 and 1 similar
    emb[3] = emb[2] * 0.8 + emb[3] * 0.6  # 2 and 3 similar
    pairs = similar_pairs(emb, [1.0, 3.0, 2.0, 2.1], n_pairs=10, min_gap=0.5, seed=1)
    assert {tuple(sorted(p)) for p in pairs} >= {(0, 1)}
    assert all(abs([1.0, 3.0, 2.0, 2.1][a] - [1.0, 3.0, 2.0, 2.1][b]) >= 0.5 for a, b in pairs)
