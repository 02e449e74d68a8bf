"""ResearchBench under the knowledge cutoff: no candidate pool holds a work dated after the
instance's cutoff.

What the benchmark means: the model answers a research question from before the target paper by
finding its inspirations in a pool. Its literature accesses are the pool (the gold inspirations and
the negatives it screens) and the inspirations shown when composing a hypothesis.

* gold inspirations dated after the cutoff are removed by the runner before the run (source
  ``inspirations``, :meth:`~ideaharness.runner.protocol.Benchmark.apply_cutoff`); the hit ratio
  then counts the gold that remains (an instance left with none is unscored, never 0);
* negatives dated after the cutoff are never drawn into a built pool; a given pool (a release's
  retrieve task) loses every candidate whose title matches a paper of the data dated after the
  cutoff; candidates whose date is unknown are kept and counted ``undated`` (source :data:`POOL_SOURCE`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from ideaharness.benchmarks.researchbench.composition import STEP_GENERATE
from ideaharness.benchmarks.researchbench.config import BenchData
from ideaharness.benchmarks.researchbench.screening import STEP as STEP_SCREEN
from ideaharness.cutoff import CutoffLedger, DatedWork, LiteratureAccess, access_record, before_cutoff
from ideaharness.data.matching import normalise_title
from ideaharness.data.pools import Candidate, CandidatePool
from ideaharness.schema import Paper

POOL_SOURCE = "pool"
"""The ledger source of the candidate pools (negatives drawn, given candidates kept)."""

LITERATURE = LiteratureAccess(
    sources={"inspirations": "gold inspirations: in the candidate pool and shown when composing hypotheses",
             POOL_SOURCE: "candidate pool screened by the generator (negatives drawn from the data or "
                          "the corpus, or a release's given pool)"},
    prompt_steps=(STEP_SCREEN, STEP_GENERATE), references_source="inspirations",
    note="gold inspirations and negatives dated after the instance's cutoff never enter a pool or a "
         "composition prompt; the hit ratio counts the gold that remains (an instance with none left is "
         "unscored); given pools lose candidates whose title matches a later paper of the data")


def dated_titles(data: BenchData) -> dict[str, Paper]:
    """Normalised title -> a paper of the data (targets, inspirations, corpus) that has a date."""
    out: dict[str, Paper] = {}
    papers: list[Paper] = [p for inst in data.instances for p in (inst.target, *inst.references)]
    papers += list(data.corpus or [])
    for paper in papers:
        key = normalise_title(paper.title)
        if key and key not in out and (paper.publication_date is not None or paper.year is not None):
            out[key] = paper
    return out


def negatives_before(same: Sequence[Paper], other: Sequence[Paper], cutoff: dt.date | None,
                     ledger: CutoffLedger) -> tuple[list[Paper], list[Paper]]:
    """The negative sources without the papers dated after ``cutoff`` (their count and titles go to
    ``ledger``)."""
    return (before_cutoff(same, cutoff, source=POOL_SOURCE, ledger=ledger),
            before_cutoff(other, cutoff, source=POOL_SOURCE, ledger=ledger))


def pool_before(pool: CandidatePool, cutoff: dt.date | None, dated: dict[str, Paper],
                drawn: CutoffLedger) -> tuple[CandidatePool, dict[str, Any]]:
    """The pool without candidates dated after ``cutoff`` (re-indexed in the same order), and the
    ``cutoff`` record of the access: ``kept`` the final candidates, ``excluded`` the negatives not
    drawn (``drawn``) plus the candidates removed, ``undated`` the candidates of unknown date."""
    stubs = []
    for c in pool.candidates:
        paper = dated.get(normalise_title(c.title))
        stubs.append(DatedWork(id=str(c.index), title=c.title,
                               publication_date=paper.publication_date if paper else None,
                               year=paper.year if paper else None))
    here = CutoffLedger()
    kept = before_cutoff(stubs, cutoff, source=POOL_SOURCE, ledger=here)
    keep = {s.id for s in kept}
    candidates = [Candidate(index=i, title=c.title, abstract=c.abstract, label=c.label)
                  for i, c in enumerate(c for c in pool.candidates if str(c.index) in keep)]
    notes = list(pool.notes)
    removed = len(pool.candidates) - len(candidates)
    if removed:
        notes.append(f"{removed} candidate(s) dated after the cutoff {cutoff} removed")
    record = access_record(here, POOL_SOURCE, kept, cutoff=cutoff)
    record["excluded"] += drawn.excluded(POOL_SOURCE)
    record["excluded_works"] = [*drawn.excluded_works.get(POOL_SOURCE, []), *record["excluded_works"]]
    return pool.model_copy(update={"candidates": candidates, "notes": notes}), record
