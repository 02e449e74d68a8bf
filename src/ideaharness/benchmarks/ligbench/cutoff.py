"""LigBench under the knowledge cutoff: an idea is scored only against literature before its cutoff.

What the benchmark means: an idea's rating, contribution and soundness are Elo outcomes against
scored reference papers retrieved from the corpus, and its novelty blends the judge's score with
its similarity to the nearest papers (the corpus, or Semantic Scholar with ``--online``). An idea
written with a cutoff (a ScholarIdeas plan's ``cutoff.txt``, or ``--cutoff`` for every idea) cannot
be novel or weak relative to work published after it, so every corpus paper dated after the
idea's cutoff (PAIR-IQ records carry the conference year) is excluded from retrieval, calibration,
opponents and the novelty neighbours, and the Semantic Scholar search sends the cutoff and filters
the results again. An idea left with fewer than ``n_calibration + 1`` corpus papers before its
cutoff is not scored (status :data:`TOO_FEW_STATUS`), never scored against later papers.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ideaharness.cutoff import COUNT_KEYS, DatedWork, LiteratureAccess, verdict, work_summary
from ideaharness.data.pairiq import PairIQRecord

CORPUS_SOURCE = "corpus"
"""The ledger source of corpus retrieval (calibration papers, Elo opponents, novelty neighbours)."""
SEARCH_SOURCE = "s2_search"
"""The ledger source of the ``--online`` Semantic Scholar novelty search."""
TOO_FEW_STATUS = "too_few_references_before_cutoff"
"""An idea's status when the corpus holds too few papers before its cutoff."""
MAX_LISTED = 100
"""Excluded corpus papers listed in a record (all are counted)."""

LITERATURE = LiteratureAccess(
    sources={CORPUS_SOURCE: "reference corpus retrieval: calibration papers and Elo opponents shown to the "
                            "judge, nearest papers of the novelty similarity",
             SEARCH_SOURCE: "Semantic Scholar search of the novelty similarity (--online)"},
    prompt_steps=("ligbench/initial_score", "ligbench/compare", "ligbench/rewrite"),
    note="corpus papers dated after an idea's cutoff (a ScholarIdeas plan's cutoff.txt, or --cutoff) are "
         "never retrieved, shown to the judge or used for novelty; the online search ends at the cutoff")


def as_date(value: Any) -> dt.date | None:
    """An idea's cutoff as a date (an ISO string, a date, or None).

    Raises:
        ValueError: a string that is not an ISO date.
    """
    if value is None or isinstance(value, dt.date):
        return value
    return dt.date.fromisoformat(str(value))


def dated(record: PairIQRecord) -> DatedWork:
    """A corpus record with the dates :func:`~ideaharness.cutoff.verdict` reads (its year only)."""
    return DatedWork(id=record.id, title=record.title, publication_date=None, year=record.year)


def after_cutoff(records: list[PairIQRecord], cutoff: dt.date | None) -> list[str]:
    """Ids of the corpus records dated after ``cutoff`` (none when it is None)."""
    if cutoff is None:
        return []
    return [r.id for r in records if verdict(dated(r), cutoff) == "after"]


def corpus_record(records: list[PairIQRecord], cutoff: dt.date | None, used: list[str]) -> dict[str, Any]:
    """The ``cutoff`` record of one idea's corpus access: the papers retrieved (``kept_works``) and
    those the cutoff excluded (counted; the first :data:`MAX_LISTED` listed)."""
    by_id = {r.id: r for r in records}
    excluded = set(after_cutoff(records, cutoff))
    verdicts = [verdict(dated(r), cutoff) for r in records] if cutoff else ["before"] * len(records)
    row = dict.fromkeys(COUNT_KEYS, 0)
    row["kept"] = len(records) - len(excluded)
    row["excluded"] = len(excluded)
    row["undated"] = sum(1 for v in verdicts if v == "undated")
    listed = sorted(excluded)[:MAX_LISTED]
    return {"source": CORPUS_SOURCE, "cutoff": cutoff.isoformat() if cutoff else None,
            "window": [None, cutoff.isoformat() if cutoff else None], **row,
            "kept_works": [work_summary(dated(by_id[i])) for i in used if i in by_id],
            "excluded_works": [work_summary(dated(by_id[i])) for i in listed],
            "excluded_listed": len(listed)}
