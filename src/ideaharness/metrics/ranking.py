"""Ranking judgments and the Insight Score (IdeaBench, Guo et al. 2024, Eq. 1).

The judge ranks n generated ideas plus the target paper's idea, shown under letter labels in an
order chosen by the caller (seeded shuffle by default; the published code always shows the
target first). A reply is accepted only if it is a permutation of all n + 1 labels.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

from ideaharness.errors import ParseError
from ideaharness.llm.parsing import extract_json

LABELS = string.ascii_uppercase


def idea_labels(count: int) -> list[str]:
    """Labels "A", "B", ... for ``count`` ideas (at most 26)."""
    if not 1 <= count <= len(LABELS):
        raise ValueError(f"can label 1..{len(LABELS)} ideas, got {count}")
    return list(LABELS[:count])


_LIST_ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*])\s*\**\s*(?:idea|hypothesis)?\s*\(?([A-Z])\)?\b", re.I | re.M)


def parse_ranking(text: str, labels: Sequence[str]) -> list[str]:
    """The ranking in ``text`` as a list of labels, best first.

    Accepts a JSON object with a ``ranking`` list (``{"ranking": ["C", "A", "B"]}``), a bare JSON
    list, or a numbered list whose items start with the label ("1. Idea C: ...").

    Raises:
        ParseError: the ranking repeats or omits a label, or names an unknown one — a partial
            ranking is never accepted.
    """
    expected = [label.upper() for label in labels]
    ranking: list[str] | None = None
    try:
        value = extract_json(text)
    except ParseError:
        value = None
    if isinstance(value, dict):
        for key, item in value.items():
            if str(key).lower() in ("ranking", "rank", "order", "ranked_ideas") and isinstance(item, list):
                value = item
                break
    if isinstance(value, list):
        ranking = [_label_of(item) for item in value]
    if ranking is None:
        ranking = [m.group(1).upper() for m in _LIST_ITEM.finditer(text)]
    if not ranking:
        raise ParseError("no ranking found in the reply")
    unknown = [r for r in ranking if r not in expected]
    if unknown:
        raise ParseError(f"ranking names unknown idea(s) {unknown}")
    if len(set(ranking)) != len(ranking):
        raise ParseError("ranking repeats an idea")
    missing = [label for label in expected if label not in ranking]
    if missing:
        raise ParseError(f"ranking omits idea(s) {missing}")
    return ranking


def _label_of(item: object) -> str:
    text = str(item).strip()
    match = re.fullmatch(r"(?:idea|hypothesis)?\s*\(?([A-Za-z])\)?[.:]?", text, re.I)
    if match:
        return match.group(1).upper()
    match = re.match(r"(?:idea|hypothesis)\s+([A-Za-z])\b", text, re.I)
    if match:
        return match.group(1).upper()
    return text.upper()


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
