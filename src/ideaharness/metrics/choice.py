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

Options must not be answerable by form: when the ground truth is a decomposed motivation or a
step-per-line plan and the distractors are abstracts, a judge that picks by format alone scores 1.
The benchmark therefore decomposes the chosen distractor papers with the same step as the ground
truth (:func:`select_distractors` picks them, :func:`assemble_mcq` builds the question from their
decomposed texts). Chance level of S_M with n ideas: :func:`imcq_chance`.
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


class Candidate(BaseModel):
    """A distractor candidate: its text, where it comes from (``own_inspiration`` /
    ``other_inspiration``) and the id of its paper (None when unknown)."""

    text: str
    source: str
    id: str | None = None


def select_distractors(
    ground_truth: str,
    own: Sequence[Candidate],
    others: Sequence[Candidate],
    embed_fn: EmbedFn = _default_embed,
) -> list[Candidate]:
    """The 3 distractors of the published ``Make_MCQ.py``: the 2 own-inspiration texts most similar
    to the ground truth and the most similar other-target text (cosine of the embeddings).

    Texts equal to the ground truth or repeated are skipped. If the target has fewer than 2 usable
    own texts, the missing distractors are the next most similar other-target texts.

    Raises:
        ValueError: fewer than 3 distinct distractor texts are available in total.
    """
    gt = ground_truth.strip()
    seen = {gt}
    own_c: list[Candidate] = []
    other_c: list[Candidate] = []
    for pool, out in ((own, own_c), (others, other_c)):
        for c in pool:
            text = c.text.strip()
            if text and text not in seen:
                seen.add(text)
                out.append(c.model_copy(update={"text": text}))
    if len(own_c) + len(other_c) < 3:
        raise ValueError("IMCQ needs at least 3 distinct distractor texts")
    vectors = embed_fn([gt, *(c.text for c in own_c), *(c.text for c in other_c)])
    sims = vectors[1:] @ vectors[0]
    own_order = [own_c[i] for i in np.argsort(-sims[: len(own_c)], kind="stable")]
    other_order = [other_c[i] for i in np.argsort(-sims[len(own_c):], kind="stable")]
    picked = own_order[:2]
    return picked + other_order[: 3 - len(picked)]


def assemble_mcq(
    component: str, ground_truth: str, distractors: Sequence[Candidate], rng: random.Random
) -> MCQuestion:
    """The four options (ground truth + 3 distractors) in a seeded random order."""
    if len(distractors) != 3:
        raise ValueError(f"IMCQ needs 3 distractors, got {len(distractors)}")
    options = [ground_truth.strip(), *(d.text for d in distractors)]
    sources = ["ground_truth", *(d.source for d in distractors)]
    order = list(range(4))
    rng.shuffle(order)
    return MCQuestion(
        component=component,
        options=[options[i] for i in order],
        answer=LETTERS[order.index(0)],
        sources=[sources[i] for i in order],
    )


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
        A question with 4 options (distractors by :func:`select_distractors`).

    Raises:
        ValueError: fewer than 3 distinct distractor texts are available in total.
    """
    own = [Candidate(text=t, source="own_inspiration") for t in own_inspirations]
    others = [Candidate(text=t, source="other_inspiration") for t in other_inspirations]
    return assemble_mcq(component, ground_truth, select_distractors(ground_truth, own, others, embed_fn), rng)


def imcq_chance(n_ideas: int, n_options: int = len(LETTERS)) -> float:
    """S_M of a judge that picks uniformly at random: the chance that any of n ideas picks the truth.

    P = 1 - (1 - 1/k)^n  (k options, n ideas judged independently; S_M as in Eq. 2 of Qiu et al.
    2025 counts a target as hit when any idea picks the ground truth). k = 4, n = 2: 0.4375.

    Args:
        n_ideas: n >= 0, ideas whose judgment parsed (n = 0 gives 0).
        n_options: k >= 1.

    Raises:
        ValueError: n < 0 or k < 1.
    """
    if n_ideas < 0 or n_options < 1:
        raise ValueError(f"need n_ideas >= 0 and n_options >= 1, got {n_ideas}, {n_options}")
    return 1.0 - (1.0 - 1.0 / n_options) ** n_ideas


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
