"""Idea competitions: Swiss-system tournament and Bradley-Terry ratings with bootstrap intervals.

Swiss tournament: AI Idea Bench 2025 (Qiu et al., arXiv 2504.14191), Eq. 5-6 -- 7 rounds, players
paired with others of similar score, 3 points per win. The published ``competition.py`` also gives
1 point per loss; that is the ``loss_points=1`` parity setting.

Bradley-Terry: maximum-likelihood logistic fit on pairwise outcomes, ties = half a win, ratings on
the Elo scale (SCALE 400, BASE 10, INIT 1000, one anchor player fixed at 1000), as in Arena-Hard-Auto's
``compute_mle_elo`` (Li et al. 2024, arXiv 2406.11939); bootstrap percentile intervals over battles
(:func:`bradley_terry_bootstrap`) or over topics (:func:`bradley_terry_topic_bootstrap`).
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel

Outcome = Literal["a", "b", "tie"]
SCALE = 400.0
BASE = 10.0
INIT_RATING = 1000.0


class Battle(BaseModel):
    """One pairwise outcome: ``winner`` is "a", "b" or "tie"; ``weight`` repeats it (default 1)."""

    a: str
    b: str
    winner: Outcome
    weight: float = 1.0


def _pair(a: str, b: str) -> frozenset[str]:
    return frozenset((a, b))


def swiss_pairings(
    scores: dict[str, float],
    history: Iterable[frozenset[str]],
    rng: random.Random,
    byes: Iterable[str] = (),
) -> tuple[list[tuple[str, str]], str | None]:
    """Pairings of one Swiss round.

    Players are ordered by score (descending; equal scores in a seeded random order) and paired
    top-down with the nearest-ranked opponent. A search over pairings guarantees that no pairing
    from ``history`` is repeated whenever a full pairing without repeats exists, and otherwise
    minimises the number of repeats. A player is never paired with itself. With an odd number of
    players the lowest-ranked player without a previous bye (if any, else the lowest-ranked) sits out.

    Args:
        scores: {player: points so far}; at least 2 players.
        history: pairs (frozenset of 2 names) already played.
        rng: seeded generator for ordering ties.
        byes: players who already had a bye.

    Returns:
        (pairs, bye): pairs as (higher-ranked, lower-ranked); ``bye`` is the player sitting out or None.
    """
    if len(scores) < 2:
        raise ValueError("a Swiss round needs at least 2 players")
    played = set(history)
    had_bye = set(byes)
    names = sorted(scores)
    rng.shuffle(names)
    order = sorted(names, key=lambda p: -scores[p])  # stable: ties keep the shuffled order
    bye: str | None = None
    if len(order) % 2:
        candidates = [p for p in reversed(order) if p not in had_bye] or [order[-1]]
        bye = candidates[0]
        order = [p for p in order if p != bye]
    best: list[tuple[list[tuple[str, str]], int]] = []

    def search(remaining: list[str], pairs: list[tuple[str, str]], repeats: int) -> bool:
        if best and repeats >= best[0][1]:
            return False
        if not remaining:
            best[:] = [(list(pairs), repeats)]
            return repeats == 0
        first, rest = remaining[0], remaining[1:]
        fresh = [p for p in rest if _pair(first, p) not in played]
        stale = [p for p in rest if _pair(first, p) in played]
        for opponent in fresh + stale:
            pairs.append((first, opponent))
            extra = 1 if _pair(first, opponent) in played else 0
            done = search([p for p in rest if p != opponent], pairs, repeats + extra)
            pairs.pop()
            if done:
                return True
        return False

    search(order, [], 0)
    return best[0][0], bye


class TournamentResult(BaseModel):
    """Final standings: points and 1-based rank per player (equal points share the better rank)."""

    points: dict[str, float]
    rank: dict[str, int]
    rounds: list[list[dict[str, str | None]]]


def swiss_standings(points: dict[str, float]) -> dict[str, int]:
    """Competition rank (1 = most points; equal points share the better rank, "1224" ranking)."""
    values = sorted(points.values(), reverse=True)
    return {p: 1 + values.index(v) for p, v in points.items()}


def match_points(
    outcome: Outcome | None, *, win_points: float = 3.0, loss_points: float = 0.0
) -> tuple[float, float]:
    """Points (a, b) of one match (AI Idea Bench 2025, Eq. 6: 3 per win; parity: 1 per loss).

    ``tie`` (e.g. a pair judged inconsistently in the two orders) gives both the mean of win and
    loss points; None (no usable verdict) gives neither player anything.
    """
    if outcome is None:
        return 0.0, 0.0
    if outcome == "a":
        return win_points, loss_points
    if outcome == "b":
        return loss_points, win_points
    half = (win_points + loss_points) / 2
    return half, half


def _logistic_fit(
    idx_a: np.ndarray, idx_b: np.ndarray, y: np.ndarray, w: np.ndarray, n: int, anchor: int, ridge: float
) -> np.ndarray:
    """Newton's method for the weighted BT log-likelihood in natural-log units; theta[anchor] = 0."""
    theta = np.zeros(n)
    free = np.array([i for i in range(n) if i != anchor], dtype=int)
    for _ in range(100):
        d = theta[idx_a] - theta[idx_b]
        p = 1.0 / (1.0 + np.exp(-d))
        r = w * (y - p)
        grad = np.zeros(n)
        np.add.at(grad, idx_a, r)
        np.add.at(grad, idx_b, -r)
        grad -= ridge * theta
        v = w * p * (1 - p)
        hess = np.zeros((n, n))
        np.add.at(hess, (idx_a, idx_a), v)
        np.add.at(hess, (idx_b, idx_b), v)
        np.add.at(hess, (idx_a, idx_b), -v)
        np.add.at(hess, (idx_b, idx_a), -v)
        hess += ridge * np.eye(n)
        g, h = grad[free], hess[np.ix_(free, free)]
        step = np.linalg.solve(h, g)
        theta[free] += step
        if np.max(np.abs(step)) < 1e-12:
            break
    return theta


def bradley_terry(
    battles: Sequence[Battle],
    *,
    anchor: str | None = None,
    anchor_rating: float = INIT_RATING,
    scale: float = SCALE,
    base: float = BASE,
    ridge: float = 1e-6,
) -> dict[str, float]:
    """Bradley-Terry ratings on the Elo scale by maximum likelihood.

    P(a beats b) = 1 / (1 + base^((R_b - R_a) / scale)); a tie counts as half a win for each side
    (Arena-Hard-Auto ``compute_mle_elo``: SCALE 400, BASE 10, anchor model at 1000).

    Args:
        battles: outcomes; ``weight`` multiplies a row.
        anchor: player whose rating is fixed at ``anchor_rating``; default the first player seen.
        ridge: tiny L2 penalty (natural-log units) so that a player who never lost gets a large
            finite rating instead of diverging; at 1e-6 it moves the Arena-Hard values by < 0.01.

    Returns:
        {player: rating}.

    Raises:
        ValueError: no battles, a self-battle, or an anchor that never played.
    """
    if not battles:
        raise ValueError("no battles to fit")
    players: list[str] = []
    for bt in battles:
        if bt.a == bt.b:
            raise ValueError(f"a player cannot battle itself: {bt.a!r}")
        for p in (bt.a, bt.b):
            if p not in players:
                players.append(p)
    anchor = players[0] if anchor is None else anchor
    if anchor not in players:
        raise ValueError(f"anchor {anchor!r} has no battles")
    index = {p: i for i, p in enumerate(players)}
    idx_a = np.array([index[bt.a] for bt in battles])
    idx_b = np.array([index[bt.b] for bt in battles])
    score = {"a": 1.0, "b": 0.0, "tie": 0.5}
    y = np.array([score[bt.winner] for bt in battles])
    w = np.array([bt.weight for bt in battles], dtype=float)
    theta = _logistic_fit(idx_a, idx_b, y, w, len(players), index[anchor], ridge)
    factor = scale / math.log(base)
    return {p: anchor_rating + factor * float(theta[i]) for p, i in index.items()}


class RatingInterval(BaseModel):
    rating: float
    lower: float
    upper: float


def bradley_terry_bootstrap(
    battles: Sequence[Battle],
    *,
    anchor: str | None = None,
    n_resamples: int = 200,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, RatingInterval]:
    """BT ratings (:func:`bradley_terry`) with percentile bootstrap intervals over battles (numpy).

    numpy rather than ``scipy.stats.bootstrap``: the statistic is a whole rating table re-anchored per
    replicate, and replicates without the anchor are skipped, which scipy cannot express.

    Each replicate resamples the battles with replacement (seeded) and is re-anchored to the
    same anchor (unlike the Arena-Hard code of Sept 2024, which did not re-anchor). Players absent
    from a replicate are skipped for that replicate.
    """
    point = bradley_terry(battles, anchor=anchor)
    anchor = anchor or next(iter(point))
    rng = np.random.default_rng(seed)
    samples: dict[str, list[float]] = {p: [] for p in point}
    n = len(battles)
    for _ in range(n_resamples):
        picked = [battles[i] for i in rng.integers(0, n, size=n)]
        if not any(anchor in (bt.a, bt.b) for bt in picked):
            continue
        for p, r in bradley_terry(picked, anchor=anchor).items():
            samples[p].append(r)
    alpha = (1 - confidence) / 2
    out: dict[str, RatingInterval] = {}
    for p, r in point.items():
        vals = samples[p] or [r]
        out[p] = RatingInterval(
            rating=r, lower=float(np.quantile(vals, alpha)), upper=float(np.quantile(vals, 1 - alpha))
        )
    return out


def bradley_terry_topic_bootstrap(
    battles_by_topic: Mapping[str, Sequence[Battle]],
    *,
    anchor: str | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, RatingInterval]:
    """BT ratings (:func:`bradley_terry`) with percentile bootstrap intervals resampling topics.

    The battles of one topic share that topic's difficulty and ideas, so they are not independent:
    each replicate draws topics with replacement (seeded) and fits all battles of the drawn topics
    (a cluster bootstrap; resampling battles instead understates the interval). Replicates are
    re-anchored to ``anchor``; a replicate without the anchor is dropped, and a player absent from
    a replicate is skipped for it. Topics are sorted by name before resampling, so the interval
    does not depend on the order in which they were read.

    Args:
        battles_by_topic: {topic (instance id): its battles}; at least one battle in all.
        anchor: player fixed at 1000; default the first player seen.
        n_resamples, confidence, seed: replicates, interval level in (0, 1), seed.

    Returns:
        {player: RatingInterval(rating, lower, upper)} on the Elo scale.

    Raises:
        ValueError: no battles (see :func:`bradley_terry`).
    """
    topics = sorted(t for t, battles in battles_by_topic.items() if battles)  # order-free interval
    point = bradley_terry([b for t in topics for b in battles_by_topic[t]], anchor=anchor)
    anchor = anchor or next(iter(point))
    rng = np.random.default_rng(seed)
    samples: dict[str, list[float]] = {p: [] for p in point}
    for _ in range(n_resamples):
        picked = [
            b for i in rng.integers(0, len(topics), size=len(topics)) for b in battles_by_topic[topics[i]]
        ]
        if not any(anchor in (bt.a, bt.b) for bt in picked):
            continue
        for p, r in bradley_terry(picked, anchor=anchor).items():
            samples[p].append(r)
    alpha = (1 - confidence) / 2
    return {
        p: RatingInterval(
            rating=r,
            lower=float(np.quantile(samples[p] or [r], alpha)),
            upper=float(np.quantile(samples[p] or [r], 1 - alpha)),
        )
        for p, r in point.items()
    }


async def swiss_tournament(
    players: Sequence[str],
    play: Callable[[str, str, int], Awaitable[Outcome | None]],
    *,
    rounds: int = 7,
    win_points: float = 3.0,
    loss_points: float = 0.0,
    bye_points: float | None = None,
    seed: int = 0,
) -> TournamentResult:
    """Play a Swiss-system tournament (AI Idea Bench 2025, Eq. 5-6).

    Args:
        players: distinct names, at least 2.
        play: ``await play(a, b, round_index)`` -> "a", "b", "tie" or None (no usable verdict,
            no points). ``a`` is the higher-ranked player of the pairing.
        rounds: number of rounds (7 in the paper).
        win_points, loss_points: 3 and 0 per the paper; ``loss_points=1`` reproduces the code.
        bye_points: points for sitting out a round (odd player count); default ``win_points``
            (the usual Swiss convention).
        seed: seeds the order of equal-score players.

    Returns:
        Points, ranks and every round's matches ({"a", "b", "outcome"}; a bye has b = None).
    """
    if len(set(players)) != len(players) or len(players) < 2:
        raise ValueError("a tournament needs at least 2 distinct players")
    rng = random.Random(seed)
    points = {p: 0.0 for p in players}
    history: list[frozenset[str]] = []
    byes: list[str] = []
    log: list[list[dict[str, str | None]]] = []
    for r in range(rounds):
        pairs, bye = swiss_pairings(points, history, rng, byes)
        outcomes = await asyncio.gather(*(play(a, b, r) for a, b in pairs))
        this_round: list[dict[str, str | None]] = []
        for (a, b), outcome in zip(pairs, outcomes, strict=True):
            pa, pb = match_points(outcome, win_points=win_points, loss_points=loss_points)
            points[a] += pa
            points[b] += pb
            history.append(_pair(a, b))
            this_round.append({"a": a, "b": b, "outcome": outcome})
        if bye is not None:
            points[bye] += win_points if bye_points is None else bye_points
            byes.append(bye)
            this_round.append({"a": bye, "b": None, "outcome": "bye"})
        log.append(this_round)
    return TournamentResult(points=points, rank=swiss_standings(points), rounds=log)
