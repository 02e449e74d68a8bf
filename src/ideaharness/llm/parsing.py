"""Lenient parsers for model replies: JSON inside fences or prose, ratings in free text.

Each parser raises :class:`ideaharness.errors.ParseError` when the reply lacks the demanded
shape; none of them invents a value.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ideaharness.errors import ParseError

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def extract_json(text: str) -> Any:
    """The first JSON object or array in ``text``.

    Tries, in order: the whole text, each fenced code block, then the longest balanced
    ``{...}``/``[...]`` span found by scanning from each opening bracket.

    Raises:
        ParseError: if no candidate decodes as JSON.
    """
    stripped = text.strip()
    candidates = [stripped] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            pass
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                value, _ = decoder.raw_decode(text, i)
            except json.JSONDecodeError:
                continue
            return value
    raise ParseError("no JSON object or array found in the reply")


def extract_json_object(text: str, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """Like :func:`extract_json` but demands an object holding every key in ``required``.

    Key lookup is case-insensitive; the returned dict keeps the keys as ``required`` spells them
    plus any others as given.
    """
    value = extract_json(text)
    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
        value = value[0]
    if not isinstance(value, dict):
        raise ParseError(f"expected a JSON object, got {type(value).__name__}")
    lowered = {str(k).lower().strip(): v for k, v in value.items()}
    out = dict(value)
    for key in required:
        if key not in value:
            if key.lower() not in lowered:
                raise ParseError(f"JSON object lacks the key {key!r}")
            out[key] = lowered[key.lower()]
    return out


_SCALE_PHRASE = re.compile(
    r"(?:scale|range)\s*(?:of|from)?\s*\d+(?:\.\d+)?\s*(?:-|–|—|to)\s*\d+(?:\.\d+)?", re.IGNORECASE
)
_RATING_LABEL = re.compile(r"rating\s*[:=]\s*\**\s*(-?\d+(?:\.\d+)?)", re.IGNORECASE)
_OUT_OF = re.compile(r"(-?\d+(?:\.\d+)?)\s*(?:/|out of)\s*(\d+)", re.IGNORECASE)
_NUMBER = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)(?!\w)")


def parse_rating(text: str, low: float, high: float, *, integer: bool = True) -> float:
    """A single rating on the scale [low, high] from free text.

    Order of evidence: an explicit ``Rating: x`` label; ``x/high`` or ``x out of high``; otherwise
    the first number left after deleting scale descriptions such as "on a scale of 1-10" (so
    "On a scale of 1-10, I'd give this a 7" rates 7, not 1).

    Raises:
        ParseError: if no number in range is found, or (``integer``) the number is fractional.
    """
    for pattern in (_RATING_LABEL,):
        match = pattern.search(text)
        if match:
            return _in_range(float(match.group(1)), low, high, integer)
    for match in _OUT_OF.finditer(text):
        if float(match.group(2)) == high:
            return _in_range(float(match.group(1)), low, high, integer)
    cleaned = _SCALE_PHRASE.sub(" ", text)
    for match in _NUMBER.finditer(cleaned):
        value = float(match.group(1))
        if low <= value <= high:
            return _in_range(value, low, high, integer)
    raise ParseError(f"no rating in [{low:g}, {high:g}] found in the reply")


def _in_range(value: float, low: float, high: float, integer: bool) -> float:
    if not low <= value <= high:
        raise ParseError(f"rating {value:g} outside [{low:g}, {high:g}]")
    if integer and value != int(value):
        raise ParseError(f"rating {value:g} is not an integer")
    return value
