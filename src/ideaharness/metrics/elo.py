"""One-sided Elo scoring against fixed reference papers (LigBench, Appendix E).

An idea's score s on one dimension (rating, soundness or contribution; 0-5) starts at s0 and is
updated after each pairwise comparison with a reference paper whose (debiased) score s_ref is
fixed:

    E   = 1 / (1 + 10^((s_ref − s) / d))           expected outcome of the idea
    K_t = K_max · γ^t                                step size of comparison t (t = 0, 1, ...)
    s  ← s + K_t · (S − E)                           S ∈ {1, 0.5, 0} (or an average of orders)

with d = 1.5, K_max = 0.5, γ = 0.95 (the paper's chosen values). The paper then bounds the score
with C(s) = 2.5 + 2.5·tanh((s − 2.5)/2.5) after *every* step; C is not the identity anywhere
except at 2.5, so a comparison whose outcome equals its expectation still pulls a score toward
2.5 (4.0 → 3.84 → 3.73 …). ``clamp="each-step"`` reproduces that; the default ``clamp="output"``
leaves the updates unbounded and clips only the reported score to [0, 5].

Stopping: after at least ``min_comparisons`` comparisons, stop as soon as the reported score
moves by less than ``epsilon`` (|Δs| < ε); never run more than ``max_comparisons`` (T_max). The
paper gives neither ε nor T_max.

A consequence of the paper's per-step bound worth knowing: C pulls harder than a win pushes once
the step size has decayed, so under ``each-step`` a long winning streak against a strong reference
first raises and then *lowers* the score (3.5 → 4.10 after 5 wins → 3.56 after 40 wins against a
4.8 reference). Under the default the reported score never decreases on a win.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

ClampMode = Literal["output", "each-step"]

SCORE_MIN = 0.0
SCORE_MAX = 5.0


class EloSettings(BaseModel):
    """Settings of the Elo update and its stopping rule.

    Defaults: d, K_max, γ are the paper's. ``epsilon`` = 0.01 is the resolution scores are
    reported at (two decimals on 0-5). ``min_comparisons`` = 3 keeps a first comparison whose
    outcome matches its expectation (Δs ≈ 0) from ending the process before any evidence is in.
    ``max_comparisons`` = 8 bounds the cost (two judge calls per comparison with both orders);
    by t = 8 the step size K_t = 0.5·0.95^8 ≈ 0.33 is two thirds of K_max.
    """

    d: float = Field(default=1.5, gt=0, description="Elo scale d of E = 1/(1 + 10^((s_ref - s)/d)).")
    k_max: float = Field(default=0.5, gt=0, description="Elo K_max of K_t = K_max * gamma^t.")
    gamma: float = Field(default=0.95, gt=0, le=1, description="Elo decay gamma of K_t.")
    clamp: ClampMode = Field("output", description="output (bound only the reported score) or each-step "
                             "(the paper's C at every Elo step).")
    epsilon: float = Field(default=0.01, ge=0, description="Stop when the score moves less than this.")
    min_comparisons: int = Field(default=3, ge=1, description="Comparisons before the epsilon rule may stop.")
    max_comparisons: int = Field(default=8, ge=1, description="T_max: most comparisons per idea.")


def bound_score(s: float) -> float:
    """LigBench's soft bound C(s) = 2.5 + 2.5·tanh((s − 2.5)/2.5), maps ℝ onto (0, 5) (Appendix E)."""
    return 2.5 + 2.5 * math.tanh((s - 2.5) / 2.5)


def expected_outcome(s: float, s_ref: float, d: float = 1.5) -> float:
    """Elo expected outcome E = 1 / (1 + 10^((s_ref − s)/d)) of the idea against a reference, in (0, 1)."""
    return 1.0 / (1.0 + float(10.0 ** ((s_ref - s) / d)))


def k_factor(t: int, k_max: float = 0.5, gamma: float = 0.95) -> float:
    """Decaying step size K_t = K_max · γ^t for comparison t ≥ 0 (LigBench Appendix E)."""
    if t < 0:
        raise ValueError("t must be >= 0")
    return k_max * gamma**t


def elo_update(s: float, s_ref: float, outcome: float, t: int, settings: EloSettings | None = None) -> float:
    """One step s ← s + K_t (S − E), bounded by C(·) only when ``settings.clamp == "each-step"``.

    Args:
        s: current score of the idea (0-5 scale; may leave it internally under the default clamp).
        s_ref: fixed score of the reference paper.
        outcome: S in [0, 1]; 1 = idea better, 0.5 = equal, 0 = reference better.
        t: index of this comparison (0 for the first).

    Raises:
        ValueError: outcome outside [0, 1].
    """
    cfg = settings or EloSettings()
    if not 0.0 <= outcome <= 1.0:
        raise ValueError(f"outcome {outcome} outside [0, 1]")
    raw = s + k_factor(t, cfg.k_max, cfg.gamma) * (outcome - expected_outcome(s, s_ref, cfg.d))
    return bound_score(raw) if cfg.clamp == "each-step" else raw


class EloStep(BaseModel):
    """One comparison's effect on the score."""

    t: int
    reference_id: str
    s_ref: float
    outcome: float
    expected: float
    k: float
    before: float
    after: float
    score: float  # the reported score after this step: ``after`` clipped to [0, 5]


class EloTrajectory(BaseModel):
    """The score path of one dimension; ``final`` is the reported score in [0, 5].

    ``stopped``: ``"converged"`` (|Δs| < ε after the minimum), ``"max_comparisons"`` (T_max
    reached) or ``"exhausted"`` (ran out of comparisons first).
    """

    initial: float
    final: float
    steps: list[EloStep]
    stopped: Literal["converged", "max_comparisons", "exhausted"]


def elo_score(
    s0: float,
    comparisons: Sequence[tuple[str, float, float]],
    settings: EloSettings | None = None,
) -> EloTrajectory:
    """Run the Elo updates over comparisons in order until the stopping rule fires.

    Args:
        s0: initial score (LigBench's initial-scoring step), on 0-5.
        comparisons: ``(reference_id, s_ref, outcome S)`` in the order they were judged.
        settings: update and stopping settings (defaults: :class:`EloSettings`).

    Returns:
        The trajectory; ``final`` is the last score clipped to [0, 5] (under ``each-step`` it is
        already inside (0, 5)).
    """
    cfg = settings or EloSettings()
    s = float(s0)
    steps: list[EloStep] = []
    stopped: Literal["converged", "max_comparisons", "exhausted"] = "exhausted"
    for t, (ref_id, s_ref, outcome) in enumerate(comparisons):
        if t >= cfg.max_comparisons:
            stopped = "max_comparisons"
            break
        new = elo_update(s, s_ref, outcome, t, cfg)
        steps.append(EloStep(t=t, reference_id=ref_id, s_ref=s_ref, outcome=outcome,
                             expected=expected_outcome(s, s_ref, cfg.d),
                             k=k_factor(t, cfg.k_max, cfg.gamma), before=s, after=new, score=_clip(new)))
        delta, s = abs(_clip(new) - _clip(s)), new
        if t + 1 >= cfg.min_comparisons and delta < cfg.epsilon:
            stopped = "converged"
            break
        if t + 1 >= cfg.max_comparisons:
            stopped = "max_comparisons"
            break
    return EloTrajectory(initial=float(s0), final=_clip(s), steps=steps, stopped=stopped)


def _clip(s: float) -> float:
    return min(SCORE_MAX, max(SCORE_MIN, s))


def needs_more(trajectory: EloTrajectory, settings: EloSettings | None = None) -> bool:
    """Whether another comparison would still be used (the trajectory ran out of comparisons)."""
    cfg = settings or EloSettings()
    return trajectory.stopped == "exhausted" and len(trajectory.steps) < cfg.max_comparisons
