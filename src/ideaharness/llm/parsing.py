"""Reading model replies as a person would: JSON, final verdicts, ratings on a scale, rankings.

Rules shared by every benchmark parser (each raises :class:`ideaharness.errors.ParseError` when a
reply lacks the demanded shape; none of them invents a value):

* **The final verdict counts.** A labelled verdict (``Matched score: 4``, ``Selection: candidate
  2``, ``Rating: 7``) is read from its last well-formed occurrence; a restated answer format
  (``candidate 1 or candidate 2``, ``0-5``, ``<an integer>``) is not a verdict. Two different
  verdicts in the *final answer section* (only whitespace, markup, punctuation or "or"/"and"
  between them) are a parse failure.
* **A present field is read strictly.** A JSON field holding a value off the stated scale is a
  parse failure; the parser never falls back to numbers found elsewhere in the reply.
* **A ranking is read as written** (:func:`read_ranking`): a JSON list, a ``>`` chain, a
  comma-separated ranking line or a numbered list; never the order in which commentary
  mentions the labels.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ideaharness.errors import ParseError

T = TypeVar("T")
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class NoVerdict(ParseError):
    """The reply holds no well-formed labelled verdict at all (a parser may try another form)."""


# ----------------------------------------------------------------------------- JSON


def extract_json(text: str) -> Any:
    """The first JSON object or array in ``text``.

    Tries, in order: the whole text, each fenced code block, then the first balanced
    ``{...}``/``[...]`` span that decodes (scanning from each opening bracket).

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
    values = json_values(text)
    if values:
        return values[0]
    raise ParseError("no JSON object or array found in the reply")


def json_values(text: str) -> list[Any]:
    """Every top-level JSON object or array in ``text``, in order of appearance.

    A span that decodes is taken whole (objects nested in it are not listed again); an opening
    bracket that starts no valid JSON is skipped, so an object inside broken JSON is still found.
    """
    return [value for _, _, value in _json_spans(text)]


def _json_spans(text: str) -> list[tuple[int, int, Any]]:
    decoder = json.JSONDecoder()
    out: list[tuple[int, int, Any]] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] in "{[":
            try:
                value, end = decoder.raw_decode(text, i)
            except json.JSONDecodeError:
                i += 1
                continue
            out.append((i, end, value))
            i = end
        else:
            i += 1
    return out


def _lowered(obj: dict[str, Any]) -> dict[str, Any]:
    return {str(k).lower().strip(): v for k, v in obj.items()}


def extract_json_object(text: str, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """The *last* JSON object in ``text`` holding every key in ``required`` (the final answer).

    Key lookup is case-insensitive; the returned dict keeps the keys as ``required`` spells them
    plus any others as given. With no ``required`` key, the last object of the reply. A list
    holding one object counts as that object.

    Raises:
        ParseError: no JSON object; none holds all ``required`` keys; or the final object and
            the one just before it (nothing but whitespace or punctuation between them) differ
            on the ``required`` keys — two different final answers.
    """
    objects: list[tuple[int, int, dict[str, Any]]] = []
    for start, end, value in _json_spans(text):
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict):
            value = value[0]
        if isinstance(value, dict):
            objects.append((start, end, value))
    if not objects:
        whole = extract_json(text)  # raises when there is no JSON at all
        raise ParseError(f"expected a JSON object, got {type(whole).__name__}")
    keys = [k.lower() for k in required]
    complete = [(s, e, o) for s, e, o in objects if all(k in _lowered(o) for k in keys)]
    if not complete:
        present = {k for _, _, o in objects for k in _lowered(o)}
        missing = [k for k in required if k.lower() not in present] or list(required)
        raise ParseError(f"JSON object lacks the key {missing[0]!r}")
    final = complete[-1][2]
    if len(complete) > 1 and _filler_only(text[complete[-2][1] : complete[-1][0]]):
        before, last = _lowered(complete[-2][2]), _lowered(final)
        if any(before.get(k) != last.get(k) for k in (keys or set(before) | set(last))):
            raise ParseError("the final answer gives two different JSON objects")
    out = dict(final)
    for key in required:
        out.setdefault(key, _lowered(final).get(key.lower()))
    return out


def scale_value(value: Any, low: float, high: float, *, integer: bool = True, what: str = "rating") -> float:
    """A JSON field read strictly as a number on the scale [low, high].

    Accepts a JSON number or a string holding only a number (optionally ``x/high``). Booleans,
    text such as ``"N/A"``, fractions where an integer is demanded and values off the scale are
    parse failures — the caller must not then look for a number elsewhere in the reply.

    Raises:
        ParseError: as described.
    """
    if isinstance(value, bool) or value is None:
        raise ParseError(f"{what} {value!r} is not a number")
    if isinstance(value, int | float):
        number = float(value)
    else:
        match = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*(?:/\s*(\d+(?:\.\d+)?))?\s*", str(value))
        if not match or (match.group(2) is not None and float(match.group(2)) != high):
            raise ParseError(f"{what} {value!r} is not a number on [{low:g}, {high:g}]")
        number = float(match.group(1))
    return _in_range(number, low, high, integer, what)


def _in_range(value: float, low: float, high: float, integer: bool, what: str = "rating") -> float:
    if value != value or not low <= value <= high:
        raise ParseError(f"{what} {value:g} outside [{low:g}, {high:g}]")
    if integer and value != int(value):
        raise ParseError(f"{what} {value:g} is not an integer")
    return value


# ----------------------------------------------------------------------------- final verdicts

NUMBER = r"-?\d+(?:\.\d+)?"
# after a value: another value offered as an alternative or a range = a restated answer format
# an alternative, range or denominator continues the verdict's own line (``[^\S\n]``: spaces, no
# line break), so a next line opening with "To 0 ..." or "- 2 ..." is prose, not a restated format
_ALTERNATIVE = re.compile(
    r"[^\S\n]*\**[^\S\n]*(?:\bor\b|\bto\b|[-–—/]|,[^\S\n]*or\b)[^\S\n]*\**[^\S\n]*"
    r"(?:candidate|hypothesis|option)?[^\S\n]*#?[^\S\n]*-?\d", re.I
)
_OUT_OF_TAIL = re.compile(r"[^\S\n]*(?:/|\bout[^\S\n]+of\b)[^\S\n]*(\d+(?:\.\d+)?)", re.I)
# what may stand between two verdicts of the same (final) answer section
_FILLER = re.compile(r"(?:[\s*_#>`|.,;:!?()\[\]{}\"'“”‘’-]|\b(?:or|and|then|also)\b)*", re.I)


def _filler_only(gap: str) -> bool:
    return _FILLER.fullmatch(gap) is not None


_VALUE_END = r"\**[ \t]*(?:$|\n|[.,;:!)\]]|/|out\s+of\b)"


def verdict_pattern(label: str, value: str = NUMBER, *, words: Sequence[str] = ("is",)) -> re.Pattern[str]:
    """A compiled ``<label>: <value>`` pattern for :func:`final_verdict` (value in group ``v``).

    ``label`` and ``value`` are regular expressions; markdown emphasis and ``:`` or ``=`` may
    stand between them, or one of the separator ``words`` ("the matched score is 4") — then the
    value must end its clause ("the overlap is 2 key aims" is not a verdict).
    """
    colon = r"\**\s*[:：=]\s*\**\s*[\[(]?\s*"
    branches = [colon]
    if words:
        alternatives = "|".join(re.escape(w) for w in words)
        branches.append(rf"\**\s+(?:{alternatives})\s+\**(?=(?:{value}){_VALUE_END})")
    return re.compile(rf"(?<![\w])(?:{label})(?:{'|'.join(branches)})(?P<v>{value})", re.IGNORECASE)


def final_verdict(
    text: str,
    patterns: re.Pattern[str] | Sequence[re.Pattern[str]],
    convert: Callable[[str], T],
    *,
    out_of: float | None = None,
    what: str = "verdict",
) -> T:
    """The final well-formed verdict matched by ``patterns`` (named group ``v``), converted.

    A match followed by an alternative or a range (``1 or 2``, ``0-5``, ``1 to 10``) is a
    restated answer format, not a verdict; ``x/out_of`` or ``x out of out_of`` is allowed after
    the value (any other denominator is not this scale). Of the remaining verdicts the last one
    counts; when an earlier verdict stands in the same final answer section (nothing but
    whitespace, markup, punctuation or "or"/"and" between them) and converts to a different
    value, the reply is ambiguous.

    Raises:
        NoVerdict: no well-formed verdict (a :class:`ParseError`).
        ParseError: two different verdicts in the final section; or
            whatever ``convert`` raises for the final one (an out-of-scale value is a failure,
            never a reason to look at an earlier verdict).
    """
    pats = [patterns] if isinstance(patterns, re.Pattern) else list(patterns)
    found: list[tuple[int, int, str]] = []
    for pat in pats:
        for m in pat.finditer(text):
            end = m.end("v")
            tail = _OUT_OF_TAIL.match(text, end)
            if tail is not None:
                if out_of is None or float(tail.group(1)) != out_of:
                    continue
                end = tail.end()
            elif _ALTERNATIVE.match(text, m.end("v")):
                continue
            found.append((m.start(), end, m.group("v")))
    if not found:
        raise NoVerdict(f"no well-formed {what} in the reply")
    found.sort()
    spans: list[tuple[int, int, str]] = []
    for start, end, value in found:  # overlapping matches of different patterns: keep the first
        if spans and start < spans[-1][1]:
            continue
        spans.append((start, end, value))
    final = convert(spans[-1][2])
    for (_, end, value), (start, _, _) in zip(reversed(spans[:-1]), reversed(spans[1:]), strict=True):
        if not _filler_only(text[end:start]):
            break
        try:
            other = convert(value)
        except (ParseError, ValueError):
            other = None
        if other != final:
            raise ParseError(f"the final answer gives two different {what}s ({value!r} and {spans[-1][2]!r})")
    return final


# ----------------------------------------------------------------------------- ratings

_SCALE_PHRASE = re.compile(
    r"(?:on\s+)?(?:a|the)?\s*(?:scale|range)\s*(?:of|from)?\s*\(?\s*\d+(?:\.\d+)?\s*(?:-|–|—|to)\s*\d+(?:\.\d+)?\)?",
    re.IGNORECASE,
)
_RATING_PATTERNS = (
    verdict_pattern(r"(?:overall\s+|overlap\s+|final\s+)?(?:rating|score|grade)|overlap|similarity",
                    words=("is", "of")),
    re.compile(rf"\b(?:give|giving|gives|assign|rate|rating)\s+(?:it|this|them|the\s+\w+)?\s*(?:a|an|as|at)?\s*"
               rf"\**(?P<v>{NUMBER})(?={_VALUE_END})", re.IGNORECASE),
    re.compile(rf"(?<![\w.])(?P<v>{NUMBER})(?=\s*(?:/|\bout\s+of\b)\s*\d)", re.IGNORECASE),
)


def parse_rating(text: str, low: float, high: float, *, integer: bool = True) -> float:
    """A single rating on the scale [low, high] from free text, read as its final verdict.

    Accepted forms: a labelled verdict (``Rating: 7``, ``the overlap is 2``, ``Score = 4``), a
    rating phrase (``I'd give this a 7``, ``rate it 6``), ``7/10`` or ``7 out of 10`` (the
    denominator must be ``high``), or a reply that is only the number. Scale descriptions such
    as "on a scale of 1-10" are not ratings. An unlabelled number elsewhere in the text ("the 2
    ideas differ") is never read as the rating.

    Raises:
        ParseError: no rating in an accepted form, two different ones in the final answer, or
            the final one off the scale or (``integer``) fractional.
    """
    masked = _SCALE_PHRASE.sub(lambda m: " " * len(m.group(0)), text)
    bare = re.fullmatch(rf"[\s*_#`\"'.]*(?P<v>{NUMBER})[\s*_#`\"'.]*", masked)
    if bare:
        return _in_range(float(bare.group("v")), low, high, integer)
    return final_verdict(
        masked, _RATING_PATTERNS, lambda v: _in_range(float(v), low, high, integer), out_of=high,
        what="rating",
    )


# ----------------------------------------------------------------------------- rankings

_LETTER = r"(?<![A-Za-z0-9])[A-Z](?![A-Za-z0-9])"
_PREFIX = r"(?i:idea|hypothesis|option|candidate)[ \t]+"
_TOKEN = rf"(?:\*\*|__|`)?(?:{_PREFIX})?[(\[]?{_LETTER}[)\]]?(?:\*\*|__|`)?"
_TOKEN_RE = re.compile(rf"(?:{_PREFIX})?[(\[]?(?P<L>{_LETTER})")
_RANKING_KEYS = ("ranking", "rank", "order", "ranked_ideas", "ranked")
_LABELLED_CHAIN = re.compile(
    rf"^[ \t>*#-]*(?:\*\*)?[ \t]*(?i:(?:final|overall|my)[ \t]+)?(?i:ranking|ranked[ \t]+order|order)"
    rf"[^:\n]{{0,40}}?[:：][ \t]*(?:\*\*)?[ \t]*"
    rf"(?P<body>{_TOKEN}(?:[ \t]*(?:,|;|>|≻)[ \t]*(?i:and[ \t]+)?{_TOKEN})+)",
    re.MULTILINE,
)
_GT_CHAIN = re.compile(rf"{_TOKEN}(?:[ \t]*(?:>>?|≻)[ \t]*{_TOKEN})+")
_COMMA_LINE = re.compile(rf"^[ \t>*#-]*(?P<body>{_TOKEN}(?:[ \t]*,[ \t]*{_TOKEN})+)[ \t.]*$", re.MULTILINE)
_NUMBERED = re.compile(
    rf"^[ \t>*#-]*(?:\*\*)?[ \t]*(?i:rank[ \t]*)?(?P<n>\d+)[ \t]*[.):\]][ \t]*(?:\*\*)?[ \t]*"
    rf"(?:(?:{_PREFIX})[(\[]?(?P<a>{_LETTER})"  # "Idea C ..." or a bare "C" followed by punctuation
    rf"|[(\[]?(?P<b>{_LETTER})[)\]]?(?=(?:\*\*)?[ \t]*(?:$|[:.\-–—)]|\*\*)))",
    re.MULTILINE,
)

Chain = tuple[int, int, list[str]]


def _label_of(item: object) -> str:
    text = str(item).strip()
    match = re.fullmatch(r"(?:idea|hypothesis|option|candidate)?\s*\(?([A-Za-z])\)?[.:]?", text, re.I)
    if match:
        return match.group(1).upper()
    return text.upper()


def _json_rankings(text: str) -> list[list[str]]:
    found = []
    for value in json_values(text):
        if isinstance(value, dict):
            value = next((v for k, v in value.items() if str(k).lower().strip() in _RANKING_KEYS), None)
        if isinstance(value, list) and value and all(isinstance(v, str | int) for v in value):
            found.append([_label_of(v) for v in value])
    return found


def _letters(body: str) -> list[str]:
    return [m.group("L") for m in _TOKEN_RE.finditer(body)]


def _numbered_chains(text: str) -> list[Chain]:
    chains: list[Chain] = []
    run: list[tuple[int, int, str]] = []
    for m in _NUMBERED.finditer(text):
        n, letter = int(m.group("n")), m.group("a") or m.group("b")
        if run and n == len(run) + 1:
            run.append((m.start(), m.end(), letter))
            continue
        if len(run) > 1:
            chains.append((run[0][0], run[-1][1], [x[2] for x in run]))
        run = [(m.start(), m.end(), letter)] if n == 1 else []
    if len(run) > 1:
        chains.append((run[0][0], run[-1][1], [x[2] for x in run]))
    return chains


def _ranking_problem(ranking: Sequence[str], expected: Sequence[str]) -> str | None:
    unknown = [r for r in ranking if r not in expected]
    if unknown:
        return f"ranking names unknown idea(s) {unknown}"
    if len(set(ranking)) != len(ranking):
        return "ranking repeats an idea"
    missing = [label for label in expected if label not in ranking]
    if missing:
        return f"ranking omits idea(s) {missing}"
    return None


def _final_chain(text: str, chains: list[Chain]) -> list[str]:
    chains = sorted(chains)
    final = chains[-1]
    for earlier, later in zip(reversed(chains[:-1]), reversed(chains[1:]), strict=True):
        if not _filler_only(text[earlier[1] : later[0]]):
            break
        if earlier[2] != final[2]:
            raise ParseError(f"the final answer gives two different rankings {earlier[2]} and {final[2]}")
    return final[2]


def read_ranking(text: str, labels: Sequence[str]) -> list[str]:
    """The ranking of ``labels`` (single capital letters) written in ``text``, best first.

    Forms, in order of precedence: (1) JSON, ``{"ranking": ["C", "A", "B"]}`` or a bare list of
    labels; (2) a labelled line, ``Ranking: C > A > B`` or ``Final ranking: C, A, B``; (3) an
    unlabelled chain ``C > A > B`` or a line holding only ``C, A, B``; (4) a numbered list
    whose items start with the label (``1. Idea C: ...``). Labels may carry "Idea"/"Hypothesis"
    and markdown. A JSON or labelled ranking that is not a permutation of ``labels`` is a parse
    failure (no fallback to other forms); unlabelled chains and numbered lists count only when
    complete. Within a form the final ranking counts; two different rankings in the final
    answer section are ambiguous. The order in which commentary mentions labels is never read.

    Raises:
        ParseError: no complete ranking, a JSON/labelled ranking that repeats, omits or invents a
            label, or two different final rankings.
    """
    expected = [label.upper() for label in labels]
    json_found = _json_rankings(text)
    if json_found:
        problem = _ranking_problem(json_found[-1], expected)
        if problem:
            raise ParseError(problem)
        return json_found[-1]
    labelled = [(m.start(), m.end("body"), _letters(m.group("body"))) for m in _LABELLED_CHAIN.finditer(text)]
    if labelled:
        final = _final_chain(text, labelled)
        problem = _ranking_problem(final, expected)
        if problem:
            raise ParseError(problem)
        return final
    loose = [(m.start(), m.end(), _letters(m.group(0))) for m in _GT_CHAIN.finditer(text)]
    loose += [(m.start("body"), m.end("body"), _letters(m.group("body"))) for m in _COMMA_LINE.finditer(text)]
    for chains in (loose, _numbered_chains(text)):
        complete = [c for c in chains if _ranking_problem(c[2], expected) is None]
        if complete:
            return _final_chain(text, complete)
    raise ParseError("no complete ranking of " + ", ".join(expected) + " found in the reply")


# ----------------------------------------------------------------------------- generated text

_REFUSAL = re.compile(
    r"^\W*(?:i'?m\s+sorry|i\s+am\s+sorry|sorry\b|i\s+apologi[sz]e|as\s+an\s+ai\b|unfortunately,?\s+i\b"
    r"|i\s+(?:cannot|can\s?not|can'?t|won'?t|am\s+unable|'?m\s+unable|am\s+not\s+able|do\s+not\s+know"
    r"|don'?t\s+know|do\s+not\s+have|don'?t\s+have)\b)",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:it\s+depends|hard\s+to\s+say|difficult\s+to\s+say|cannot\s+be\s+determined|no\s+clear\s+answer"
    r"|both\s+are\s+(?:interesting|good|valid|fine))\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[\W_]*[^\W\d_]{2,}(?:[-'’][^\W\d_]+)*[\W_]*")
_INVISIBLE = re.compile(r"[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                        r"\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]")
HEDGE_MAX_WORDS = 30
"""A reply this short that hedges ("it depends", "both are interesting") is not an idea."""


def check_text(
    text: str, what: str, *, min_words: int = 8, max_words: int = 1500, min_word_share: float = 0.5
) -> str:
    """``text`` if it is real prose for a generated artefact (idea, hypothesis, plan), else raise.

    The structural check every generated idea-like text must pass (the step's own parser adds
    the label or fields its prompt demands): invisible characters are removed and the text
    stripped; it must then hold at least ``min_words`` words and at most ``max_words``; at least
    ``min_word_share`` of its whitespace-separated tokens must be words (letters, optionally
    with punctuation around them — so formulas and numbers are allowed, random characters
    are not); and it must not be a refusal ("I'm sorry, I cannot ...") or, when short, a hedge
    ("it depends").

    Returns:
        The cleaned text (invisible characters removed, outer whitespace stripped).

    Raises:
        ParseError: empty, whitespace/punctuation only, too short or too long, mostly non-words,
            a refusal or a hedge; the message names ``what``.
    """
    cleaned = _INVISIBLE.sub("", text).strip()
    tokens = cleaned.split()
    words = [t for t in tokens if _WORD.fullmatch(t)]
    if not words:
        raise ParseError(f"{what} is empty or holds no words ({len(cleaned)} characters)")
    if len(words) < min_words:
        raise ParseError(f"{what} is too short ({len(words)} words, at least {min_words})")
    if len(tokens) > max_words:
        raise ParseError(f"{what} is too long ({len(tokens)} words, at most {max_words})")
    if len(words) < min_word_share * len(tokens):
        raise ParseError(f"{what} is not prose ({len(words)} of {len(tokens)} tokens are words)")
    if _REFUSAL.match(cleaned):
        raise ParseError(f"{what} is a refusal: {cleaned[:60]!r}")
    if len(tokens) <= HEDGE_MAX_WORDS and _HEDGE.search(cleaned):
        raise ParseError(f"{what} is a hedge, not an answer: {cleaned[:60]!r}")
    return cleaned
