"""Seeded choices for reliability: which judgments to re-ask, how to permute them, where to put gold.

* :func:`select_for_reask` — ``--consistency-sample F``: each unit is re-asked when a hash of
  (seed, unit) falls below F, so the choice is the same in every process, shard and resume, and
  does not depend on the order units are listed in.
* :func:`reask_permutation` — the order in which a re-ask shows the items: a seeded derangement
  (every item moves when there are at least 2), so a judge that follows positions cannot agree
  with itself by accident.
* :func:`balanced_positions` — counterbalanced placement of the target/gold item: each of k positions
  equally often across instances (counts differ by at most 1), so a judge that answers by position
  alone scores exactly the chance value instead of whatever an unlucky random draw gives
  (MT-Bench/Chatbot Arena's position-bias control, Zheng et al. 2023 §3.3, done across instances).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence

import numpy as np

from ideaharness.metrics.reliability.views import REASK_SUFFIX

DEFAULT_CONSISTENCY_SAMPLE = 0.1


def _uniform(seed: int, *parts: object) -> float:
    blob = "\x1f".join([str(seed), *map(str, parts)]).encode()
    return int(hashlib.sha256(blob).hexdigest()[:16], 16) / 16**16


def _rng(seed: int, *parts: object) -> np.random.Generator:
    blob = "\x1f".join([str(seed), *map(str, parts)]).encode()
    return np.random.default_rng(int(hashlib.sha256(blob).hexdigest()[:16], 16))


def select_for_reask(
    units: Iterable[str], fraction: float = DEFAULT_CONSISTENCY_SAMPLE, *, seed: int = 0, min_count: int = 1
) -> list[str]:
    """The units (e.g. ``"<step>|<instance_id>|<key>"``) to re-ask with permuted positions.

    A unit is chosen when sha256(seed, unit) read as a number in [0, 1) is below ``fraction``;
    when that chooses fewer than ``min_count`` (small runs), the units of smallest hash are added.

    Args:
        units: unit identifiers (duplicates ignored).
        fraction: F in [0, 1]; 0 re-asks nothing (``min_count`` ignored), 1 everything.
        seed: the run's seed.
        min_count: least number chosen when ``fraction`` > 0 (capped at the number of units).

    Returns:
        The chosen units sorted by their hash (deterministic, independent of input order).

    Raises:
        ValueError: ``fraction`` outside [0, 1] or ``min_count`` < 0.
    """
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"--consistency-sample must be in [0, 1], got {fraction}")
    if min_count < 0:
        raise ValueError("min_count must be >= 0")
    ranked = sorted(set(units), key=lambda u: (_uniform(seed, "reask", u), u))
    if fraction == 0.0:
        return []
    chosen = [u for u in ranked if _uniform(seed, "reask", u) < fraction]
    return chosen if len(chosen) >= min_count else ranked[: min(min_count, len(ranked))]


def reask_permutation(n_items: int, *, seed: int, unit: str) -> list[int]:
    """Order of a re-ask: ``perm[i]`` = index (in the original order) of the item shown at position i.

    A seeded derangement (no item keeps its position) for ``n_items`` >= 2; ``[0]`` for one item.

    Raises:
        ValueError: ``n_items`` < 1.
    """
    if n_items < 1:
        raise ValueError("n_items must be >= 1")
    if n_items == 1:
        return [0]
    rng = _rng(seed, "reask-order", unit)
    while True:  # rejection sampling: about e tries on average
        perm: list[int] = rng.permutation(n_items).tolist()
        if all(p != i for i, p in enumerate(perm)):
            return perm


def permute(items: Sequence[object], perm: Sequence[int]) -> list[object]:
    """``items`` shown in the order ``perm`` (``[items[p] for p in perm]``).

    Raises:
        ValueError: ``perm`` is not a permutation of ``range(len(items))``.
    """
    if sorted(perm) != list(range(len(items))):
        raise ValueError(f"{list(perm)} is not a permutation of {len(items)} items")
    return [items[p] for p in perm]


def reask_key(key: str) -> str:
    """Record key of the re-ask of the judgment recorded under ``key`` (same step and instance).

    Adapters read ``key`` without the suffix as the group, so the original and its re-ask are
    paired for the consistency figure and the re-ask is never scored.
    """
    return f"{key}{REASK_SUFFIX}"


def original_key(key: str) -> tuple[str, bool]:
    """``(key of the original judgment, is_reask)`` for a recorded key."""
    if key.endswith(REASK_SUFFIX):
        return key[: -len(REASK_SUFFIX)], True
    return key, False


def balanced_positions(instance_ids: Iterable[str], k: int, seed: int) -> dict[str, int]:
    """0-based position of the target/gold item per instance, each of ``k`` positions equally often.

    Instances are ordered by sha256(seed, id) (so the result does not depend on the input order),
    the i-th gets position ``offsets[i % k]`` with ``offsets`` a seeded permutation of range(k):
    over m instances every position is used ⌊m/k⌋ or ⌈m/k⌉ times.

    Raises:
        ValueError: ``k`` < 1 or duplicate instance ids.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    ids = list(instance_ids)
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate instance ids")
    ordered = sorted(ids, key=lambda i: (_uniform(seed, "balanced", i), i))
    offsets = _rng(seed, "balanced-offsets", k).permutation(k).tolist()
    return {inst: int(offsets[i % k]) for i, inst in enumerate(ordered)}


def order_with_target_at(
    n_items: int, target_index: int, position: int, *, seed: int, unit: str
) -> list[int]:
    """A shown order (``order[p]`` = item index at position p) with ``target_index`` at ``position``
    and the other items in a seeded random order (the placement :func:`balanced_positions` chose).

    Raises:
        ValueError: an index or position outside ``range(n_items)``.
    """
    if not (0 <= target_index < n_items and 0 <= position < n_items):
        raise ValueError(f"target {target_index} / position {position} outside 0..{n_items - 1}")
    others = [i for i in range(n_items) if i != target_index]
    rest = [others[j] for j in _rng(seed, "balanced-rest", unit).permutation(len(others))]
    return rest[:position] + [target_index] + rest[position:]


def expected_chance_insight_score(k: int) -> float:
    """Insight Score of a content-blind judge with the target placed uniformly: mean (r−1)/n with r
    uniform on 1..k and n = k − 1 generated ideas, i.e. 0.5 (IdeaBench Eq. 1, Guo et al. 2024)."""
    if k < 2:
        raise ValueError("k must be >= 2")
    return math.fsum((r - 1) / (k - 1) for r in range(1, k + 1)) / k
