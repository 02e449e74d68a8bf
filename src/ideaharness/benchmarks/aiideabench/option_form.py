"""IMCQ options in one form: the same layout, the same line structure, the same length in words.

Why: decomposing the distractor papers by the ground truth's own step (:mod:`.imcq`) gives every
option the same *kind* of text, but not the same *form*. The ground truth is decomposed from the
target's question, background and hypothesis, a distractor from a title and an abstract, so the
ground truth's motivation is longer and its plan has more steps. On the bundled TOMATO-Chem data a
judge that ignores the question and picks the option with the most lines scored IMCQ motivation
0.824 over 51 instances, the longest option 0.676, the shortest plan 0.676, against 0.25 for any
judge that cannot tell the options apart (issue 18, item 11). Length, line count, list markers,
markdown and the ending of the text are all such cues, so every one of them is normalised here, for
all four options of a question alike (the ground truth included):

1. *Units.* A plan is split into steps, one per non-empty line; a motivation is one paragraph (its
   line breaks become spaces). List markers (``-``, ``*``, ``•``, ``1.``, ``(a)``, ``Step 3:``),
   markdown emphasis, headings and code marks, and a leading step label (``Synthesis: ...``: the
   words before the first colon when they are at most :data:`LABEL_MAX_WORDS` and the rest of the
   line has at least :data:`MIN_REST_WORDS`) are removed; whitespace is collapsed. A capitalised
   word inside a sentence (a heading run into the text, a title-cased term: an upper-case letter
   then 3 or more lower-case ones, after a lower-case word) is lower-cased; acronyms, formulas and
   element symbols keep their case.
2. *Line structure.* Every plan keeps its first K steps, K = the fewest steps of the four options
   (the blind decomposition check guarantees K >= 2).
3. *Length.* Unit k (step k of a plan; the motivation) of every option is cut, at a word boundary,
   to the length in characters closest to c_k, c_k = the shortest unit k of the four options
   (:func:`cut_to_length`). So every line of every option is as long as the others to within half
   a word, and the shortest option is not told apart by being uncut.
4. *Layout.* Each unit loses its trailing punctuation and is rendered with a capital first letter
   and one final full stop; plan steps as ``Step k: <text>``, one per line.

What is left to tell the options apart is the words themselves: their content, and with it their
vocabulary (a target's own hypothesis names its materials in longer words than an inspiration
paper's abstract, so at equal characters it has fewer words: the word count is not matched). The
options as decomposed stay in the question record for audit (``as_decomposed``). ``parity`` shows
the published texts unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

LABEL_MAX_WORDS = 6
"""A plan line's words before its first colon count as a step label up to this many words ..."""
MIN_REST_WORDS = 3
"""... when at least this many words follow the colon (otherwise the label is the step)."""

_MARKER = re.compile(
    r"^\s*(?:(?:[-*•·+>▪◦‣–—]+|#+)\s*|\(?(?:\d{1,3}|[a-zA-Z]|[ivxIVX]{1,4})[.):]\s+|"
    r"(?:step|phase|stage)\s*\d{1,3}\s*[:.)–—-]?\s*)+",
    re.IGNORECASE,
)
_MARKDOWN = re.compile(r"\*\*|__|`+|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")
_TRAILING = re.compile(r"[\s.,;:!?…–—-]+$")
_LABEL = re.compile(r"^([^:]{1,80}):\s+(.*)$")


_TITLE_CASE = re.compile(r"(?<=[a-z0-9,;:)] )([A-Z])([a-z]{3,})\b")


def _clean(text: str) -> str:
    text = " ".join(_MARKDOWN.sub("", text).split())
    return _TITLE_CASE.sub(lambda m: m.group(1).lower() + m.group(2), text)


def _strip_label(line: str) -> str:
    match = _LABEL.match(line)
    if (match and len(match.group(1).split()) <= LABEL_MAX_WORDS
            and len(match.group(2).split()) >= MIN_REST_WORDS):
        return match.group(2)
    return line


def plan_steps(text: str) -> list[str]:
    """The steps of a plan: one per non-empty line, markers, markdown and step labels removed.

    Returns:
        The steps' texts in order (whitespace collapsed; empty lines dropped).
    """
    steps = []
    for line in text.splitlines():
        line = _clean(_MARKER.sub("", _clean(line)))
        if line:
            steps.append(_clean(_MARKER.sub("", _strip_label(line))))
    return [s for s in steps if s]


def paragraph(text: str) -> str:
    """A motivation as one paragraph: line breaks and markers gone, whitespace collapsed."""
    return " ".join(p for p in (_clean(_MARKER.sub("", _clean(line))) for line in text.splitlines()) if p)


def cut_to_length(words: Sequence[str], chars: int) -> list[str]:
    """The prefix of ``words`` whose length in characters (joined by single spaces) is closest to
    ``chars``; on a tie the shorter one; at least one word.

    Returns:
        The kept words (all of them when the text is not longer than ``chars``).
    """
    best_gap, best_n, length = abs(len(words[0]) - chars), 1, 0
    for n, word in enumerate(words, 1):
        length += len(word) + (n > 1)
        if abs(length - chars) < best_gap:
            best_gap, best_n = abs(length - chars), n
        if length > chars:
            break
    return list(words[:best_n])


def _unit(words: Sequence[str]) -> str:
    text = _TRAILING.sub("", " ".join(words))
    return (text[:1].upper() + text[1:] + ".") if text else ""


def uniform_options(component: str, texts: Sequence[str]) -> list[str]:
    """The options of one IMCQ question in one form (rules 1-4 of the module docstring).

    Args:
        component: ``"motivation"`` (one paragraph) or ``"experiment_plan"`` (steps, one per line).
        texts: the options' texts, any order (the ground truth among them).

    Returns:
        The normalised texts, in the order given: the same number of lines for every option, and
        each line as long in characters as the same line of the others, to within half a word.

    Raises:
        ValueError: an unknown component, fewer than 2 texts, or a text with no words (a plan with
            no step).
    """
    if component not in ("motivation", "experiment_plan"):
        raise ValueError(f"unknown IMCQ component {component!r}")
    if len(texts) < 2:
        raise ValueError("an IMCQ question needs at least 2 options")
    if component == "motivation":
        words = [_TRAILING.sub("", paragraph(t)).split() for t in texts]
        if not all(words):
            raise ValueError("an IMCQ option has no words")
        budget = min(len(" ".join(w)) for w in words)
        return [_unit(cut_to_length(w, budget)) for w in words]
    steps = [[_TRAILING.sub("", s).split() for s in plan_steps(t)] for t in texts]
    if not all(steps) or not all(all(step) for s in steps for step in s):
        raise ValueError("an IMCQ plan option has no step")
    k = min(len(s) for s in steps)
    budgets = [min(len(" ".join(s[i])) for s in steps) for i in range(k)]
    return ["\n".join(f"Step {i + 1}: {_unit(cut_to_length(s[i], b))}" for i, b in enumerate(budgets))
            for s in steps]
