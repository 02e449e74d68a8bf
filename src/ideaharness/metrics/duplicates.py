"""Duplicate and near-duplicate ideas among the n a system generated for one instance.

A generator asked for n ideas (in one call or n calls) often repeats itself; a benchmark that
scores the best of n, or counts "any of n" hits (IdeaBench best-of-n BERTScore, AI Idea Bench
IMCQ), then credits n tries that were fewer. This module counts the repeats, lexically (no model,
so it runs for every run whatever is loaded):

* **exact duplicate**: the same text after normalisation (Unicode NFKC, case-folded, punctuation
  removed, whitespace collapsed);
* **near duplicate**: not exact, and the Jaccard similarity of the two texts' word sets (after the
  same normalisation) is >= ``threshold`` (default 0.8, the usual near-duplicate cut of MinHash
  deduplication, e.g. Lee et al. 2022, "Deduplicating Training Data Makes Language Models Better").

An idea counts once, against the first earlier idea it repeats; ``distinct = n - exact - near``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

NEAR_DUPLICATE_JACCARD = 0.8
METHOD = ("exact: identical after NFKC, case-folding, punctuation removal and whitespace collapse; "
          "near: word-set Jaccard >= threshold against an earlier idea of the same instance")

_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)


def normalise(text: str) -> str:
    """Case-folded NFKC text without punctuation, whitespace collapsed to single spaces."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_PUNCT.sub(" ", folded).split())


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| of two word sets, in [0, 1]; two empty sets give 1.0."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def count_duplicates(texts: Sequence[str], threshold: float = NEAR_DUPLICATE_JACCARD) -> dict[str, Any]:
    """Duplicates among one instance's ideas.

    Args:
        texts: the ideas' texts, in generation order.
        threshold: word-set Jaccard at or above which two ideas are near duplicates, in (0, 1].

    Returns:
        ``{"n", "exact_duplicates", "near_duplicates", "distinct", "pairs"}``; ``pairs`` lists
        ``[later, earlier, "exact" | "near", jaccard]`` for every idea counted as a repeat.

    Raises:
        ValueError: ``threshold`` outside (0, 1].
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"near-duplicate threshold {threshold} is not in (0, 1]")
    norms = [normalise(t) for t in texts]
    words = [frozenset(n.split()) for n in norms]
    exact = near = 0
    pairs: list[list[Any]] = []
    for i in range(len(texts)):
        for j in range(i):
            if norms[i] == norms[j]:
                exact += 1
                pairs.append([i, j, "exact", 1.0])
                break
            similarity = jaccard(words[i], words[j])
            if similarity >= threshold:
                near += 1
                pairs.append([i, j, "near", round(similarity, 4)])
                break
    return {"n": len(texts), "exact_duplicates": exact, "near_duplicates": near,
            "distinct": len(texts) - exact - near, "pairs": pairs}


def duplicate_report(groups: Iterable[Sequence[str]],
                     threshold: float = NEAR_DUPLICATE_JACCARD) -> dict[str, Any]:
    """Duplicates summed over instances (each group: the ideas generated for one instance).

    Returns:
        ``{"method", "threshold", "instances", "ideas", "exact_duplicates", "near_duplicates",
        "distinct", "instances_with_duplicates", "duplicate_share"}``; ``duplicate_share`` =
        (exact + near) / ideas, None when there are no ideas.
    """
    counts = [count_duplicates(list(g), threshold) for g in groups]
    ideas = sum(c["n"] for c in counts)
    exact = sum(c["exact_duplicates"] for c in counts)
    near = sum(c["near_duplicates"] for c in counts)
    return {
        "method": METHOD, "threshold": threshold, "instances": len(counts), "ideas": ideas,
        "exact_duplicates": exact, "near_duplicates": near, "distinct": ideas - exact - near,
        "instances_with_duplicates": sum(1 for c in counts if c["exact_duplicates"] + c["near_duplicates"]),
        "duplicate_share": (exact + near) / ideas if ideas else None,
    }


DUPLICATE_COLUMNS = ["ideas", "exact dup.", "near dup.", "distinct", "instances with dup.", "dup. share"]


def duplicate_row(report: dict[str, Any]) -> list[Any]:
    """The cells of :data:`DUPLICATE_COLUMNS` for one :func:`duplicate_report`."""
    return [report["ideas"], report["exact_duplicates"], report["near_duplicates"], report["distinct"],
            report["instances_with_duplicates"], report["duplicate_share"]]


def duplicate_note(threshold: float = NEAR_DUPLICATE_JACCARD) -> str:
    """The table note that states how duplicates were counted."""
    return (f"Duplicates among the ideas generated for the same instance: exact = identical after "
            f"normalisation (case, punctuation, whitespace); near = word-set Jaccard >= {threshold:g} with "
            "an earlier idea (lexical, no embedding model). Each repeat is counted once.")
