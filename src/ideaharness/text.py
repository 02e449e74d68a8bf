"""Making decoded text safe to store: lone surrogates (half of a UTF-16 pair) replaced by U+FFFD.

A base module (imports only the standard library), used by the model layer (``llm/types.py``),
file writing (``fileio.py``) and the data readers (``textio.py`` re-exports it).
"""

from __future__ import annotations

import re

REPLACEMENT_CHARACTER = "\ufffd"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a code point in U+D800..U+DFFF (half of a UTF-16 pair, not a character).

    Python strings get one from a JSON escape such as ``"\\ud83d"`` without its partner; such a
    string cannot be encoded as UTF-8, so it cannot be hashed, cached, recorded or shown.
    """
    if text.isascii():  # the common case, checked in C without the regular expression
        return False
    try:
        text.encode("utf-8")  # fails exactly on a surrogate code point
    except UnicodeEncodeError:
        return True
    return False


def replace_lone_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (what a UTF-8 decoder shows for it);
    ``text`` itself when it holds none."""
    if not has_lone_surrogate(text):
        return text
    return _LONE_SURROGATE.sub(REPLACEMENT_CHARACTER, text)
