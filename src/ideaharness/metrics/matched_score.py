"""Matched score of a generated hypothesis against the ground truth (MOOSE-Chem, Yang et al.,
ICLR 2025, ``evaluate.py``; ResearchBench hypothesis composition).

A judge grades 0-5 on a 6-point Likert scale how many of the ground-truth key points the proposed
hypothesis covers, and how faithfully (5 = all, used the same way, no flawed additions; 0 = none).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ideaharness.errors import ParseError
from ideaharness.llm.parsing import extract_json_object

MATCHED_SCORE_MIN = 0
MATCHED_SCORE_MAX = 5
MIN_HYPOTHESIS_CHARS = 20
"""The published scorer skips hypotheses shorter than this (``score.py``)."""

_LABEL = re.compile(r"matched\s*score\s*\**\s*[:：=]\s*\**\s*\[?\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)


def parse_matched_score(text: str) -> int:
    """The integer matched score in [0, 5] from a ``Matched score: N`` line or JSON ``matched_score``.

    Raises:
        ParseError: no labelled score, a fractional one, or one outside [0, 5]. Unlabelled numbers
            are not read (a "key point 1" must not become a score of 1).
    """
    match = _LABEL.search(text)
    if match:
        value = float(match.group(1))
    else:
        try:
            obj = extract_json_object(text, required=("matched_score",))
        except ParseError:
            raise ParseError("no 'Matched score: N' line or JSON 'matched_score' in the reply") from None
        try:
            value = float(obj["matched_score"])
        except (TypeError, ValueError):
            raise ParseError(f"matched_score {obj['matched_score']!r} is not a number") from None
    if value != int(value):
        raise ParseError(f"matched score {value:g} is not an integer")
    if not MATCHED_SCORE_MIN <= value <= MATCHED_SCORE_MAX:
        raise ParseError(f"matched score {value:g} outside [0, 5]")
    return int(value)


def mean_including_zeros(scores: Sequence[int | None]) -> float | None:
    """Mean of the parsed scores, zeros included (our headline figure). None = no parsed score.

    Parse failures (None) are excluded and must be counted separately, never scored 0.
    """
    parsed = [s for s in scores if s is not None]
    return sum(parsed) / len(parsed) if parsed else None


def mean_excluding_zeros(per_paper: Mapping[str, Sequence[int | None]]) -> float | None:
    """Published ResearchBench parity figure: mean over papers of the per-paper mean of non-zero scores.

    ``code/hypothesis_composition/score.py`` drops scores of 0 (and hypotheses < 20 characters,
    which callers drop before scoring), averages per paper, then averages the per-paper means; a
    paper with only zeros drops out. This inflates the figure; report it only for parity.
    """
    means = []
    for scores in per_paper.values():
        kept = [s for s in scores if s is not None and s != 0]
        if kept:
            means.append(sum(kept) / len(kept))
    return sum(means) / len(means) if means else None
