"""Pairwise accuracy of an LLM judge against reference labels (LigBench §5, "judge accuracy").

LigBench checks a judge on held-out pairs of thematically similar PAIR-IQ papers: for each pair
and dimension, the label says which paper has the higher venue-debiased score; the judge's
preference is correct when it picks the same paper. We report accuracy per dimension with a
Wilson score interval (Wilson 1927). A judge outcome of exactly 0.5 (a tie, or two orders that
disagree) is a wrong answer, not a skipped one; a parse failure (None) is excluded from the
denominator and counted separately.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel


class AccuracyResult(BaseModel):
    """Accuracy over judged pairs; ``interval`` is the 95% Wilson interval (None when n = 0)."""

    n: int
    n_correct: int
    n_ties: int
    n_failed: int
    accuracy: float | None
    interval: tuple[float, float] | None


def wilson_interval(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion k/n (Wilson 1927).

    centre = (p + z²/2n) / (1 + z²/n), half-width = z·sqrt(p(1−p)/n + z²/4n²) / (1 + z²/n).

    Raises:
        ValueError: n < 1 or successes outside [0, n].
    """
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n >= 1, got {successes}/{n}")
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def preference_label(score_a: float, score_b: float) -> float:
    """Reference label of a pair: 1 if paper A scores higher, 0 if B does, 0.5 if equal."""
    return 1.0 if score_a > score_b else 0.0 if score_a < score_b else 0.5


def judge_accuracy(predictions: Sequence[float | None], labels: Sequence[float]) -> AccuracyResult:
    """Share of pairs where the judge prefers the same paper as the label.

    Args:
        predictions: judge outcome per pair in [0, 1] (1 = A better; averages of both orders
            allowed), None for a parse failure.
        labels: 1 (A better) or 0 (B better) per pair; pairs labelled 0.5 must be left out.

    Returns:
        :class:`AccuracyResult`; correct iff sign(pred − 0.5) == sign(label − 0.5).

    Raises:
        ValueError: lengths differ, a label is not 0/1, or a prediction is outside [0, 1].
    """
    if len(predictions) != len(labels):
        raise ValueError(f"{len(predictions)} predictions but {len(labels)} labels")
    n = correct = ties = failed = 0
    for pred, label in zip(predictions, labels, strict=True):
        if label not in (0.0, 1.0):
            raise ValueError(f"label {label} must be 0 or 1 (drop tied pairs)")
        if pred is None:
            failed += 1
            continue
        if not 0.0 <= pred <= 1.0:
            raise ValueError(f"prediction {pred} outside [0, 1]")
        n += 1
        if pred == 0.5:
            ties += 1
        elif (pred > 0.5) == (label == 1.0):
            correct += 1
    return AccuracyResult(n=n, n_correct=correct, n_ties=ties, n_failed=failed,
                          accuracy=correct / n if n else None,
                          interval=wilson_interval(correct, n) if n else None)


def similar_pairs(
    embeddings: np.ndarray,
    scores: Sequence[float | None],
    n_pairs: int,
    *,
    min_gap: float = 0.25,
    seed: int = 0,
) -> list[tuple[int, int]]:
    """Held-out pairs of thematically similar papers whose scores differ by at least ``min_gap``.

    Each paper is paired with its most similar (cosine) other paper that satisfies the gap; pairs
    are deduplicated, then ``n_pairs`` are drawn with a seeded generator and each pair's order is
    randomised (so label 1 and 0 are balanced). The paper used 269 such pairs but does not give
    the selection rule; this one is ours.

    Args:
        embeddings: (n, dim) L2-normalised rows.
        scores: per-paper score (None = unknown, never paired).

    Returns:
        Index pairs (a, b), at most ``n_pairs``.
    """
    n = len(scores)
    if embeddings.shape[0] != n:
        raise ValueError(f"{embeddings.shape[0]} embeddings but {n} scores")
    sims = embeddings @ embeddings.T
    found: set[tuple[int, int]] = set()
    for i in range(n):
        si = scores[i]
        if si is None:
            continue
        for j in np.argsort(-sims[i]):
            sj = scores[int(j)]
            if int(j) != i and sj is not None and abs(si - sj) >= min_gap:
                found.add((min(i, int(j)), max(i, int(j))))
                break
    rng = np.random.default_rng(seed)
    pool = sorted(found)
    order = rng.permutation(len(pool))[:n_pairs]
    pairs = []
    for idx in order:
        a, b = pool[int(idx)]
        pairs.append((a, b) if rng.random() < 0.5 else (b, a))
    return pairs
