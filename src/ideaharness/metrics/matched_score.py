"""Matched score of a generated hypothesis against the ground truth (MOOSE-Chem, Yang et al.,
ICLR 2025, ``evaluate.py``; ResearchBench hypothesis composition).

A judge grades 0-5 on a 6-point Likert scale how many of the ground-truth key points the proposed
hypothesis covers, and how faithfully (5 = all, used the same way, no flawed additions; 0 = none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ideaharness.errors import ParseError
from ideaharness.llm.parsing import (
    NoVerdict,
    extract_json_object,
    final_verdict,
    scale_value,
    verdict_pattern,
)

MATCHED_SCORE_MIN = 0
MATCHED_SCORE_MAX = 5
MIN_HYPOTHESIS_CHARS = 20
"""The published scorer skips hypotheses shorter than this (``score.py``)."""

_LABEL = verdict_pattern(r"matched\s*score", words=("is", "of"))


def _score(value: object) -> int:
    return int(scale_value(value, MATCHED_SCORE_MIN, MATCHED_SCORE_MAX, what="matched score"))


def parse_matched_score(text: str) -> int:
    """The integer matched score in [0, 5]: the final ``Matched score: N`` verdict, else the JSON
    ``matched_score`` field.

    The last well-formed ``Matched score:`` line counts (a restated "Matched score: 0-5" is not
    one); two different scores in the final answer are ambiguous. A JSON field is read strictly.

    Raises:
        ParseError: no labelled score, an ambiguous one, a fractional one, or one outside [0, 5].
            Unlabelled numbers are not read (a "key point 1" must not become a score of 1).
    """
    try:
        return final_verdict(text, _LABEL, _score, out_of=MATCHED_SCORE_MAX, what="matched score")
    except NoVerdict:
        pass
    try:
        obj = extract_json_object(text, required=("matched_score",))
    except ParseError:
        raise ParseError("no 'Matched score: N' line or JSON 'matched_score' in the reply") from None
    return _score(obj["matched_score"])


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
