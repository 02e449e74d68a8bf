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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from ideaharness.schema import Instance, read_date

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
    """Read a cutoff written ``YYYY-MM-DD`` (:func:`ideaharness.schema.read_date`, the one date reader).

    Raises:
        ValueError: ``"<where>: '2024' is a year, not a date: expected YYYY-MM-DD (...)"``.
    """
    try:
        return read_date(text)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


@dataclass
class CutoffLedger:
    """Counts of works seen by each literature access of a run, per source, and the works it left out.

    A *source* names one access: ``references`` (shown to a generator), ``inspirations``,
    ``s2_search``, ``openalex_search``, ``arxiv_search``, ``corpus``, ``pool`` and so on.
    ``excluded_works``: source -> the excluded works (:func:`work_summary`), filled by
    :func:`before_cutoff` and :func:`within_window`.
    """

    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    excluded_works: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

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

    def note_excluded(self, source: str, works: Iterable[Any]) -> None:
        """Keep the excluded works of ``source`` (paper-like objects, as :func:`work_summary`)."""
        self.excluded_works.setdefault(source, []).extend(work_summary(w) for w in works)

    def excluded(self, source: str | None = None) -> int:
        """Works excluded from ``source`` (every source when None; 0 for a source never seen)."""
        if source is not None:
            return self.counts.get(source, {}).get("excluded", 0)
        return sum(row["excluded"] for row in self.counts.values())

    def as_dict(self) -> dict[str, dict[str, int]]:
        """``{source: {"kept": n, "excluded": n, "undated": n}}``, sources sorted (a copy)."""
        return {s: dict(self.counts[s]) for s in sorted(self.counts)}

    def merge(self, other: CutoffLedger | dict[str, dict[str, int]]) -> None:
        """Add another ledger's counts and excluded works (or an :meth:`as_dict` read back from a
        file: counts only) to this one."""
        rows = other.counts if isinstance(other, CutoffLedger) else other
        for source, theirs in rows.items():
            row = self._row(source)
            for key in COUNT_KEYS:
                row[key] += int(theirs.get(key, 0))
        if isinstance(other, CutoffLedger):
            for source, works in other.excluded_works.items():
                self.excluded_works.setdefault(source, []).extend(works)

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
    return _keep(papers, verdicts, source, ledger, undated)


def _keep(papers: Sequence[P], verdicts: Sequence[CutoffVerdict], source: str, ledger: CutoffLedger | None,
          undated: UndatedPolicy) -> list[P]:
    drop = {"after"} if undated == "keep" else {"after", "undated"}
    if ledger is not None:
        ledger.record(source, verdicts, undated=undated)
        ledger.note_excluded(source, [p for p, v in zip(papers, verdicts, strict=True) if v in drop])
    return [p for p, v in zip(papers, verdicts, strict=True) if v not in drop]


def within_window(papers: Sequence[P], start: dt.date | None, end: dt.date | None, *, source: str,
                  ledger: CutoffLedger | None = None, undated: UndatedPolicy = "keep") -> list[P]:
    """The works of ``papers`` not provably outside ``[start, end]`` (both days included).

    ``end`` alone is :func:`before_cutoff`; ``start`` adds the other side (a future window, e.g.
    HindSight's (T, T + horizon] is ``start = T + 1 day``). A work is outside when
    :func:`verdict` places it after ``end`` or on or before ``start - 1 day``; a work that cannot be
    placed against a bound is undated (kept or dropped by ``undated``).

    Returns:
        A new list, in input order; the counts go to ``ledger`` under ``source``.
    """
    return _keep(papers, [window_verdict(p, start, end) for p in papers], source, ledger, undated)


def window_verdict(paper: Dated, start: dt.date | None, end: dt.date | None) -> CutoffVerdict:
    """``"before"`` (inside the window), ``"after"`` (outside it, on either side) or ``"undated"``."""
    verdicts: list[CutoffVerdict] = []
    if end is not None:
        verdicts.append(verdict(paper, end))
    if start is not None:
        side = verdict(paper, start - dt.timedelta(days=1))  # "before" = on or before start - 1: outside
        flipped: dict[CutoffVerdict, CutoffVerdict] = {"after": "before", "before": "after",
                                                       "undated": "undated"}
        verdicts.append(flipped[side])
    if "after" in verdicts:
        return "after"
    return "undated" if "undated" in verdicts else "before"


# ----------------------------------------------------------------------------- what a run records

Work = dict[str, Any]
"""A work as an access record keeps it: ``{"id", "title", "publication_date" (ISO or None), "year"}``."""


def work_summary(paper: Any) -> Work:
    """The :data:`Work` of a paper-like object (``id``, ``title``, ``publication_date``, ``year``)."""
    date = getattr(paper, "publication_date", None)
    return {"id": str(getattr(paper, "id", "")), "title": str(getattr(paper, "title", "") or ""),
            "publication_date": date.isoformat() if isinstance(date, dt.date) else date,
            "year": getattr(paper, "year", None)}


@dataclass(frozen=True)
class DatedWork:
    """A :data:`Work` read back from a record, with the two date fields :func:`verdict` reads."""

    id: str
    title: str
    publication_date: dt.date | None
    year: int | None

    @classmethod
    def of(cls, work: Mapping[str, Any]) -> DatedWork:
        """Read a recorded work; an unreadable date or year counts as unknown."""
        raw, year = work.get("publication_date"), work.get("year")
        try:
            date = dt.date.fromisoformat(str(raw)) if raw else None
        except ValueError:
            date = None
        return cls(id=str(work.get("id", "")), title=str(work.get("title") or ""), publication_date=date,
                   year=year if isinstance(year, int) and not isinstance(year, bool) else None)


def filter_access(papers: Sequence[P], cutoff: dt.date | None, *, source: str,
                  start: dt.date | None = None, undated: UndatedPolicy = "keep",
                  ledger: CutoffLedger | None = None) -> tuple[list[P], dict[str, Any]]:
    """One literature access through the cutoff: the works kept, and the record the run keeps of it.

    Args:
        papers: the works the access returned or holds (search results, references, corpus hits).
        cutoff: the instance's effective cutoff (the window's end); None keeps every work.
        source: the ledger source (``references``, ``s2_search``, ``corpus``...).
        start: the first day of a future window (None: the access reads up to the cutoff only).
        undated: keep or drop works that cannot be placed.
        ledger: also counted here when given.

    Returns:
        ``(kept, record)``; ``record`` is ``{"source", "cutoff", "window", "kept", "excluded",
        "undated", "kept_works", "excluded_works"}`` (works as :func:`work_summary`), the data of a
        ``cutoff`` step record (:data:`CUTOFF_STEP`), which the leakage check reads.
    """
    own = CutoffLedger()
    kept = within_window(papers, start, cutoff, source=source, ledger=own, undated=undated)
    if ledger is not None:
        ledger.merge(own)
    return kept, access_record(own, source, kept, cutoff=cutoff, start=start)


def access_record(ledger: CutoffLedger, source: str, kept: Sequence[Any], *, cutoff: dt.date | None,
                  start: dt.date | None = None) -> dict[str, Any]:
    """The :data:`CUTOFF_STEP` record of one access: the ledger's counts and excluded works of
    ``source`` and the works ``kept`` (e.g. a scholarly client's results, already filtered again
    by the client into ``ledger``).

    Returns:
        ``{"source", "cutoff", "window": [start, end], "kept", "excluded", "undated",
        "kept_works", "excluded_works"}``; dates ISO, works as :func:`work_summary`.
    """
    row = ledger.as_dict().get(source) or dict.fromkeys(COUNT_KEYS, 0)
    return {"source": source, "cutoff": cutoff.isoformat() if cutoff else None,
            "window": [start.isoformat() if start else None, cutoff.isoformat() if cutoff else None],
            **row, "kept_works": [work_summary(p) for p in kept],
            "excluded_works": list(ledger.excluded_works.get(source, []))}


CUTOFF_STEP = "cutoff"
"""The step under which a run records each literature access (:func:`filter_access` records; key:
the source, ``<source>/<k>`` for repeated accesses of one instance)."""


@dataclass(frozen=True)
class LiteratureAccess:
    """How a benchmark's runs reach the literature, declared once per benchmark
    (``Benchmark.literature``) for the knowledge cutoff and the leakage check.

    Attributes:
        sources: ledger source -> what it is (e.g. ``{"references": "reference abstracts shown to
            the generator"}``); empty: the benchmark makes no literature access.
        prompt_steps: recorded steps (or prefixes ending in ``/``) whose prompts show literature
            the cutoff governs (a generator's inputs, retrieved works shown to a judge); the leakage
            check looks in these prompts for works dated after the instance's cutoff.
        future_sources: sources that read the window after the cutoff by design (AI Idea Bench's
            contemporary papers of NA, HindSight's matched future papers): their works are not
            leaks in a search, but must still never reach a prompt of ``prompt_steps``.
        references_source: the source under which the runner filters ``Instance.references``
            before the run (None: the benchmark's items carry no references it shows).
        note: how the cutoff applies here, in one or two sentences (shown in the leakage block).
    """

    sources: Mapping[str, str] = field(default_factory=dict)
    prompt_steps: tuple[str, ...] = ()
    future_sources: tuple[str, ...] = ()
    references_source: str | None = None
    note: str = ""

    @property
    def has_access(self) -> bool:
        """Whether the benchmark makes any literature access."""
        return bool(self.sources)

    def shows(self, step: str) -> bool:
        """Whether recorded prompts of ``step`` are checked (a listed step or under a listed prefix)."""
        return any(step == s or (s.endswith("/") and step.startswith(s)) for s in self.prompt_steps)


NO_LITERATURE = LiteratureAccess(note="no literature access declared")
"""The default of a benchmark that declares nothing (the leakage block says so)."""


CutoffEntry = tuple[str, str, dict[str, Any]]
"""``(instance id, record key, record data)`` of one access done before the run (the runner writes
it as a :data:`CUTOFF_STEP` record)."""


def apply_to_instances(instances: Sequence[Instance], run_cutoff: dt.date | None,
                       source: str | None) -> tuple[list[Instance], list[CutoffEntry]]:
    """Each instance with its effective cutoff (:func:`effective_cutoff` of its own and the run's)
    and, when ``source`` is given, only the references not after it.

    Returns:
        ``(instances, entries)``: copies (the inputs are not changed); per instance a
        :func:`data_record` (key :data:`DATA_KEY`: every dated work of its data, whatever is
        filtered) and, with ``source``, the :func:`filter_access` record of its references (with
        ``"target"``: the target paper as a :data:`Work`).
    """
    out: list[Instance] = []
    entries: list[CutoffEntry] = []
    for inst in instances:
        cutoff = effective_cutoff(inst.knowledge_cutoff, run_cutoff)
        entries.append((inst.id, DATA_KEY, data_record(cutoff, [*inst.references, inst.target])))
        if source is None:
            out.append(inst.model_copy(update={"knowledge_cutoff": cutoff}))
            continue
        kept, record = filter_access(inst.references, cutoff, source=source)
        record["target"] = work_summary(inst.target)
        out.append(inst.model_copy(update={"knowledge_cutoff": cutoff, "references": kept}))
        entries.append((inst.id, source, record))
    return out, entries


DATA_KEY = "data"
"""The key of an item's :func:`data_record` under :data:`CUTOFF_STEP`."""


def data_record(cutoff: dt.date | None, works: Iterable[Any]) -> dict[str, Any]:
    """What an item's own data holds, independent of any filter: its effective cutoff and every work
    it carries (references, target...), as :data:`Work` s. The leakage check looks in the run's
    prompts for those dated after the cutoff; it is not an access (nothing is counted)."""
    return {"data": True, "cutoff": cutoff.isoformat() if cutoff else None,
            "works": [work_summary(w) for w in works]}
