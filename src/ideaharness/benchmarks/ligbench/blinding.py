"""Blinding of LigBench's pairwise comparisons: the reference paper in the idea's form.

LigBench compares two *formalised* ideas (Wang et al., Appendix B): the idea's formalisation by the
judge and the reference paper's PAIR-IQ analysis. Both sides therefore show the same four labelled
fields and nothing else — no ``Title:`` line on the paper's side. By default the paper's side is
moreover a rewrite of its analysis (or abstract) into those fields by the judge
(:mod:`ideaharness.benchmarks._blinding`, record ``ligbench/rewrite`` per reference paper, shared
by every idea compared with it): written as a proposal, each field within the bounds below, with no
measured result, self-reference or reference-style opening. A paper whose rewrite fails is not
used as an opponent (counted; the next retrieved paper takes its place). ``blind_references=False``
(``--parity``) shows the published analysis.

The fields are produced by the same judge under the same instructions on both sides, so fixed word
bounds (:data:`REFERENCE_FORM`) suffice; the surface-feature check in results.json says whether
any feature still tells the sides apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ideaharness.benchmarks._blinding import FieldSpec, ReferenceForm, rewrite_reference, rewritten
from ideaharness.data.pairiq import PairIQAnalysis, PairIQRecord
from ideaharness.llm.types import ChatModel
from ideaharness.metrics.surface import surface_report
from ideaharness.runner.steps import StepRunner

STEP_REWRITE = "ligbench/rewrite"

REFERENCE_FORM = ReferenceForm(kind="research idea", fields=[
    FieldSpec(name="main_target", description="the goal of the idea, in one sentence", min_words=5,
              max_words=45),
    FieldSpec(name="core_breakthrough", description="the key insight or change that makes the idea new "
              "compared with existing work, in one or two sentences", min_words=8, max_words=80),
    FieldSpec(name="innovative_methods", description='the main new methods or techniques, as a numbered '
              'list in one string ("1. ...\\n2. ...")', min_words=6, max_words=140),
    FieldSpec(name="experimental_design", description="the experiments that would test the idea (data, "
              "baselines, measures), as a numbered list in one string, without results", min_words=6,
              max_words=160),
])


def published_text(record: PairIQRecord) -> str:
    """A reference paper as published in the corpus, in the idea's fields: its PAIR-IQ analysis
    (or ``Abstract: ...`` when it has none); no title, which the idea's side does not have."""
    if record.analysis is not None:
        return record.analysis.text()
    return f"Abstract: {record.abstract}"


async def rewrite_paper(steps: StepRunner, judge: ChatModel, record: PairIQRecord, *,
                        temperature: float = 0.0, seed: int = 0) -> tuple[str | None, dict[str, Any] | None]:
    """The paper rewritten into the idea's four fields, as the comparison shows it, and its record.

    Returns:
        (text, record): text None when the rewrite never parsed; record None when the model call
        failed for good (nothing recorded, a re-run retries).
    """
    source = f"Title: {record.title}\n{published_text(record)}"
    rec = await rewrite_reference(steps, judge, STEP_REWRITE, record.id, source, REFERENCE_FORM,
                                  temperature=temperature, seed=seed)
    fields = rewritten(rec)
    return (PairIQAnalysis.model_validate(fields).text() if fields else None), rec


def shown_text(steps: StepRunner, record: PairIQRecord, blind: bool) -> str | None:
    """What the comparisons showed of ``record`` (None: its rewrite failed or is not done)."""
    if not blind:
        return published_text(record)
    fields = rewritten(steps.store.get(STEP_REWRITE, record.id))
    return PairIQAnalysis.model_validate(fields).text() if fields else None


def blinding_block(steps: StepRunner, papers: Sequence[PairIQRecord], idea_texts: Sequence[str],
                   blind: bool) -> dict[str, Any]:
    """results.json ``blinding``: the surface-feature check of the reference papers as compared
    (``surface``) and as published (``surface_published``) against the ideas' formalisations."""
    shown = [t for t in (shown_text(steps, p, blind) for p in papers) if t is not None]
    return {
        "reference_text": "rewritten" if blind else "published",
        "papers": len(papers),
        "surface": surface_report(shown, idea_texts),
        "surface_published": surface_report([published_text(p) for p in papers], idea_texts),
    }
