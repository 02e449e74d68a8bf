"""MLR-Bench reply parsers: the idea, the proposal and the rubric review.

A reply that is not the asked answer is a parse failure (retried by the step, then counted),
never a score:

* an idea or a proposal must be real prose of a sensible length
  (:func:`~ideaharness.llm.parsing.check_text`; not a refusal, not mostly symbols);
* a review is read from its final JSON score object (:func:`parse_review`): every dimension of
  the stage's rubric once, each an integer on the published 1-10 scale, given as
  ``{"score": n, ...}`` or as a bare number. A trailing comma (the upstream output template
  itself has them, ``mlrbench/evals/review_idea.py``) or a stray bracket that breaks the JSON is
  read as a person would read it, from the labelled scores; values written only in prose are not
  read, and two score objects (or two scores of one dimension) that disagree are not one verdict.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from ideaharness.errors import ParseError
from ideaharness.llm.parsing import check_text, scale_value

SCORE_SCALE = (1, 10)
"""Every dimension and the overall assessment are scored 1-10 (upstream rubrics)."""
DIMENSIONS: dict[str, tuple[str, ...]] = {
    "idea": ("consistency", "clarity", "novelty", "feasibility", "significance", "overall"),
    "proposal": ("consistency", "clarity", "novelty", "soundness", "feasibility", "significance", "overall"),
}
"""The rubric of each stage (upstream ``RESEARCH_IDEA_RUBRIC``: five dimensions and an overall
assessment; ``RESEARCH_PROPOSAL_RUBRIC``: the same with soundness, six and an overall)."""
STAGES = tuple(DIMENSIONS)

IDEA_MIN_WORDS = 30
IDEA_MAX_WORDS = 1200
PROPOSAL_MIN_WORDS = 100
PROPOSAL_MAX_WORDS = 8000
MAX_REVIEW_CHARS = 60_000
"""A longer review reply is a parse failure (the prompt asks for one JSON object)."""

_KEY = re.compile(r"[^a-z]")
_ALIASES = {"overallassessment": "overall", "overallscore": "overall", "overall": "overall"}
_TITLE = re.compile(r"^[#*\s]*title[*\s]*[:：][*\s]*(?P<t>.+?)[*\s]*$", re.IGNORECASE | re.MULTILINE)
_HEADING = re.compile(r"^#+\s*(?P<t>.+?)\s*$", re.MULTILINE)


def title_of(text: str) -> str | None:
    """A text's title: its ``Title:`` line or first Markdown heading; None when it has neither."""
    found = _TITLE.search(text) or _HEADING.search(text)
    return found.group("t").strip() if found else None


def parse_idea(text: str) -> dict[str, Any]:
    """``{"idea": str, "title": str | None, "words": int}`` from an idea reply.

    The upstream prompt asks for at most 200 words in three parts (title, motivation, main
    idea); the length is recorded, not enforced. ``title``: a ``Title:`` line or the first
    Markdown heading, None when there is neither.

    Raises:
        ParseError: not prose (:func:`check_text`), fewer than :data:`IDEA_MIN_WORDS` or more
            than :data:`IDEA_MAX_WORDS` words, a refusal.
    """
    idea = check_text(text, "idea", min_words=IDEA_MIN_WORDS, max_words=IDEA_MAX_WORDS)
    return {"idea": idea, "title": title_of(idea), "words": len(idea.split())}


def parse_proposal(text: str) -> dict[str, Any]:
    """``{"proposal": str, "title": str | None, "words": int}`` from a proposal reply (the prompt
    asks for about 2,000 words; recorded, not enforced).

    Raises:
        ParseError: not prose, fewer than :data:`PROPOSAL_MIN_WORDS` or more than
            :data:`PROPOSAL_MAX_WORDS` words, a refusal.
    """
    proposal = check_text(text, "proposal", min_words=PROPOSAL_MIN_WORDS, max_words=PROPOSAL_MAX_WORDS)
    return {"proposal": proposal, "title": title_of(proposal), "words": len(proposal.split())}


def _dimension(key: Any) -> str:
    folded = _KEY.sub("", str(key).lower())
    return _ALIASES.get(folded, folded)


def _outside_strings(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """``(offset, character)`` of every character of ``text[start:]`` outside a JSON string
    literal (a string's quotes and escapes count as inside it)."""
    in_string = escaped = False
    for i in range(start, len(text)):
        c = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        else:
            yield i, c


def _json_end(text: str, start: int) -> int | None:
    """End offset of the bracketed span opened at ``text[start]`` (strings respected), or None."""
    depth = 0
    for i, c in _outside_strings(text, start):
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _without_trailing_commas(span: str) -> str:
    dropped = {i for i, c in _outside_strings(span) if c == "," and re.match(r"\s*[}\]]", span[i + 1:])}
    return "".join(c for i, c in enumerate(span) if i not in dropped)


def _decode(span: str) -> Any:
    for candidate in (span, _without_trailing_commas(span)):
        try:
            return json.loads(candidate)
        except (json.JSONDecodeError, ValueError, RecursionError):
            continue
    return None


def _score_object(value: Any, dims: tuple[str, ...]) -> dict[str, Any] | None:
    """The object's dimension entries (keys folded), unwrapping ``[{...}]`` and one level of
    ``{"review": {...}}``; None when it names no dimension.

    Raises:
        ParseError: one dimension given twice (``Overall`` and ``OverallAssessment``).
    """
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not isinstance(value, dict):
        return None
    named: dict[str, Any] = {}
    for key, entry in value.items():
        dim = _dimension(key)
        if dim in dims:
            if dim in named:
                raise ParseError(f"the score object gives {dim!r} twice")
            named[dim] = entry
    if named:
        return named
    inner = [v for v in value.values() if isinstance(v, dict)]
    return _score_object(inner[0], dims) if len(inner) == 1 else None


def _score_objects(text: str, dims: tuple[str, ...]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    i = 0
    while (i := text.find("{", i)) != -1:
        end = _json_end(text, i)
        value = _decode(text[i:end]) if end is not None else None
        named = _score_object(value, dims)
        if named is None:
            i += 1
            continue
        found.append(named)
        i = end or i + 1
    return found


def _score(entry: Any, dim: str) -> int:
    value = entry.get("score", entry.get("Score")) if isinstance(entry, dict) else entry
    if isinstance(entry, dict) and value is None:
        raise ParseError(f"{dim!r} has no 'score'")
    return int(scale_value(value, *SCORE_SCALE, integer=True, what=dim))


_LABELLED = re.compile(r'"(?P<key>[A-Za-z][A-Za-z _-]{0,40})"\s*:\s*(?:\{\s*"score"\s*:\s*)?'
                       r'(?P<value>"?-?\d+(?:\.\d+)?(?:\s*/\s*\d+)?"?)')


def _labelled_scores(text: str, dims: tuple[str, ...]) -> dict[str, int] | None:
    """The scores of a reply whose score object is not valid JSON (a stray bracket, a cut-off
    justification) but names every dimension with its score in JSON form (``"novelty": {"score":
    7`` or ``"novelty": 7``): None when a dimension is not given that way.

    Raises:
        ParseError: a dimension given two different scores, or a score off the scale.
    """
    found: dict[str, set[str]] = {}
    for match in _LABELLED.finditer(text):
        dim = _dimension(match.group("key"))
        if dim in dims:
            found.setdefault(dim, set()).add(match.group("value").strip('"').replace(" ", ""))
    if any(d not in found for d in dims):
        return None
    twice = [d for d in dims if len(found[d]) > 1]
    if twice:
        values = ", ".join(sorted(found[twice[0]]))
        raise ParseError(f"the reply gives {twice[0]!r} two different scores ({values})")
    return {d: int(scale_value(found[d].pop(), *SCORE_SCALE, integer=True, what=d)) for d in dims}


def parse_review(text: str, stage: str) -> dict[str, int]:
    """The scores ``{dimension: int 1..10}`` of a review reply for ``stage`` ("idea" or
    "proposal"; dimensions :data:`DIMENSIONS`, ``overall`` for the overall assessment).

    Read from the reply's final JSON object naming every dimension (keys case- and
    separator-insensitive: ``OverallAssessment``, ``overall_assessment`` and ``Overall`` are the
    overall assessment); each value ``{"score": n, ...}`` or ``n``, an integer on 1-10 (a JSON
    number, or a string holding only one, ``"7"`` or ``"7/10"``). When no score object decodes (a
    stray bracket, a justification cut off by the token limit), the scores are still read if every
    dimension is written in JSON form with its score (``"novelty": {"score": 7``), each once or
    always the same (:func:`_labelled_scores`).

    Raises:
        ParseError: no score object; a reply over :data:`MAX_REVIEW_CHARS`; a dimension missing
            from the final object or given twice; a score off the scale or not an integer
            (``0``, ``11``, ``7.5``, ``"N/A"``); an incomplete score object after the final one;
            or an earlier complete score object with other scores (two verdicts).
    """
    if stage not in DIMENSIONS:
        raise ValueError(f"unknown MLR-Bench stage {stage!r} (one of {', '.join(STAGES)})")
    dims = DIMENSIONS[stage]
    if len(text) > MAX_REVIEW_CHARS:
        raise ParseError(f"a review of {len(text):,} characters (at most {MAX_REVIEW_CHARS:,} are read)")
    objects = _score_objects(text, dims)
    if not objects:
        labelled = _labelled_scores(text, dims)
        if labelled is not None:
            return labelled
        raise ParseError(f"no JSON score object with {', '.join(dims)} in the reply {text[:60]!r}")
    complete = [i for i, o in enumerate(objects) if all(d in o for d in dims)]
    if not complete:
        missing = [d for d in dims if d not in objects[-1]]
        raise ParseError(f"the score object lacks {missing[0]!r}")
    last = complete[-1]
    if last != len(objects) - 1:
        raise ParseError("an incomplete score object follows the complete one (two answers)")
    scores = {d: _score(objects[last][d], d) for d in dims}
    for i in complete[:-1]:
        earlier = objects[i]
        try:
            other = {d: _score(earlier[d], d) for d in dims}
        except ParseError:
            other = None
        if other != scores:
            raise ParseError("the reply gives two different score objects")
    return scores
