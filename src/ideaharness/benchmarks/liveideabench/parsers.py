"""LiveIdeaBench reply parsers: the idea, the critique scores and the fluency grade.

Verdicts are read as their final, on-scale value (:mod:`ideaharness.llm.parsing`): a score off
1–10, a missing dimension or a reply with no score object is a parse failure (retried, then
counted), never a default. The published parsers are laxer (notes §1.5, §5.4, §5.6: any value is
accepted, ``7.5`` becomes 7, the first letter of "Answer: B" is read as grade A); those readings are
not reproduced, even with ``--parity``, because they turn malformed replies into scores.
"""

from __future__ import annotations

import re

from ideaharness.errors import ParseError
from ideaharness.llm.parsing import check_text, extract_json_object, scale_value

IDEA_MIN_WORDS = 5
"""An idea is a short proposal (the prompt asks for at most 100 words); fewer words is no idea."""
SCORE_SCALE = (1, 10)
DIMENSIONS: dict[str, tuple[str, ...]] = {
    "v2": ("originality", "feasibility", "clarity"),
    "v1": ("originality", "feasibility"),
}
"""Critique dimensions per protocol version (``prompts.json`` v2, ``prompts.yaml`` v1)."""
GRADES = ("A", "B", "C", "D")

_MARKUP = re.compile(r"[*_`#>\"'“”\s]+")
_LEADING_GRADE = re.compile(r"^\(?([ABCD])(?:\)|\.|:|$)", re.IGNORECASE)
_LABELLED = re.compile(
    r"(?<!\w)(?:answer|choice|option|grade)\**\s*(?:is\s+|[:：=]\s*)\**\s*\(?([ABCD])\b\)?"
    r"(?!\s*(?:or|and|/|,|-)\s*\(?[ABCD]\b)", re.IGNORECASE)


def clean_idea(text: str) -> str:
    """The idea as the published ``run.py`` stores it: whitespace runs (``\\n``, ``\\r``, ``\\t``)
    collapsed to one space, outer whitespace stripped."""
    return " ".join(text.split())


def parse_idea(text: str) -> dict[str, object]:
    """``{"idea": str, "words": int}`` from a generation reply.

    The reply must be real prose (:func:`~ideaharness.llm.parsing.check_text`, at least
    :data:`IDEA_MIN_WORDS` words, not a refusal); it is stored cleaned (:func:`clean_idea`).
    The 100-word limit of the prompt is not enforced here: ``words`` is recorded and the share of
    ideas over it reported.

    Raises:
        ParseError: empty, too short, mostly non-words, or a refusal.
    """
    idea = clean_idea(check_text(text, "idea", min_words=IDEA_MIN_WORDS))
    return {"idea": idea, "words": len(idea.split())}


def parse_critique(text: str, protocol: str = "v2") -> dict[str, int]:
    """Scores ``{dimension: int 1..10}`` from a critique reply (dimensions of :data:`DIMENSIONS`).

    The final JSON object holding every dimension counts (v2 asks for a fenced JSON block, v1 for
    ``SCORES = {...}``; both are read as that object). Each value must be an integer on 1–10
    (a JSON number or a string holding only one).

    Raises:
        ParseError: no JSON object with every dimension, two different final objects, or a
            value that is not an integer on 1–10 (``0``, ``11``, ``7.5``, ``"N/A"``).
    """
    dims = DIMENSIONS[protocol]
    scores = extract_json_object(text, required=dims)
    return {d: int(scale_value(scores[d], *SCORE_SCALE, integer=True, what=d)) for d in dims}


def parse_fluency(text: str) -> str:
    """The grade ``"A"``–``"D"`` of a fluency reply (A: completely different ideas … D:
    academically identical).

    Read as a person would: a reply whose first line is a grade (``B``, ``(B)``, ``B.``,
    ``**B. Different ideas …**``), else the final labelled verdict (``Answer: B``, ``The answer
    is C``). Any other reply is a parse failure (the published ``cleaned[0]`` reads "Answer: B"
    as A).

    Raises:
        ParseError: no grade, or a restated choice ("Answer: B or C").
    """
    lines = [_MARKUP.sub(" ", line).strip() for line in text.strip().splitlines()]
    lines = [line for line in lines if line]
    if lines:
        first = _LEADING_GRADE.match(lines[0])
        if first:
            return first.group(1).upper()
    verdicts = _LABELLED.findall(text)
    if not verdicts:
        raise ParseError(f"no grade A-D in the reply {text[:60]!r}")
    return verdicts[-1].upper()
