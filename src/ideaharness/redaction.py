"""Secrets never leave the process: redaction of every error text before it is stored or shown.

A server may echo the key it received in an error message ("invalid key sk-..."), and that text
would otherwise reach ``results.json``, ``report.html``, the console or a record. Every error text
that leaves the LLM layer, the scholarly clients or the CLI goes through :func:`redact`, which
replaces

* every known secret value: the keys and passwords in the environment (:data:`SECRET_ENV_VARS`)
  plus the values a component holds itself (an ``api_key=`` argument, a login password), and
* key-like tokens even when their value is unknown: ``sk-…`` API keys, ``Bearer …`` tokens,
  ``api_key=…``/``password=…`` pairs.
"""

from __future__ import annotations

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


def redact(text: object, secrets: Iterable[str | None] = ()) -> str:
    """``text`` as a string with every secret value and key-like token replaced by ``[REDACTED]``.

    Args:
        text: any object; it is turned into a string first.
        secrets: values known to the caller (its own key, a password) besides the environment's.

    Returns:
        The redacted string (unchanged when it holds no secret).
    """
    out = str(text)
    for value in known_secrets(secrets):
        out = out.replace(value, REDACTED)
    for pattern, replacement in _TOKEN_PATTERNS:
        out = pattern.sub(replacement, out)
    return out


def redact_values(value: Any, secrets: Iterable[str | None] = ()) -> Any:
    """A copy of a JSON-like value (dicts, lists, strings) with every string passed through
    :func:`redact` for the known secret values only (no token patterns: model text that merely
    mentions "token: abc" is data, not a leak). For results and reports just before writing."""
    values = known_secrets(secrets)
    if not values:
        return value

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            for secret in values:
                item = item.replace(secret, REDACTED)
            return item
        if isinstance(item, Mapping):
            return {k: walk(v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [walk(v) for v in item]
        return item

    return walk(value)
