"""HindSight reply parsers: the generated idea, the match verdict and the judge's review.

Every reply is read from its final JSON object; a reply that is not the asked answer is a parse
failure (retried, then counted), never a value: a match verdict that does not parse is never a
match, a review that does not parse is no score.
"""

from __future__ import annotations

import re
from typing import Any

from ideaharness.errors import ParseError
from ideaharness.llm.parsing import check_text, extract_json_object, scale_value

IDEA_MIN_WORDS = 20
"""An idea states a problem and an approach; fewer words is no idea."""
MAX_KEY_PHRASES = 5
SCORE_SCALE = (1, 10)
REVIEW_DIMENSIONS = ("novelty", "quality")
MATCH_WORDS = {"yes": True, "match": True, "true": True, "no": False, "no match": False, "false": False}
"""Accepted values of the ``match`` field (case-insensitive; JSON booleans too)."""
MAX_REPLY_CHARS = 50_000
_PHRASE = re.compile(r"[^\W_][\w\s'’-]*[^\W_]|[^\W_]", re.UNICODE)


def key_phrase_list(value: Any, *, field: str = "key_phrases") -> list[str]:
    """Key phrases as given: a list of short strings (or one comma-separated string), each cleaned
    of outer punctuation, duplicates removed, at most :data:`MAX_KEY_PHRASES`, each at most 8 words.

    Raises:
        ParseError: not a string or a list of strings, or no phrase left.
    """
    if isinstance(value, str):
        items: list[Any] = value.split(",")
    elif isinstance(value, list):
        items = value
    else:
        raise ParseError(f"field {field!r}: expected a list of short phrases, got {type(value).__name__}")
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise ParseError(f"field {field!r}: every phrase must be a string, got {type(item).__name__}")
        found = _PHRASE.search(item)
        phrase = " ".join(found.group(0).split()) if found else ""
        if phrase and len(phrase.split()) <= 8 and phrase.lower() not in {p.lower() for p in out}:
            out.append(phrase)
    if not out:
        raise ParseError(f"field {field!r}: no phrase of at most 8 words")
    return out[:MAX_KEY_PHRASES]


def idea_fields(title: Any, idea: Any, key_phrases: Any) -> dict[str, Any]:
    """The parsed idea ``{"title", "idea", "key_phrases"}`` from its fields (a model's JSON reply
    or a system's answer): ``idea`` real prose of at least :data:`IDEA_MIN_WORDS` words
    (:func:`~ideaharness.llm.parsing.check_text`), ``title`` optional text, ``key_phrases``
    optional (:func:`key_phrase_list`; None when not given: the run extracts them from the text).

    Raises:
        ParseError: naming the field that fails.
    """
    if not isinstance(idea, str):
        raise ParseError(f"field 'idea': expected text, got {type(idea).__name__}")
    try:
        text = " ".join(check_text(idea, "the idea", min_words=IDEA_MIN_WORDS, max_words=600).split())
    except ParseError as exc:
        raise ParseError(f"field 'idea': {exc}") from None
    if title is not None and not isinstance(title, str):
        raise ParseError(f"field 'title': expected text, got {type(title).__name__}")
    clean_title = " ".join(title.split())[:300] if isinstance(title, str) and title.strip() else None
    phrases = None if key_phrases in (None, [], "") else key_phrase_list(key_phrases)
    return {"title": clean_title, "idea": text, "key_phrases": phrases}


def parse_idea(text: str) -> dict[str, Any]:
    """A generated idea: the reply's final JSON object with ``idea`` (and optional ``title`` and
    ``key_phrases``), read by :func:`idea_fields`.

    Raises:
        ParseError: no JSON object with ``idea``, or a field :func:`idea_fields` refuses.
    """
    if len(text) > MAX_REPLY_CHARS:
        raise ParseError(f"a reply of {len(text):,} characters (at most {MAX_REPLY_CHARS:,} are read)")
    obj = extract_json_object(text, ("idea",))
    lowered = {str(k).lower(): v for k, v in obj.items()}
    return idea_fields(lowered.get("title"), lowered["idea"], lowered.get("key_phrases"))


def parse_match(text: str) -> bool:
    """The match verdict: the reply's final JSON object's ``match``, ``"yes"``/``"no"`` (also
    ``"match"``/``"no match"``, JSON ``true``/``false``).

    Raises:
        ParseError: no JSON object with ``match``, or another value (``"maybe"``, ``1``).
    """
    if len(text) > MAX_REPLY_CHARS:
        raise ParseError(f"a reply of {len(text):,} characters (at most {MAX_REPLY_CHARS:,} are read)")
    obj = extract_json_object(text, ("match",))
    value = obj["match"]
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and " ".join(value.lower().split()) in MATCH_WORDS:
        return MATCH_WORDS[" ".join(value.lower().split())]
    raise ParseError(f"field 'match': expected \"yes\" or \"no\", got {value!r}")


def parse_review(text: str) -> dict[str, int]:
    """The judge's review of one idea: integers on 1-10 for ``novelty`` and ``quality`` in the
    reply's final JSON object.

    Raises:
        ParseError: no JSON object with both, or a value that is not an integer on 1-10.
    """
    if len(text) > MAX_REPLY_CHARS:
        raise ParseError(f"a reply of {len(text):,} characters (at most {MAX_REPLY_CHARS:,} are read)")
    obj = extract_json_object(text, REVIEW_DIMENSIONS)
    return {d: int(scale_value(obj[d], *SCORE_SCALE, integer=True, what=d)) for d in REVIEW_DIMENSIONS}
