"""Blinding of IdeaBench's Insight Score ranking: the target idea in the generated ideas' form.

The judge ranks the n generated ideas and the target paper's idea without being told which is the
target (Guo et al. 2024, Sec. 3.3). Ground-truth ideas give themselves away by form (TOMATO-Chem:
"The hypothesis is that ...", "the paper", measured results), so by default the ranking shows a
rewrite of the target idea (:mod:`ideaharness.benchmarks._blinding`): one paragraph with no
result, self-reference or reference-style opening, asked to be as long as the scenario's generated
ideas (their median words) and checked against word bounds a faithful rewrite of that target can
meet (:func:`~ideaharness.benchmarks._blinding.faithful_bounds`). The rewriter is the run's
``rewriter`` model (:func:`~ideaharness.benchmarks._blinding.default_rewriter`: by default neither
the judge nor the generator where one is available). Record ``rewrite/<scenario>`` per instance
(with its ``rewriter``); a failed rewrite leaves the instance out of the ranking (counted, and
warned about above :data:`~ideaharness.benchmarks._blinding.REWRITE_DROP_WARNING` of the
instances). ``parity``: the published target text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ideaharness.benchmarks._blinding import (
    ReferenceForm,
    paragraph_form,
    rewrite_counts,
    rewrite_reference,
    rewritten,
)
from ideaharness.benchmarks.ideabench.config import Scenario
from ideaharness.metrics.surface import surface_report
from ideaharness.schema import Instance

if TYPE_CHECKING:
    from ideaharness.benchmarks.ideabench.run import IdeaBench

IDEA_FIELD = "idea"
IDEA_DESCRIPTION = ("the research idea as one brief paragraph stating a hypothesis and how it could be "
                    "tested")


def idea_form(idea_texts: Sequence[str], target: str) -> ReferenceForm:
    """The form ``target`` is rewritten into: one ``idea`` paragraph, within word bounds a faithful
    rewrite of ``target`` meets, asked at the generated ideas' median length (clipped into them).

    Raises:
        ValueError: ``target`` has no words or no idea text is non-empty.
    """
    return paragraph_form("research idea", IDEA_FIELD, IDEA_DESCRIPTION, target, idea_texts)


def rewrite_step(scenario: str) -> str:
    return f"rewrite/{scenario}"


async def rewrite_target(bench: IdeaBench, inst: Instance, scenario: Scenario) -> None:
    """Record the rewrite of the target idea for ``scenario`` (nothing under parity)."""
    if bench.config.parity:
        return
    ideas = bench.ideas(inst, scenario)
    target, _ = bench.target_text(inst)
    if not ideas or not target:
        return
    await rewrite_reference(
        bench.steps, bench.rewriter, rewrite_step(scenario), inst.id, target,
        idea_form([i.text for i in ideas], target), temperature=bench.config.judge_temperature,
        seed=bench.config.seed,
    )


def shown_target(bench: IdeaBench, inst: Instance, scenario: Scenario) -> str | None:
    """The target idea as the ranking judge sees it: the published text under parity, else its
    rewrite (None when the rewrite failed or is not done: the instance is not ranked)."""
    target, _ = bench.target_text(inst)
    if bench.config.parity or target is None:
        return target
    fields = rewritten(bench.store.get(rewrite_step(scenario), inst.id))
    return fields[IDEA_FIELD] if fields else None


def blinding_block(bench: IdeaBench, instances: Sequence[Instance], scenario: Scenario) -> dict[str, Any]:
    """results.json ``blinding``: what the ranking showed, rewrite counts, and the surface-feature
    check (:func:`~ideaharness.metrics.surface.surface_report`) of the shown target ideas against
    the generated ideas, and of the published target ideas (``surface_published``)."""
    shown, published, generated = [], [], []
    records = []
    for inst in instances:
        ideas = bench.ideas(inst, scenario)
        target, _ = bench.target_text(inst)
        if not ideas or not target:
            continue
        generated += [i.text for i in ideas]
        published.append(target)
        text = shown_target(bench, inst, scenario)
        if text is not None:
            shown.append(text)
        if not bench.config.parity:
            records.append(bench.store.get(rewrite_step(scenario), inst.id))
    block: dict[str, Any] = {
        "reference_text": "published" if bench.config.parity else "rewritten",
        "surface": surface_report(shown, generated),
        "surface_published": surface_report(published, generated),
    }
    if not bench.config.parity:
        block["rewrite"] = rewrite_counts(records)
    return block
