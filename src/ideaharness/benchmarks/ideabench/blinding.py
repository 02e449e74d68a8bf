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
instances). A failed rewrite is final: a later run does not ask it again, and the run says once
that the target was dropped and why. ``parity``: the published target text.

Placement (:func:`place_targets`): the target's position among the ranked items is balanced over the
instances whose target is shown, leaving out those whose rewrite failed its check, not over every
selected instance (with 9 of 12 targets dropped, balancing over the 12 left the 3 survivors at
positions that gave an always-"A > B > C > D" judge an Insight Score of 0.889 instead of 0.5;
issue 32, item 4). An instance whose system gave no ideas (a failed or unparsed generation) keeps
its place in the balance: its target was never rewritten, not dropped by the check, so a system's
failure on one instance never moves the target of another (the positions, and so a
position-biased judge's scores, of the other instances stay those of a run without the failure).
It is decided after the rewrite phase and recorded per instance (record ``placement/<scenario>``):
an instance keeps its position in every later run, and the instances that join in a resumed run
fill the positions used least so far (:func:`balanced_fill`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ideaharness.benchmarks._blinding import (
    ReferenceForm,
    paragraph_form,
    rewrite_counts,
    rewrite_reference,
    rewritten,
)
from ideaharness.benchmarks.ideabench.config import Scenario
from ideaharness.metrics.reliability.sampling import balanced_positions
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


def placement_step(scenario: str) -> str:
    return f"placement/{scenario}"


def balanced_fill(new_ids: Sequence[str], k: int, seed: int, used: Mapping[int, int]) -> dict[str, int]:
    """0-based target positions for ``new_ids`` that even out the positions already ``used``.

    Each new instance, in the seeded order of :func:`~ideaharness.metrics.reliability.sampling.
    balanced_positions`, takes a position used least so far (counting ``used`` and the ones
    assigned before it); among those, the first in that function's seeded order of positions,
    starting after the last one given. With nothing used this is exactly
    :func:`~ideaharness.metrics.reliability.sampling.balanced_positions`; in any case the counts
    of all positions end as even as the positions already used allow.

    Raises:
        ValueError: ``k`` < 1, duplicate ids, or a used position outside ``range(k)``.
    """
    if any(not 0 <= p < k for p in used):
        raise ValueError(f"a used position is outside 0..{k - 1}")
    fresh = balanced_positions(new_ids, k, seed)  # validates k and ids; gives the seeded orders
    ordered = list(fresh)  # the seeded order of the ids (the dict is built in it)
    offsets = [fresh[i] for i in ordered[:k]]
    offsets += [p for p in range(k) if p not in offsets]  # fewer than k new ids: the rest in order
    counts = [int(used.get(p, 0)) for p in range(k)]
    out: dict[str, int] = {}
    for n, inst in enumerate(ordered):
        least = min(counts)
        rotated = offsets[n % k:] + offsets[: n % k]
        position = next(p for p in rotated if counts[p] == least)
        counts[position] += 1
        out[inst] = position
    return out


async def place_targets(bench: IdeaBench, instances: Sequence[Instance], scenario: Scenario) -> None:
    """Record the target's position for every instance of ``scenario`` whose target can be shown
    and has none yet: a position taken from a ranking recorded before placements were (so a
    resumed run keeps it), else :func:`balanced_fill` over the positions of the placed instances.
    Left out: instances with no target text, and those whose rewrite failed its check (dropped
    targets). An instance whose system gave no ideas is placed as if it had ``n_ideas`` (its
    target was never rewritten; see the module docstring). Nothing under ``parity``."""
    if bench.config.parity:
        return
    step = placement_step(scenario)
    ranked: dict[str, int] = {}  # instance -> number of ranked items
    for inst in instances:
        items = bench.rank_items(inst, scenario)
        if items is not None:
            ranked[inst.id] = len(items)
        elif _awaits_ideas(bench, inst, scenario):
            ranked[inst.id] = bench.config.n_ideas + 1
    by_k: dict[int, list[str]] = {}
    for iid, k in ranked.items():
        by_k.setdefault(k, []).append(iid)
    for k, ids in sorted(by_k.items()):
        used: dict[int, int] = {}
        todo: list[str] = []
        for iid in ids:
            position = recorded_position(bench, iid, scenario)
            if position is None:
                position = _ranked_position(bench, iid, scenario)
                if position is not None:
                    await bench.store.aput(step, iid, {"position": position, "k": k, "from": "ranking"})
            if position is None:
                todo.append(iid)
            else:
                used[position] = used.get(position, 0) + 1
        for iid, position in balanced_fill(todo, k, bench.config.seed, used).items():
            await bench.store.aput(step, iid, {"position": position, "k": k, "from": "balanced",
                                               "balanced_over": len(ids)})


def _awaits_ideas(bench: IdeaBench, inst: Instance, scenario: Scenario) -> bool:
    """Whether ``inst`` has a target but no ideas of its system yet (its rewrite never asked)."""
    target, _ = bench.target_text(inst)
    return (target is not None and not bench.ideas(inst, scenario)
            and bench.store.get(rewrite_step(scenario), inst.id) is None)


def recorded_position(bench: IdeaBench, instance_id: str, scenario: Scenario) -> int | None:
    """The target's recorded position (0-based) for ``instance_id`` in ``scenario``, None when not placed."""
    record = bench.store.get(placement_step(scenario), instance_id)
    return int(record["position"]) if record and "position" in record else None


def _ranked_position(bench: IdeaBench, instance_id: str, scenario: Scenario) -> int | None:
    """Where a ranking recorded without a placement (an earlier version) showed the target."""
    for indicator in bench.config.indicators:
        record = bench.store.get(f"rank/{scenario}/{indicator.name}", instance_id)
        positions = ((record or {}).get("judgment") or {}).get("positions")
        if positions and "target" in positions:
            return int(positions.index("target"))
    return None
