"""The knowledge cutoff: which works an instance may see, and a count of those it may not.

An instance's *knowledge cutoff* is the last date whose literature a generator, a retriever or a
novelty search may use (IdeaBench and AI Idea Bench restrict targets to papers after a model's
cutoff; ResearchBench calls itself contamination-resistant for the same reason). A work is
*after* the cutoff when it is provably dated later; a work whose only date is the cutoff's own
year cannot be placed and is *undated*. Every literature access of a run passes its works through
:func:`before_cutoff`, which drops the works after the cutoff and counts kept / excluded / undated
works per source in a :class:`CutoffLedger` that the run records (``results.json`` ``leakage``
block, docs/runs.md "Knowledge cutoff").

Dates compare as calendar days: ``publication_date <= cutoff`` is before (a paper published on
the cutoff day is visible). Only ``Paper.publication_date`` and ``Paper.year`` are read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeVar

CutoffVerdict = Literal["before", "after", "undated"]
"""Where one work lies relative to a cutoff (see :func:`verdict`)."""

UndatedPolicy = Literal["keep", "drop"]
"""What :func:`before_cutoff` does with an undated work (``keep``: counted as undated and kept)."""

COUNT_KEYS: tuple[str, ...] = ("kept", "excluded", "undated")
"""The keys of one source's counts in :meth:`CutoffLedger.as_dict` (``kept`` includes undated
works that were kept; ``undated`` counts them again so a reader sees how many could not be placed)."""


class Dated(Protocol):
    """Anything with a paper's two date fields (:class:`ideaharness.schema.Paper` and subclasses)."""

    @property
    def publication_date(self) -> dt.date | None: ...

    @property
    def year(self) -> int | None: ...


P = TypeVar("P", bound=Dated)


def verdict(paper: Dated, cutoff: dt.date) -> CutoffVerdict:
    """Where ``paper`` lies relative to ``cutoff``.

    Args:
        paper: a work with ``publication_date`` (a date or None) and ``year`` (an int or None).
        cutoff: the last visible day.

    Returns:
        ``"after"`` when ``publication_date > cutoff``, or (no date) ``year > cutoff.year``;
        ``"before"`` when ``publication_date <= cutoff``, or (no date) ``year < cutoff.year``;
        ``"undated"`` when neither is known, or only the year is known and it is the cutoff's year.
    """
    if paper.publication_date is not None:
        return "after" if paper.publication_date > cutoff else "before"
    if paper.year is None or paper.year == cutoff.year:
        return "undated"
    return "after" if paper.year > cutoff.year else "before"


def effective_cutoff(instance_cutoff: dt.date | None, run_cutoff: dt.date | None) -> dt.date | None:
    """The stricter (earlier) of an instance's own cutoff and the run's ``--cutoff``.

    Returns:
        The earlier of the two that are set; None when neither is.
    """
    dates = [d for d in (instance_cutoff, run_cutoff) if d is not None]
    return min(dates) if dates else None


def parse_cutoff(text: str, *, where: str = "--cutoff") -> dt.date:
    """Read a cutoff written ``YYYY-MM-DD``.

    Raises:
        ValueError: a message naming ``where`` and the expected format, when ``text`` is not an
            ISO calendar date.
    """
    try:
        return dt.date.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{where}: {text!r} is not a date (expected YYYY-MM-DD)") from None


@dataclass
class CutoffLedger:
    """Counts of works seen by each literature access of a run, per source.

    A *source* names one access: ``references`` (shown to a generator), ``inspirations``,
    ``s2_search``, ``openalex_search``, ``arxiv_search``, ``corpus``, ``pool`` and so on.
    """

    counts: dict[str, dict[str, int]] = field(default_factory=dict)

    def _row(self, source: str) -> dict[str, int]:
        return self.counts.setdefault(source, dict.fromkeys(COUNT_KEYS, 0))

    def record(self, source: str, verdicts: Iterable[CutoffVerdict], *,
               undated: UndatedPolicy = "keep") -> None:
        """Count one access's verdicts: ``after`` is excluded; ``undated`` is counted as undated and,
        under ``undated="keep"``, also as kept (else excluded); ``before`` is kept.

        An access with no works still creates the source's row (zeros), so a report shows it ran.
        """
        row = self._row(source)
        for v in verdicts:
            if v == "before":
                row["kept"] += 1
            elif v == "after":
                row["excluded"] += 1
            else:
                row["undated"] += 1
                row["kept" if undated == "keep" else "excluded"] += 1

    def excluded(self, source: str | None = None) -> int:
        """Works excluded from ``source`` (every source when None; 0 for a source never seen)."""
        if source is not None:
            return self.counts.get(source, {}).get("excluded", 0)
        return sum(row["excluded"] for row in self.counts.values())

    def as_dict(self) -> dict[str, dict[str, int]]:
        """``{source: {"kept": n, "excluded": n, "undated": n}}``, sources sorted (a copy)."""
        return {s: dict(self.counts[s]) for s in sorted(self.counts)}

    def merge(self, other: CutoffLedger | dict[str, dict[str, int]]) -> None:
        """Add another ledger's counts (or an :meth:`as_dict` read back from a file) to this one."""
        rows = other.counts if isinstance(other, CutoffLedger) else other
        for source, theirs in rows.items():
            row = self._row(source)
            for key in COUNT_KEYS:
                row[key] += int(theirs.get(key, 0))

    @classmethod
    def from_dict(cls, rows: dict[str, dict[str, int]]) -> CutoffLedger:
        """The ledger an :meth:`as_dict` describes."""
        ledger = cls()
        ledger.merge(rows)
        return ledger


def before_cutoff(papers: Sequence[P], cutoff: dt.date | None, *, source: str,
                  ledger: CutoffLedger | None = None, undated: UndatedPolicy = "keep") -> list[P]:
    """The works of ``papers`` not provably after ``cutoff``, in their order.

    Args:
        papers: works with ``publication_date`` / ``year``.
        cutoff: the last visible day; None keeps every work (and counts every one as kept).
        source: the ledger row these works are counted under.
        ledger: where the counts go (nothing is counted when None).
        undated: keep or drop works :func:`verdict` cannot place.

    Returns:
        A new list; the input is not changed.
    """
    if cutoff is None:
        verdicts: list[CutoffVerdict] = ["before"] * len(papers)
    else:
        verdicts = [verdict(p, cutoff) for p in papers]
    if ledger is not None:
        ledger.record(source, verdicts, undated=undated)
    drop = {"after"} if undated == "keep" else {"after", "undated"}
    return [p for p, v in zip(papers, verdicts, strict=True) if v not in drop]
