"""Ranking judgments and the Insight Score (IdeaBench, Guo et al. 2024, Eq. 1).

The judge ranks n generated ideas plus the target paper's idea, shown under letter labels in an
order chosen by the caller (seeded shuffle by default; the published code always shows the
target first). A reply is accepted only if it is a permutation of all n + 1 labels.
"""

from __future__ import annotations

import string
from collections.abc import Sequence

from ideaharness.llm.parsing import read_ranking

LABELS = string.ascii_uppercase


def idea_labels(count: int) -> list[str]:
    """Labels "A", "B", ... for ``count`` ideas (at most 26)."""
    if not 1 <= count <= len(LABELS):
        raise ValueError(f"can label 1..{len(LABELS)} ideas, got {count}")
    return list(LABELS[:count])


def parse_ranking(text: str, labels: Sequence[str]) -> list[str]:
    """The ranking in ``text`` as a list of labels, best first, read as written
    (:func:`ideaharness.llm.parsing.read_ranking`).

    Accepts a JSON object with a ``ranking`` list (``{"ranking": ["C", "A", "B"]}``) or a bare
    JSON list, a labelled line (``Ranking: C > A > B``), an unlabelled ``C > A > B`` chain or
    ``C, A, B`` line, or a numbered list whose items start with the label ("1. Idea C: ...").
    Commentary that mentions labels in another order is never read as the ranking.

    Raises:
        ParseError: the ranking repeats or omits a label, or names an unknown one — a partial
            ranking is never accepted; or two different final rankings.
    """
    return read_ranking(text, labels)


def target_rank(ranking: Sequence[str], target_label: str) -> int:
    """1-based position r of the target idea in a parsed ranking."""
    return list(ranking).index(target_label) + 1


def insight_score(target_ranks: Sequence[int], n_generated: int) -> float:
    """Insight Score of one model for one quality indicator.

    I = (1/m) * sum_i (r_i - 1) / n   (IdeaBench, Guo et al. 2024, Eq. 1)

    Args:
        target_ranks: rank r_i of the target paper's idea in each of the m rankings, 1-based,
            each in [1, n_generated + 1].
        n_generated: n, the number of generated ideas ranked with the target idea (same for all).

    Returns:
        Score in [0, 1]; 0 = the target idea always ranked first, 1 = always last (the
        generated ideas always judged better).

    Raises:
        ValueError: if target_ranks is empty, n_generated < 1, or a rank is outside
            [1, n_generated + 1].
    """
    if n_generated < 1:
        raise ValueError("n_generated must be >= 1")
    if len(target_ranks) == 0:
        raise ValueError("insight_score needs at least one ranking")
    for r in target_ranks:
        if not 1 <= r <= n_generated + 1:
            raise ValueError(f"rank {r} outside [1, {n_generated + 1}]")
    return sum((r - 1) / n_generated for r in target_ranks) / len(target_ranks)
