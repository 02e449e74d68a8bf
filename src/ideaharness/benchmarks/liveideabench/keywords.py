"""The LiveIdeaBench keywords: the bundled 1,180-keyword list (22 categories) and selection."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from importlib import resources

from ideaharness.errors import UserError

KEYWORDS_FILE = "data/keywords.csv"
"""Path of the bundled list inside this benchmark's package (``csvs/keyword_classifications.csv``
@ 560ececc, MIT; see ``data/SOURCE.md`` beside it)."""


@dataclass(frozen=True)
class Keyword:
    """One instance of the benchmark: a keyword (``id`` = the keyword text) and its upstream
    category (None for a keyword not in the bundled list)."""

    id: str
    category: str | None = None


def bundled_keywords() -> list[Keyword]:
    """The 1,180 bundled keywords in source order.

    Raises:
        UserError: the bundled file is missing a field (names the row).
    """
    text = resources.files(__package__).joinpath(KEYWORDS_FILE).read_text(encoding="utf-8")
    out = []
    for line, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        keyword, category = (row.get("keyword") or "").strip(), (row.get("category") or "").strip()
        if not keyword:
            raise UserError(f"{KEYWORDS_FILE}, line {line}: empty field 'keyword'")
        out.append(Keyword(keyword, category or None))
    return out


def select_keywords(keywords: list[str], categories: list[str]) -> list[Keyword]:
    """The keywords of a run: ``keywords`` in the order given (a keyword outside the bundled list
    is kept, with no category), else the bundled list, filtered to ``categories`` when given.
    ``--keyword`` and ``--category`` together: every keyword named must be a bundled keyword of
    one of those categories (the flags never intersect to an empty or silently smaller run).

    Raises:
        UserError: an unknown category (the message lists the known ones), a keyword given with
            ``--category`` that is not in those categories (names the keyword and its category),
            or a category filter that leaves nothing.
    """
    bundled = bundled_keywords()
    known = {k.id: k for k in bundled}
    chosen = [known.get(k.strip(), Keyword(k.strip())) for k in dict.fromkeys(keywords) if k.strip()] \
        if keywords else bundled
    if categories:
        names = {k.category for k in bundled if k.category}
        unknown = [c for c in categories if c not in names]
        if unknown:
            raise UserError(f"--category {unknown[0]!r}: not a LiveIdeaBench category; choose from "
                            f"{', '.join(sorted(names))}")
        if keywords:
            outside = next((k for k in chosen if k.category not in categories), None)
            if outside is not None:
                where = f"in category {outside.category!r}" if outside.category else "not a bundled keyword"
                raise UserError(
                    f"--keyword {outside.id!r} is {where}, not in --category {', '.join(categories)}; "
                    "give --keyword alone, or drop it")
        chosen = [k for k in chosen if k.category in categories]
        if not chosen:
            raise UserError(f"--category {', '.join(categories)}: no bundled keywords")
    return chosen
