"""IdeaBench reply parsers and the JSON schemas sent with each step.

Generated texts (ideas, the target idea) must pass :func:`ideaharness.llm.parsing.check_text`;
verdicts are read as their final, on-scale value (:mod:`ideaharness.llm.parsing`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ideaharness.errors import ParseError
from ideaharness.llm.parsing import check_text, extract_json, json_values, parse_rating, scale_value

IDEA_MIN_WORDS = 8
"""An idea is "a brief paragraph stating a hypothesis and how it could be tested" (prompt)."""
TARGET_IDEA_MIN_WORDS = 12
"""The target idea is "one concise paragraph" with the hypothesis and how it would be tested."""
OVERLAP_SCALE = (1, 10)

_HYPOTHESIS_LABEL = re.compile(
    r"^[\s#>*_\-]*(?:\*\*)?\s*hypothesis\s*(?:\*\*)?\s*[:：]\s*(?:\*\*)?", re.IGNORECASE | re.MULTILINE
)


def parse_ideas(text: str, n_ideas: int) -> list[dict[str, str]]:
    """Exactly ``n_ideas`` ideas ``{"title", "idea"}`` from a generation reply.

    Accepts ``{"ideas": [...]}`` or a bare list; items may be objects with ``idea``/``text``/
    ``hypothesis``/``description`` or plain strings. Every idea must be real prose
    (:func:`~ideaharness.llm.parsing.check_text`, at least :data:`IDEA_MIN_WORDS` words): an
    idea that is empty, whitespace, zero-width characters or punctuation ("...") fails the
    whole reply (retried, then counted), it is never scored.

    Raises:
        ParseError: not a list of ideas, a degenerate idea, or not exactly ``n_ideas`` ideas.
    """
    value = extract_json(text)
    if isinstance(value, dict):
        items = next((v for k, v in value.items() if str(k).lower() in ("ideas", "hypotheses")), None)
        if items is None and len(value) == 1:
            items = next(iter(value.values()))
        value = items
    if not isinstance(value, list):
        raise ParseError("expected a list of ideas")
    ideas: list[dict[str, str]] = []
    for k, item in enumerate(value, start=1):
        if isinstance(item, str):
            title, body = "", item
        elif isinstance(item, dict):
            lowered = {str(k).lower(): v for k, v in item.items()}
            title = str(lowered.get("title") or "")
            body = next(
                (str(lowered[k]) for k in ("idea", "text", "hypothesis", "description") if lowered.get(k)),
                "",
            )
        else:
            raise ParseError(f"idea {k} is a {type(item).__name__}, not text")
        ideas.append(checked_idea(title, body, f"idea {k}"))
    check_idea_count(ideas, n_ideas)
    return ideas


def checked_idea(title: str, body: str, what: str) -> dict[str, str]:
    """``{"title", "idea"}`` of one idea, if its text is an idea: real prose
    (:func:`~ideaharness.llm.parsing.check_text`) of at least :data:`IDEA_MIN_WORDS` words, cleaned;
    the title stripped. The rule of :func:`parse_ideas`, shared with a system's answers
    (:mod:`.contract`).

    Raises:
        ParseError: a degenerate idea (the message names ``what``).
    """
    return {"title": title.strip(), "idea": check_text(body, what, min_words=IDEA_MIN_WORDS)}


def check_idea_count(ideas: Sequence[object], n_ideas: int) -> None:
    """The count rule of :func:`parse_ideas`: exactly ``n_ideas`` ideas.

    Raises:
        ParseError: another number of ideas.
    """
    if len(ideas) != n_ideas:
        raise ParseError(f"expected {n_ideas} ideas, got {len(ideas)}")


def parse_overlap(text: str) -> dict[str, Any]:
    """``{"rating": int 1..10, "explanation": str}`` from an overlap reply.

    The JSON ``rating`` field, when the reply holds a JSON object, is read strictly: a rating of
    11, 0 or "N/A" is a parse failure, never a number taken from the explanation. A reply without
    any JSON object is read as free text (:func:`~ideaharness.llm.parsing.parse_rating`: the
    final labelled rating only).

    Raises:
        ParseError: as described.
    """
    objects = [v for v in json_values(text) if isinstance(v, dict)]
    if objects:
        with_rating = [o for o in objects if any(str(k).lower().strip() == "rating" for k in o)]
        if not with_rating:
            raise ParseError("the reply's JSON object lacks 'rating'")
        obj = {str(k).lower().strip(): v for k, v in with_rating[-1].items()}
        rating = scale_value(obj["rating"], *OVERLAP_SCALE)
        return {"rating": int(rating), "explanation": str(obj.get("explanation", ""))}
    rating = parse_rating(text, *OVERLAP_SCALE)
    return {"rating": int(rating), "explanation": text.strip()}


def parse_target_idea(text: str) -> str:
    """The target paper's idea as the prompt demands it: a paragraph beginning "Hypothesis:".

    The text after the (last) line-initial ``Hypothesis:`` label is the idea; it must be real
    prose of at least :data:`TARGET_IDEA_MIN_WORDS` words (not a refusal or a hedge).

    Raises:
        ParseError: no ``Hypothesis:`` label, or the text after it fails
            :func:`~ideaharness.llm.parsing.check_text`.
    """
    labels = list(_HYPOTHESIS_LABEL.finditer(text))
    if not labels:
        raise ParseError("the target idea does not begin with 'Hypothesis:'")
    body = text[labels[-1].end() :].replace("**", "").strip().strip('"').strip()
    return check_text(body, "target idea", min_words=TARGET_IDEA_MIN_WORDS)


def ideas_schema(n: int) -> dict[str, Any]:
    """JSON schema of the generation reply: exactly ``n`` ideas with title and text."""
    return {
        "type": "object",
        "properties": {
            "ideas": {
                "type": "array",
                "minItems": n,
                "maxItems": n,
                "items": {
                    "type": "object",
                    "properties": {"title": {"type": "string"}, "idea": {"type": "string"}},
                    "required": ["title", "idea"],
                },
            }
        },
        "required": ["ideas"],
    }


OVERLAP_SCHEMA = {
    "type": "object",
    "properties": {"rating": {"type": "integer"}, "explanation": {"type": "string"}},
    "required": ["rating", "explanation"],
}


def ranking_schema(labels: Sequence[str]) -> dict[str, Any]:
    """JSON schema of a ranking reply: a permutation-length list of the labels, plus a rationale."""
    return {
        "type": "object",
        "properties": {
            "ranking": {
                "type": "array",
                "items": {"type": "string", "enum": list(labels)},
                "minItems": len(labels),
                "maxItems": len(labels),
            },
            "rationale": {"type": "string"},
        },
        "required": ["ranking", "rationale"],
    }
