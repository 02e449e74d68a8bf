"""IMCQ questions of AI Idea Bench 2025 with options that cannot be told apart by form.

Qiu et al. 2025, Eq. 2; construction of the published ``Make_MCQ.py`` (see
:mod:`ideaharness.metrics.choice`): the ground truth plus the 2 own inspiration papers and the 1
other-target inspiration paper most similar to it. In the published code the distractors are the
papers' own texts while the ground truth is a decomposed motivation or a step-per-line plan, so a
judge that picks the option that looks like a plan scores 1 without reading the idea. By default
every distractor paper is decomposed by the same step as the ground truth
(``aiideabench_decompose``, record ``decompose_distractor`` keyed by paper id, checked by
:func:`~ideaharness.benchmarks.aiideabench.blinding.parse_blind_decomposition`) and the option is
its motivation or plan; a question whose distractor decomposition failed is not asked (counted).
The four options are then rendered in one form (same layout, same steps, the same number of words
on every line, as long in characters as their words allow:
:func:`~ideaharness.benchmarks.aiideabench.option_form.uniform_options`), so that neither length
in characters or words, nor mean word length, nor line structure nor markers tell the ground truth
apart.

Chance: a judge that ignores the options' content picks the same option for both ideas of an
instance wherever the ground truth is (a deterministic rule of form), so it scores 1/4
(:data:`CONTENT_BLIND_CHANCE`): that is the level a result is judged against (``chance``).
1 − (1 − 1/4)^n (0.4375 for n = 2, :func:`~ideaharness.metrics.choice.imcq_chance`) is the score
of a guesser that draws independently for each idea (``chance_independent_guesser``): above what
any deterministic form-only judge reaches, it made such judges look at chance (issue 32, item 5).
``parity``: the papers' texts, as published.

Placement (:func:`place_questions`): the ground truth's position (its letter) is balanced over the
questions asked, per component: a seeded draw per question (the published code's shuffle) left the
letters uneven (on 18 papers a judge that always answers the last option scored 0.44 on motivation
against 0.25, and a judge that always finds the ground truth looked position-biased). The options are
built first (record ``imcq_options``, ground truth first), then, once every instance's options are
known, each question not placed yet gets a position by
:func:`~ideaharness.benchmarks.ideabench.blinding.balanced_fill` (IdeaBench's placement) over the
positions of those already placed (record ``imcq_placement``, key = component), and the question as
asked is recorded (``imcq_question``): a resumed run keeps every position, and questions that join
later fill the letters used least. Balanced over: the questions whose options were built, plus the
instances the ideas file has no answer for (their ground truth is not asked for, so they have no
options; they keep their place), so a system's failure on one paper never moves the ground truth
of another. Left out: questions skipped (no distractors, a distractor decomposition failed, options
not comparable). A question recorded before placements were keeps its letter.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ideaharness.benchmarks.aiideabench import judges as J
from ideaharness.benchmarks.aiideabench.blinding import parse_blind_decomposition
from ideaharness.benchmarks.aiideabench.decompose import DECOMPOSITION_SCHEMA, paper_decomposition_messages
from ideaharness.benchmarks.aiideabench.option_form import uniform_options
from ideaharness.benchmarks.ideabench.blinding import balanced_fill
from ideaharness.data.aiideabench import inspiration_text
from ideaharness.metrics.choice import (
    LETTERS,
    Candidate,
    MCQuestion,
    imcq_chance,
    imcq_hit,
    select_distractors,
)
from ideaharness.metrics.reliability.sampling import order_with_target_at
from ideaharness.metrics.surface import surface_report
from ideaharness.schema import Instance, Reference
from ideaharness.seeding import derive_seed

if TYPE_CHECKING:
    from ideaharness.benchmarks.aiideabench.run import AIIdeaBench

STEP_QUESTION = "imcq_question"
CONTENT_BLIND_CHANCE = 0.25
"""S_M of a content-blind deterministic judge: 1 / (4 options) (see the module docstring)."""
STEP_DISTRACTOR = "decompose_distractor"
STEP_OPTIONS = "imcq_options"
STEP_PLACEMENT = "imcq_placement"
N_OPTIONS = 4


def _candidates(bench: AIIdeaBench, inst: Instance, pool: Sequence[Instance]) -> tuple[
        list[Candidate], list[Candidate], dict[str, Reference]]:
    own_texts = bench.inspirations(inst)
    own = [Candidate(text=t, source="own_inspiration", id=r.id)
           for r, t in zip(inst.references, own_texts, strict=True)]
    others = [Candidate(text=inspiration_text(r), source="other_inspiration", id=r.id)
              for o in pool if o.id != inst.id for r in o.references]
    papers = {r.id: r for o in pool for r in o.references}
    papers.update({r.id: r for r in inst.references})
    return own, others, papers


async def _decompose(bench: AIIdeaBench, inst: Instance, paper: Reference) -> dict[str, Any] | None:
    """The decomposition of one distractor paper: asked once per paper, whichever instance's
    question needs it first (the prompt depends on the paper alone); recorded under that instance."""
    for _, key, data in bench.store.records(STEP_DISTRACTOR):
        if key == paper.id:
            return data
    tasks = bench.distractor_tasks
    known = tasks.get(paper.id)
    # a request that ended without a record is asked again: under --batch the collecting pass ends
    # it with a Deferred signal (the answer is then in the cache for the normal pass)
    if known is None or (known.done() and (known.cancelled() or known.exception() is not None)):
        tasks[paper.id] = asyncio.ensure_future(bench.steps.judge_step(
            STEP_DISTRACTOR, inst.id, paper.id, bench.judge, paper_decomposition_messages(paper),
            parse_blind_decomposition, json_schema=DECOMPOSITION_SCHEMA, extra={"title": paper.title},
            **bench._sampling("decompose"),
        ))
    return await asyncio.shield(tasks[paper.id])


def _built(bench: AIIdeaBench, instance_id: str, comp: str) -> bool:
    """Whether ``comp``'s options (or its question, recorded before options were) are recorded."""
    return any(bench.store.has(step, instance_id, comp) for step in (STEP_OPTIONS, STEP_QUESTION))


async def build_options(bench: AIIdeaBench, inst: Instance, pool: Sequence[Instance]) -> None:
    """Record the four IMCQ options of each component of ``inst`` (resumes; nothing without a
    ground truth); :func:`place_questions` then decides where the ground truth is shown.

    Record ``imcq_options`` (key = component): ``{"options": [ground truth, 3 distractors],
    "sources": ["ground_truth", ...], "distractors": [{"id", "source", "published"}], "form":
    "uniform", "as_decomposed": {"ground_truth", "distractors"}}`` (``published`` = the paper's own
    text, ``as_decomposed`` = the options before
    :func:`~ideaharness.benchmarks.aiideabench.option_form.uniform_options`, both kept for audit;
    no ``form`` under parity), or ``{"skipped": reason}``. A model call that failed for good records
    nothing (a re-run retries). A component whose question was recorded before options were (an
    earlier version) is left as it is.
    """
    gt = bench.ground_truth(inst)
    if gt is None or all(_built(bench, inst.id, c) for c in J.COMPONENTS):
        return
    own, others, papers = _candidates(bench, inst, pool)
    await bench.embedder.aembed([*gt.values(), *(c.text for c in own + others)])  # off the event loop
    for comp in J.COMPONENTS:
        if _built(bench, inst.id, comp):
            continue
        try:
            picked = select_distractors(gt[comp], own, others, bench.embed)
        except ValueError as exc:
            await bench.store.aput(STEP_OPTIONS, inst.id, {"skipped": str(exc)}, comp)
            continue
        published = [{"id": c.id, "source": c.source, "published": c.text} for c in picked]
        if not bench.config.parity:
            records = await asyncio.gather(*(_decompose(bench, inst, papers[str(c.id)]) for c in picked))
            if any(r is None for r in records):
                return
            if not all(r and r["judgment"]["parse_ok"] for r in records):
                await bench.store.aput(STEP_OPTIONS, inst.id, {"skipped": "distractor decomposition failed",
                                                                "distractors": published}, comp)
                continue
            picked = [c.model_copy(update={"text": r["judgment"]["parsed"][comp]})  # type: ignore[index]
                      for c, r in zip(picked, records, strict=True)]
        truth = gt[comp]
        form: dict[str, Any] = {}
        if not bench.config.parity:  # one form for all four options (:mod:`.option_form`)
            as_decomposed = [truth, *(c.text for c in picked)]
            try:
                truth, *texts = uniform_options(comp, as_decomposed,
                                                seed=derive_seed(bench.config.seed, inst.id, "form", comp))
            except ValueError as exc:
                await bench.store.aput(STEP_OPTIONS, inst.id, {"skipped": f"options not comparable: {exc}",
                                                                "distractors": published}, comp)
                continue
            picked = [c.model_copy(update={"text": t}) for c, t in zip(picked, texts, strict=True)]
            form = {"form": "uniform", "as_decomposed": {"ground_truth": as_decomposed[0],
                                                         "distractors": as_decomposed[1:]}}
        if len(picked) != N_OPTIONS - 1:
            raise ValueError(f"IMCQ needs {N_OPTIONS - 1} distractors, got {len(picked)}")
        await bench.store.aput(STEP_OPTIONS, inst.id, {
            "options": [truth.strip(), *(c.text for c in picked)],
            "sources": ["ground_truth", *(c.source for c in picked)],
            "distractors": published, **form}, comp)


def placed_question(comp: str, options: dict[str, Any], position: int, *, seed: int, unit: str) -> MCQuestion:
    """The question as asked: ``options`` (an ``imcq_options`` record, ground truth first) with the
    ground truth at 0-based ``position`` and the distractors in a seeded order
    (:func:`~ideaharness.metrics.reliability.sampling.order_with_target_at`, ``unit`` names the
    question).

    Raises:
        ValueError: ``position`` outside 0..3, or the record does not hold 4 options.
    """
    texts, sources = list(options["options"]), list(options["sources"])
    if len(texts) != N_OPTIONS or len(sources) != N_OPTIONS:
        raise ValueError(f"an IMCQ question needs {N_OPTIONS} options, the record of {unit} has {len(texts)}")
    order = order_with_target_at(N_OPTIONS, 0, position, seed=seed, unit=unit)
    return MCQuestion(component=comp, options=[texts[i] for i in order], answer=LETTERS[position],
                      sources=[sources[i] for i in order])


def recorded_position(bench: AIIdeaBench, instance_id: str, comp: str) -> int | None:
    """The ground truth's 0-based position in ``comp``'s question of ``instance_id``: its placement,
    else the letter of a question recorded before placements were; None when not placed."""
    placement = bench.store.get(STEP_PLACEMENT, instance_id, comp)
    if placement is not None:
        return int(placement["position"])
    question = bench.store.get(STEP_QUESTION, instance_id, comp)
    if question and "question" in question:
        return LETTERS.index(question["question"]["answer"])
    return None


async def place_questions(bench: AIIdeaBench, instances: Sequence[Instance]) -> None:
    """Place the ground truth of every IMCQ question built and not placed yet, and record the
    question as asked (module docstring: Placement).

    Per component: the instances with options (not skipped), or that the ideas file has no answer
    for, are balanced together; those with a position (recorded placement, or a question recorded
    before placements were) keep it, the others get
    :func:`~ideaharness.benchmarks.ideabench.blinding.balanced_fill`'s positions (seed derived from
    the run's seed and the component). Records ``imcq_placement`` (key = component:
    ``{"position", "k", "from", "balanced_over"}``) and ``imcq_question`` (the placed question, or
    the options' ``skipped`` reason).
    """
    for comp in J.COMPONENTS:
        ids: list[str] = []
        for inst in instances:
            options = bench.store.get(STEP_OPTIONS, inst.id, comp)
            if options is not None and "skipped" in options:
                if not bench.store.has(STEP_QUESTION, inst.id, comp):
                    await bench.store.aput(STEP_QUESTION, inst.id, options, comp)
                continue
            if options is not None or bench.store.has(STEP_QUESTION, inst.id, comp) \
                    or bench.store.has(STEP_PLACEMENT, inst.id, comp) or bench.unanswered(inst):
                ids.append(inst.id)
        positions: dict[str, int] = {}
        used: dict[int, int] = {}
        for iid in ids:
            known = recorded_position(bench, iid, comp)
            if known is not None:
                positions[iid] = known
                used[known] = used.get(known, 0) + 1
        todo = [iid for iid in ids if iid not in positions]
        fill = balanced_fill(todo, N_OPTIONS, derive_seed(bench.config.seed, "imcq-placement", comp), used)
        for iid, position in fill.items():
            await bench.store.aput(STEP_PLACEMENT, iid, {"position": position, "k": N_OPTIONS,
                                                         "from": "balanced", "balanced_over": len(ids)}, comp)
        positions.update(fill)
        for iid, position in positions.items():
            options = bench.store.get(STEP_OPTIONS, iid, comp)
            if options is None or bench.store.has(STEP_QUESTION, iid, comp):
                continue
            question = placed_question(comp, options, position, seed=bench.config.seed, unit=f"{iid}/{comp}")
            rest = {k: v for k, v in options.items() if k not in ("options", "sources")}
            await bench.store.aput(STEP_QUESTION, iid, {"question": question.model_dump(), **rest}, comp)


def imcq_block(bench: AIIdeaBench, instances: Sequence[Instance], comp: str) -> dict[str, Any]:
    """Per-instance S_M values, counts, the chance level and the surface-feature check of one component.

    ``chance``: S_M of a content-blind deterministic judge, 1/k for k options (0.25), the level a
    result is judged against; ``chance_independent_guesser``: mean over the scored instances of
    1 - (1 - 1/k)^n_i, n_i the ideas whose judgment parsed (:func:`~ideaharness.metrics.choice.
    imcq_chance`: a guesser drawing anew for each idea). ``blinding.surface``: ground-truth
    options against distractor options as shown; ``surface_published``: against the distractor
    papers' own texts (what the published code shows).
    """
    hits: list[float] = []
    chances: list[float] = []
    blind: list[float] = []
    fails = undetermined = 0
    skipped: Counter[str] = Counter()
    letters: Counter[str] = Counter()
    gts: list[str] = []
    distractors: list[str] = []
    published: list[str] = []
    for inst in instances:
        q = bench.store.get(STEP_QUESTION, inst.id, comp)
        if q is None:
            continue
        if "skipped" in q:
            skipped[q["skipped"]] += 1
            continue
        question = q["question"]
        for text, source in zip(question["options"], question["sources"], strict=True):
            (gts if source == "ground_truth" else distractors).append(text)
        published += [d["published"] for d in q.get("distractors", [])]
        js = [d["judgment"] for i, k, d in bench.store.records("imcq")
              if i == inst.id and k.startswith(f"{comp}/")]
        fails += sum(1 for j in js if not j["parse_ok"])
        choices = [j["parsed"] if j["parse_ok"] else None for j in js]
        letters.update(c for c in choices if c)
        hit = imcq_hit(choices, question["answer"]) if js else None
        if hit is not None:
            hits.append(float(hit))
            chances.append(imcq_chance(sum(c is not None for c in choices), len(question["options"])))
            blind.append(1.0 / len(question["options"]))
        elif js:  # a judgment never parsed: the instance's best-of-n is unknown
            undetermined += 1
    return {
        "hits": hits,
        "parse_failures": fails,
        "questions_skipped": sum(skipped.values()),
        "questions_skipped_reasons": dict(skipped),
        "instances_undetermined": undetermined,
        "letters_chosen": dict(sorted(letters.items())),
        "chance": sum(blind) / len(blind) if blind else None,
        "chance_rule": "a content-blind deterministic judge: 1/k for k options",
        "chance_independent_guesser": sum(chances) / len(chances) if chances else None,
        "blinding": {
            "options": "published" if bench.config.parity else "decomposed",
            "surface": surface_report(gts, distractors),
            "surface_published": surface_report(gts, published),
        },
    }
