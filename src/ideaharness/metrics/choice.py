"""Idea multiple-choice questions (IMCQ) of AI Idea Bench 2025.

Qiu et al. 2025 (arXiv 2504.14191), Sec. 3 / Eq. 2. For each target paper and each component
(motivation, experiment plan) a four-option question is built: the ground-truth text of that
component, the 2 texts of the target's own inspiration papers most similar to it, and the most
similar text among the other targets' inspiration papers (cosine similarity of all-MiniLM-L6-v2
embeddings, as in the published ``Make_MCQ.py``). Options are shuffled with a seeded generator
(the published code shuffles unseeded). A judge reads a generated idea's component and picks the
closest option; S_M = 1 if any idea of the target picks the ground truth.

The motivation question's ground truth is the motivation; the plan question's is the plan, so the
motivation never appears as an option of the plan question (and vice versa) unless an inspiration
text happens to equal it (such duplicates of the ground truth are skipped).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import numpy as np
from pydantic import BaseModel

LETTERS = "ABCD"
EmbedFn = Callable[[Sequence[str]], np.ndarray]


class MCQuestion(BaseModel):
    """One IMCQ question: options in shown order, the ground truth's letter, each option's source.

    ``sources[i]`` is "ground_truth", "own_inspiration" or "other_inspiration".
    """

    component: str
    options: list[str]
    answer: str
    sources: list[str]


def _default_embed(texts: Sequence[str]) -> np.ndarray:
    from ideaharness.metrics.embeddings import embed

    return embed(texts)


def build_mcq(
    component: str,
    ground_truth: str,
    own_inspirations: Sequence[str],
    other_inspirations: Sequence[str],
    rng: random.Random,
    embed_fn: EmbedFn = _default_embed,
) -> MCQuestion:
    """Build one IMCQ question (published ``Make_MCQ.py`` construction, seeded shuffle).

    Args:
        component: "motivation" or "experiment_plan" (recorded only).
        ground_truth: the target's text for this component.
        own_inspirations: texts (digests or abstracts) of the target's inspiration papers.
        other_inspirations: texts of the other targets' inspiration papers.
        rng: seeded generator for the option order.
        embed_fn: texts -> L2-normalised embeddings (rows).

    Returns:
        A question with 4 options. If the target has fewer than 2 usable inspiration texts, the
        missing distractors are the next most similar other-target texts (sources say which).

    Raises:
        ValueError: fewer than 3 distinct distractor texts are available in total.
    """
    gt = ground_truth.strip()
    own = list(dict.fromkeys(t.strip() for t in own_inspirations if t.strip() and t.strip() != gt))
    own_set = set(own)
    stripped = (t.strip() for t in other_inspirations)
    others = list(dict.fromkeys(t for t in stripped if t and t != gt and t not in own_set))
    if len(own) + len(others) < 3:
        raise ValueError("IMCQ needs at least 3 distinct distractor texts")
    vectors = embed_fn([gt, *own, *others])
    sims = vectors[1:] @ vectors[0]
    own_sims, other_sims = sims[: len(own)], sims[len(own) :]
    own_order = [own[i] for i in np.argsort(-own_sims, kind="stable")]
    other_order = [others[i] for i in np.argsort(-other_sims, kind="stable")]
    picked_own = own_order[:2]
    n_other = 3 - len(picked_own)
    picked_other = other_order[:n_other]
    options = [gt, *picked_own, *picked_other]
    sources = ["ground_truth"] + ["own_inspiration"] * len(picked_own) + ["other_inspiration"] * n_other
    order = list(range(4))
    rng.shuffle(order)
    return MCQuestion(
        component=component,
        options=[options[i] for i in order],
        answer=LETTERS[order.index(0)],
        sources=[sources[i] for i in order],
    )


def imcq_hit(choices: Sequence[str | None], answer: str) -> int | None:
    """S_M of one target: 1 if any idea chose the ground-truth letter, else 0 (Eq. 2).

    Args:
        choices: the letter each idea's judgment picked; None = the judgment did not parse.
        answer: the ground truth's letter.

    Returns:
        1 or 0; None when any judgment did not parse (the instance is undetermined: the
        unparsed idea might have picked the ground truth, so a 0 from the others would be a
        parse failure counted as a miss, and a 1 only from those that parsed would select on
        the outcome).
    """
    if not choices or any(c is None for c in choices):
        return None
    return int(any(c.upper() == answer.upper() for c in choices if c is not None))
