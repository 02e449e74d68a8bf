"""A scripted answer to the reference-rewrite prompt, for benchmark logic tests.

It does what a well-behaved judge does with ``prompts/reference_rewrite.j2``: every field asked
for, within its word bounds, the reference's content words without numbers, self-references or a
reference-style opening.
"""

from __future__ import annotations

import json
import re

REWRITE_MARKER = "Rewrite the "
_FIELD = re.compile(r'^- "(\w+)" \((\d+) to (\d+) words(?:, about (\d+))?\)', re.MULTILINE)
_DROP = {"hypothesis", "hypotheses", "paper", "study", "work", "research", "article", "report", "authors",
         "herein", "main", "central"}


def is_rewrite(user: str) -> bool:
    return user.startswith(REWRITE_MARKER) and "<reference>" in user


def reference_of(user: str) -> str:
    return user.split("<reference>\n", 1)[1].split("\n</reference>", 1)[0]


def scripted_rewrite(user: str) -> str:
    """JSON with each field of the prompt: as many clean words from the reference as the typical
    length asked for (else the middle of the bounds)."""
    found = re.findall(r"[A-Za-z][A-Za-z-]+", reference_of(user))
    words = [w.lower() for w in found if w.lower() not in _DROP]
    words = words or ["idea"]
    out = {}
    for name, lo, hi, about in _FIELD.findall(user):
        n = int(about) if about else (int(lo) + int(hi)) // 2
        body = (["we", "would", "test", "whether"] + words * (n // max(1, len(words)) + 1))[:n]
        out[name] = " ".join(body)
    return json.dumps(out)
