"""LiveIdeaBench reply parsers: the idea, the critique scores and the fluency grade.

A reply that is not the model's answer is a parse failure (retried, then counted), never a value:

* a critique is read only from the reply's one final JSON score object (:func:`parse_critique`):
  every dimension once, each an integer on 1–10, nothing but closing markup after it, and no other
  score object in the reply that disagrees with it;
* an idea must be complete prose (:func:`parse_idea`): it ends a sentence, and its sentences start
  as sentences do, so a reply cut off mid-sentence or with its words shuffled is not an idea;
* a fluency grade is the first line's grade or the final labelled verdict (:func:`parse_fluency`).

The published parsers are laxer (x66ccff/liveideabench ``utils/LLM.py``: the *first* JSON block,
any value accepted, then a per-key regex over the prose; ``hash.py``: the first letter of the reply
with non-letters removed, so "Answer: B" is grade A). Those readings are not reproduced, even with
``--parity``, because they turn malformed replies into scores (docs/liveideabench.md).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ideaharness.errors import ParseError
from ideaharness.llm.parsing import check_text, scale_value

IDEA_MIN_WORDS = 5
"""An idea is a short proposal (the prompt asks for at most 100 words); fewer words is no idea."""
SCORE_SCALE = (1, 10)
DIMENSIONS: dict[str, tuple[str, ...]] = {
    "v2": ("originality", "feasibility", "clarity"),
    "v1": ("originality", "feasibility"),
}
"""Critique dimensions per protocol version (``prompts.json`` v2, ``prompts.yaml`` v1)."""
GRADES = ("A", "B", "C", "D")
MAX_CRITIQUE_CHARS = 50_000
"""A longer critique reply is a parse failure (scanning it for JSON would cost seconds)."""

_MARKUP = re.compile(r"[*_`#>\"'“”\s]+")
_LEADING_GRADE = re.compile(r"^\(?([ABCD])(?:\)|\.|:|$)", re.IGNORECASE)
_OPTION_MARKER = re.compile(r"(?<![\w'’])\(?([ABCD])(?:\)|\.(?=\s|$)|:)")
"""An option marker such as ``C)``, ``(C)``, ``C.``, ``C:`` (upper case only: "a." is a word)."""
_LABELLED = re.compile(
    r"(?<!\w)(?:answer|choice|option|grade)\**\s*(?:is\s+|[:：=]\s*)\**\s*\(?([ABCD])\b\)?"
    r"(?!\s*(?:or|and|/|,|-)\s*\(?[ABCD]\b)", re.IGNORECASE)


def clean_idea(text: str) -> str:
    """The idea as the published ``run.py`` stores it: whitespace runs (``\\n``, ``\\r``, ``\\t``)
    collapsed to one space, outer whitespace stripped."""
    return " ".join(text.split())


_ABBREVIATIONS = frozenset({"etc.", "al.", "vs.", "cf.", "approx.", "resp.", "ca.", "fig.", "figs.", "eq.",
                            "eqs.", "no.", "nos.", "vol.", "dr.", "mr.", "ms.", "prof.", "st.", "inc.",
                            "ltd.", "co.", "jr.", "sr.", "ref.", "refs.", "sec.", "ch.", "p.", "pp."})
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]*_`»]*$")
_OPENING_MARKUP = re.compile(r"^[\"'“‘(\[*_`#>«-]+")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+\S")
_CLOSING = re.compile(r"[.!?)\]\"'”’*`»]$")
_DETERMINERS = frozenset({"a", "an", "the"})
_FUNCTION_WORDS = frozenset({"a", "an", "the", "to", "of", "in", "on", "at", "by", "for", "with", "from",
                             "and", "or", "but", "we", "it", "is", "are", "was", "were", "would", "will",
                             "that", "which", "this", "these", "those"})
"""A determiner followed by one of these (``the to``, ``a with``) is no English phrase."""
_MARKER = re.compile(r"^\(?\w{1,3}\)$")


def _lowercase_start(token: str) -> bool:
    """Whether a word opens in lower case like a mid-sentence word (``sensors``), as opposed to a
    term that is written so (``mRNA``, ``pH``, ``p53``: an upper-case letter or digit inside)."""
    word = _OPENING_MARKUP.sub("", token)
    return bool(word) and word[0].islower() and not any(c.isupper() or c.isdigit() for c in word)


def prose_problem(text: str) -> str | None:
    """Why ``text`` is not complete prose, or None when it is.

    Complete prose ends a sentence (terminal punctuation or closing markup; the final item of a
    list on several lines may end without it), does not open with a lower-case word, closes every
    bracket after opening it, never puts a determiner before a function word (``the to``), and
    after every sentence end inside it (not an abbreviation such as ``etc.``, ``et al.``,
    ``e.g.``) the next word does not open in lower case. A reply cut off mid-sentence or with its
    words shuffled fails one of these (on shuffled ideas of ~60 words cut to half, all but a few
    in a thousand; tests/liveideabench/test_faults.py).
    """
    stripped = text.strip()
    tokens = stripped.split()
    if not tokens:
        return "the reply is empty"
    lines = stripped.splitlines()
    if not _CLOSING.search(stripped) and not (len(lines) > 1 and _LIST_ITEM.match(lines[-1])):
        return f"the reply does not end a sentence ({' '.join(tokens[-3:])!r})"
    if _lowercase_start(tokens[0]):
        return f"the reply opens mid-sentence ({' '.join(tokens[:3])!r})"
    depth = 0
    for token in tokens:
        if _MARKER.match(token):  # a list marker such as "1)" or "(a)"
            continue
        for char in token:
            depth += (char == "(") - (char == ")")
            if depth < 0:
                return f"a bracket closes before it opens ({token!r})"
    if depth:
        return "a bracket is never closed"
    for before, after in zip(tokens, tokens[1:], strict=False):
        word = before.lower().strip("\"'“”‘’()[]*_`")
        if (_SENTENCE_END.search(before) and not before.endswith("...") and word not in _ABBREVIATIONS
                and word.count(".") < 2 and _lowercase_start(after)):
            return f"a sentence ends and the next opens in lower case ({before} {after})"
        if before.lower() in _DETERMINERS and after.lower().strip(".,;:!?") in _FUNCTION_WORDS:
            return f"no English phrase ({before} {after})"
    return None


def parse_idea(text: str) -> dict[str, object]:
    """``{"idea": str, "words": int}`` from a generation reply.

    The reply must be real prose (:func:`~ideaharness.llm.parsing.check_text`, at least
    :data:`IDEA_MIN_WORDS` words, not a refusal) and complete (:func:`prose_problem`: a reply cut
    off mid-sentence or with its words shuffled is no idea); it is stored cleaned
    (:func:`clean_idea`). The 100-word limit of the prompt is not enforced here: ``words`` is
    recorded and the share of ideas over it reported.

    Raises:
        ParseError: empty, too short, mostly non-words, a refusal, or not complete prose.
    """
    idea = check_text(text, "idea", min_words=IDEA_MIN_WORDS)
    problem = prose_problem(idea)
    if problem:
        raise ParseError(f"idea is not complete prose: {problem}")
    idea = clean_idea(idea)
    return {"idea": idea, "words": len(idea.split())}


_AFTER_SCORES = re.compile(r"[\s`*_.,;:!)\]}\"'”’]*")


class _DuplicateKey(ValueError):
    pass


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        folded = str(key).strip().lower()
        if folded in out:
            raise _DuplicateKey(f"the score object gives {key!r} twice")
        out[folded] = value
    return out


def _score_objects(text: str, dims: tuple[str, ...]) -> list[tuple[int, dict[str, Any]]]:
    """``(end offset, object)`` of every top-level JSON object of ``text`` that names a dimension
    (keys lower-cased).

    Raises:
        ParseError: a score object that gives a dimension twice.
    """
    decoder = json.JSONDecoder(object_pairs_hook=_object_pairs)
    found: list[tuple[int, dict[str, Any]]] = []
    i = 0
    while (i := text.find("{", i)) != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except _DuplicateKey as exc:
            raise ParseError(str(exc)) from None
        except (json.JSONDecodeError, ValueError, RecursionError):  # not JSON; a 4,301-digit number
            i += 1
            continue
        if isinstance(value, dict) and any(d in value for d in dims):
            found.append((end, value))
        i = end
    return found


def parse_critique(text: str, protocol: str = "v2") -> dict[str, int]:
    """Scores ``{dimension: int 1..10}`` from a critique reply (dimensions of :data:`DIMENSIONS`).

    The scores are the reply's one final JSON score object (v2 asks for a fenced JSON block after
    a short analysis, v1 for ``SCORES = {...}``): it names every dimension exactly once, each value
    an integer on 1–10 (a JSON number or a string holding only one); after it come only
    whitespace, closing fences, brackets or punctuation; and any other object in the reply that
    names a dimension gives the same values. Values written only in prose are not read.

    Raises:
        ParseError: no score object; a reply over :data:`MAX_CRITIQUE_CHARS`; a dimension missing
            or given twice; a value that is not an
            integer on 1–10 (``0``, ``11``, ``7.5``, ``"N/A"``); text after the score object; or
            two score objects that disagree (a reply that is not one answer, e.g. words shuffled).
    """
    dims = DIMENSIONS[protocol]
    if len(text) > MAX_CRITIQUE_CHARS:
        raise ParseError(f"a critique of {len(text):,} characters (the prompt asks for under 100 words and "
                         f"a score block; at most {MAX_CRITIQUE_CHARS:,} are read)")
    objects = _score_objects(text, dims)
    if not objects:
        raise ParseError(f"no JSON score object with {', '.join(dims)} in the reply {text[:60]!r}")
    end, final = objects[-1]
    missing = [d for d in dims if d not in final]
    if missing:
        raise ParseError(f"the final score object lacks {missing[0]!r}")
    scores = {d: int(scale_value(final[d], *SCORE_SCALE, integer=True, what=d)) for d in dims}
    tail = text[end:]
    if not _AFTER_SCORES.fullmatch(tail):
        raise ParseError(f"text follows the score object ({tail.strip()[:40]!r}); the scores must end "
                         "the reply")
    for _, other in objects[:-1]:
        if any(d in other and other[d] != final[d] for d in dims):
            raise ParseError("the reply gives two different score objects")
    return scores


def parse_fluency(text: str) -> str:
    """The grade ``"A"``–``"D"`` of a fluency reply (A: completely different ideas … D:
    academically identical).

    Read as a person would: a reply whose first line is a grade (``B``, ``(B)``, ``B.``,
    ``**B. Different ideas …**``), else the labelled verdict (``Answer: B``, ``The answer is
    C``). A reply that gives two different grades (a first-line grade and another option marker
    such as ``C)`` elsewhere, or two labelled verdicts that differ) is not one answer. Any other
    reply is a parse failure (the published ``cleaned[0]`` reads "Answer: B" as A).

    Raises:
        ParseError: no grade, a restated choice ("Answer: B or C"), or two different grades.
    """
    lines = [_MARKUP.sub(" ", line).strip() for line in text.strip().splitlines()]
    lines = [line for line in lines if line]
    if lines:
        first = _LEADING_GRADE.match(lines[0])
        if first:
            grade = first.group(1).upper()
            rest = text.strip()[len(text.strip().splitlines()[0]):] + " " + lines[0][first.end():]
            others = {g.upper() for g in _OPTION_MARKER.findall(rest)} | {
                g.upper() for g in _LABELLED.findall(text)}
            if others - {grade}:
                raise ParseError(f"the reply gives two grades ({grade} and {sorted(others - {grade})[0]})")
            return grade
    verdicts = {v.upper() for v in _LABELLED.findall(text)}
    if not verdicts:
        raise ParseError(f"no grade A-D in the reply {text[:60]!r}")
    if len(verdicts) > 1:
        raise ParseError(f"the reply gives two grades ({', '.join(sorted(verdicts))})")
    return verdicts.pop()
