"""Title matching: exact, then normalised, then fuzzy above a stated threshold — else no match.

Used wherever a title typed by a person or a model must be found in a list of known papers
(TOMATO-Chem inspiration titles vs the corpus; ResearchBench screening replies vs the pool).
A title below the threshold is a miss; it is never snapped to the nearest candidate.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import Literal

from pydantic import BaseModel

DEFAULT_TITLE_THRESHOLD = 0.9
"""Minimum difflib ratio between normalised titles for a fuzzy match (0.9 tolerates a typo or a
dropped word in a 10-word title, not a different paper)."""

MatchMethod = Literal["exact", "normalised", "fuzzy", "none"]


class TitleMatch(BaseModel):
    index: int | None
    method: MatchMethod
    similarity: float


def normalise_title(title: str) -> str:
    """Lowercase, strip accents, drop punctuation and markdown, collapse whitespace."""
    text = unicodedata.normalize("NFKD", title)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = re.sub(r"[^a-z0-9]+", " ", text)
    return " ".join(text.split())


def match_title(
    query: str, candidates: Sequence[str], threshold: float = DEFAULT_TITLE_THRESHOLD
) -> TitleMatch:
    """Find ``query`` among ``candidates``.

    Returns the first exact match, else the first normalised match, else the best fuzzy match
    whose ratio is >= ``threshold``; otherwise ``TitleMatch(index=None, method="none")``.
    """
    for i, cand in enumerate(candidates):
        if cand == query:
            return TitleMatch(index=i, method="exact", similarity=1.0)
    nq = normalise_title(query)
    normed = [normalise_title(c) for c in candidates]
    for i, cand in enumerate(normed):
        if nq and cand == nq:
            return TitleMatch(index=i, method="normalised", similarity=1.0)
    best, best_ratio = None, 0.0
    for i, cand in enumerate(normed):
        ratio = SequenceMatcher(None, nq, cand).ratio() if nq and cand else 0.0
        if ratio > best_ratio:
            best, best_ratio = i, ratio
    if best is not None and best_ratio >= threshold:
        return TitleMatch(index=best, method="fuzzy", similarity=best_ratio)
    return TitleMatch(index=None, method="none", similarity=best_ratio)
