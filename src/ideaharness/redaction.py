"""Secrets never leave the process: redaction of every error text before it is stored or shown.

A server may echo the key it received in an error message ("invalid key sk-..."), and that text
would otherwise reach ``results.json``, ``report.html``, the console or a record. Every error text
that leaves the LLM layer, the scholarly clients or the CLI goes through :func:`redact`, which
replaces

* every known secret value: the keys and passwords in the environment (:data:`SECRET_ENV_VARS`)
  plus the values a component holds itself (an ``api_key=`` argument, a login password),
* every run of :data:`MIN_FRAGMENT_CHARS` (8) or more consecutive characters of a known secret,
  wherever it stands: a server that quotes back "...the key ending in 5f3a9c0d1e2b7a4c6d8e" leaks
  a fragment, not the whole value (:func:`remove_fragments`), and
* key-like tokens even when their value is unknown: ``sk-…`` API keys, ``Bearer …`` tokens,
  ``api_key=…``/``password=…`` pairs.

Fragments are found in one pass over the text: every 8-character window of every known secret is
indexed in a set, the text is probed with its 4-character windows at every 5th position (a run of
8 or more secret characters always holds one such probe) and each hit is grown to the maximal span
of consecutive matching 8-character windows, which is replaced by ``[REDACTED]``. Runs shorter than
8 characters are left alone (they occur in ordinary text by chance: 4 hex digits, a word).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

SECRET_ENV_VARS: tuple[str, ...] = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "S2_API_KEY",
    "OPENALEX_API_KEY",
    "OPENREVIEW_PASSWORD",
    "OPENREVIEW_TOKEN",
    "HF_TOKEN",
)
"""Environment variables whose values are secrets wherever they appear."""

REDACTED = "[REDACTED]"
MIN_SECRET_CHARS = 6
"""Shorter values are not replaced verbatim (a 2-character "key" would blank ordinary words)."""

MIN_FRAGMENT_CHARS = 8
"""A run of this many consecutive characters of a known secret is removed wherever it appears."""

_PROBE_CHARS = 4
_PROBE_STRIDE = MIN_FRAGMENT_CHARS - _PROBE_CHARS + 1  # a run of 8 holds a probe window at a multiple of 5

_TOKEN_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), "sk-" + REDACTED),
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9_\-.=~+/]{8,}"), r"\1 " + REDACTED),
    (re.compile(r"(?i)\b(api[_-]?key|apikey|x-api-key|password|passwd|secret|token)(\s*[=:]\s*)"
                r"(['\"]?)[^\s'\",;&]{4,}"), r"\1\2\3" + REDACTED),
)


def known_secrets(extra: Iterable[str | None] = ()) -> list[str]:
    """Secret values to remove: the environment's (:data:`SECRET_ENV_VARS`) plus ``extra``.

    Values shorter than :data:`MIN_SECRET_CHARS` are left out. Longest first, so a key that
    contains another is replaced whole.
    """
    values = [os.environ.get(name) for name in SECRET_ENV_VARS] + list(extra)
    unique = {v for v in values if v and len(v) >= MIN_SECRET_CHARS}
    return sorted(unique, key=len, reverse=True)


@functools.lru_cache(maxsize=32)
def _fragment_index(secrets: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """(every 8-character window, every 4-character window) of the secrets of 8 or more characters."""
    long = [s for s in secrets if len(s) >= MIN_FRAGMENT_CHARS]
    w = MIN_FRAGMENT_CHARS
    windows = frozenset(s[i:i + w] for s in long for i in range(len(s) - w + 1))
    probes = frozenset(s[i:i + _PROBE_CHARS] for s in long for i in range(len(s) - _PROBE_CHARS + 1))
    return windows, probes


def remove_fragments(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every run of :data:`MIN_FRAGMENT_CHARS` or more consecutive characters of one of
    ``secrets`` replaced by ``[REDACTED]`` (one marker per maximal run; see the module docstring).

    O(len(text)) set look-ups (a probe every 5th character) plus the length of each run found; the
    index of the secrets' windows is built once per set of secrets.

    Args:
        text: any text.
        secrets: the values whose fragments must go (those under 8 characters have none).

    Returns:
        The text with the runs replaced; unchanged when it holds none.
    """
    windows, probes = _fragment_index(tuple(sorted(set(secrets))))
    w = MIN_FRAGMENT_CHARS
    n = len(text)
    if not windows or n < w:
        return text
    spans: list[list[int]] = []  # character spans [start, end) of the chains of matching windows
    chain = (-1, -2)  # window starts [first, last] of the last chain found (each grown only once)
    for p in range(0, n - _PROBE_CHARS + 1, _PROBE_STRIDE):
        if text[p:p + _PROBE_CHARS] not in probes:
            continue
        for start in range(max(p + _PROBE_CHARS - w, 0), min(p, n - w) + 1):
            if chain[0] <= start <= chain[1] or text[start:start + w] not in windows:
                continue
            first, last = start, start
            while first > 0 and text[first - 1:first - 1 + w] in windows:
                first -= 1
            while last + w < n and text[last + 1:last + 1 + w] in windows:
                last += 1
            chain = (first, last)
            if spans and first < spans[-1][1]:  # overlaps the previous span: one marker for both
                spans[-1][1] = max(spans[-1][1], last + w)
            else:
                spans.append([first, last + w])
    if not spans:
        return text
    parts, done = [], 0
    for first, end in spans:
        parts += [text[done:first], REDACTED]
        done = end
    parts.append(text[done:])
    return "".join(parts)


def redact(text: object, secrets: Iterable[str | None] = ()) -> str:
    """``text`` as a string with every secret value, every run of 8 or more characters of one
    (:func:`remove_fragments`) and every key-like token replaced by ``[REDACTED]``.

    Args:
        text: any object; it is turned into a string first.
        secrets: values known to the caller (its own key, a password) besides the environment's.

    Returns:
        The redacted string (unchanged when it holds no secret).
    """
    out = str(text)
    values = known_secrets(secrets)
    for value in values:
        out = out.replace(value, REDACTED)
    out = remove_fragments(out, values)
    for pattern, replacement in _TOKEN_PATTERNS:
        out = pattern.sub(replacement, out)
    return out


def redact_values(value: Any, secrets: Iterable[str | None] = ()) -> Any:
    """A copy of a JSON-like value (dicts, lists, strings) with every string passed through
    :func:`redact` for the known secret values and their fragments of 8 or more characters only
    (no token patterns: model text that merely mentions "token: abc" is data, not a leak). For
    results and reports just before writing."""
    values = known_secrets(secrets)
    if not values:
        return value

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            for secret in values:
                item = item.replace(secret, REDACTED)
            return remove_fragments(item, values)
        if isinstance(item, Mapping):
            return {k: walk(v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [walk(v) for v in item]
        return item

    return walk(value)
