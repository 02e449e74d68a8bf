"""Hypothesis composition from a research question + survey + inspirations, and its matched score.

Two generators (ResearchBench hypothesis composition; engine MOOSE-Chem, Yang et al., ICLR 2025):

* ``one_step``: one prompt with the question, the survey and all inspirations.
* ``pipeline``: per inspiration, ``n_mutations`` distinct hypotheses (mutate), each improved
  ``n_refine`` times by critique-and-rewrite (refine), then all refined hypotheses merged into one
  (recombine). MOOSE-Chem's published settings are 2 mutations and 2 self-refine iterations.

Every model call goes through :class:`~ideaharness.runner.steps.StepRunner` (judge loop with
bounded retries) and is stored as a record (raw text, parsed value, parse status, attempts); a
step whose reply cannot be parsed leaves its output out (recorded), never replaced by a default.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from ideaharness.errors import ParseError
from ideaharness.llm.parsing import check_text
from ideaharness.llm.types import ChatModel
from ideaharness.metrics.matched_score import MIN_HYPOTHESIS_CHARS, parse_matched_score
from ideaharness.prompts import render
from ideaharness.runner.steps import TASK_INSTANCE_KEY, StepRunner
from ideaharness.systems import is_system

STEP_GENERATE = "researchbench_generate"
STEP_SCORE = "researchbench_matched_score"
HYPOTHESIS_MIN_WORDS = 8
"""A hypothesis is "one paragraph" naming materials, methods or mechanisms (composition prompts)."""

_LABEL = re.compile(r"^[\s#>*\-]*\**\s*hypothesis\s*\**\s*[:：]\**", re.IGNORECASE | re.MULTILINE)
_NEXT = re.compile(
    r"^[\s#>*\-]*\**\s*(?:reasoning|reason|critique|analysis)\s*\**\s*[:：]", re.IGNORECASE | re.MULTILINE
)


def parse_hypothesis(text: str) -> dict[str, Any]:
    """The hypothesis in a generation reply, in the form every composition prompt demands:
    ``Hypothesis: <one paragraph>`` (with ``Reasoning:``/``Critique:`` around it).

    The hypothesis is the text after the last line-initial ``Hypothesis:`` label up to a
    following ``Reasoning:``/``Critique:`` label. It must be real prose
    (:func:`~ideaharness.llm.parsing.check_text`): at least :data:`HYPOTHESIS_MIN_WORDS` words
    and :data:`~ideaharness.metrics.matched_score.MIN_HYPOTHESIS_CHARS` characters (the
    published scorer's floor), mostly words, not a refusal or a hedge.

    Returns:
        ``{"hypothesis": str, "labelled": True}``.

    Raises:
        ParseError: no ``Hypothesis:`` label, or the hypothesis fails the check.
    """
    labels = list(_LABEL.finditer(text))
    if not labels:
        raise ParseError("no 'Hypothesis:' label in the reply")
    body = text[labels[-1].end() :]
    nxt = _NEXT.search(body)
    if nxt:
        body = body[: nxt.start()]
    return {"hypothesis": checked_hypothesis(body), "labelled": True}


def checked_hypothesis(body: str, what: str = "hypothesis") -> str:
    """``body`` as one hypothesis paragraph (bold markers dropped, whitespace collapsed), if it is
    real prose of at least :data:`HYPOTHESIS_MIN_WORDS` words and
    :data:`~ideaharness.metrics.matched_score.MIN_HYPOTHESIS_CHARS` characters: the rules of
    :func:`parse_hypothesis`, shared with a system's answer (:mod:`.contract`).

    Raises:
        ParseError: the text fails the check (``what`` names it).
    """
    body = " ".join(body.replace("**", "").split())
    hypothesis = check_text(body, what, min_words=HYPOTHESIS_MIN_WORDS)
    if len(hypothesis) < MIN_HYPOTHESIS_CHARS:
        raise ParseError(f"{what} has {len(hypothesis)} characters (< {MIN_HYPOTHESIS_CHARS})")
    return hypothesis


def hypothesis_of(record: dict[str, Any] | None) -> str | None:
    """The parsed hypothesis of a generation record; None when not parsed or not done."""
    if record is None or not record["judgment"]["parse_ok"]:
        return None
    return str(record["judgment"]["parsed"]["hypothesis"])


class Composer:
    """Runs the generation steps for one instance against one generator model.

    Args:
        context: template variables shared by all steps (``discipline``, ``question``, ``survey``).
        key_prefix: distinguishes records (e.g. ``"one_step"``, ``"negative3"``).
        max_tokens: the answer cap, tokens (the model adds its reasoning budget); None sends no
            cap (``--parity``).
    """

    def __init__(
        self,
        steps: StepRunner,
        model: ChatModel,
        instance_id: str,
        context: dict[str, Any],
        *,
        temperature: float = 0.7,
        max_tokens: int | None = 512,
        seed: int = 0,
    ) -> None:
        self.steps = steps
        self.model = model
        self.instance_id = instance_id
        self.context = context
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed

    @property
    def is_system(self) -> bool:
        """Whether the generator is a system (``ideas:``, ``cmd:``, ``http(s)://``), not a model."""
        return is_system(str(getattr(self.model, "model", "")))

    async def _call(
        self, key: str, template: str, sample_index: int = 0, **variables: Any
    ) -> dict[str, Any] | None:
        messages = render(template, **self.context, **variables)
        # a generation outside generate_step (the pipeline is a model's own method): counted as one,
        # so a reply that never parses is a failed unit of the generator (issue 32, item 1)
        generator = str(getattr(self.model, "model", ""))
        self.steps.note_generation(STEP_GENERATE, self.instance_id, key, generator, self.instance_id)
        return await self.steps.judge_step(
            STEP_GENERATE, self.instance_id, key, self.model, messages, parse_hypothesis,
            extra={"key": key, TASK_INSTANCE_KEY: self.instance_id}, temperature=self.temperature,
            max_tokens=self.max_tokens, seed=self.seed, sample_index=sample_index,
        )

    async def one_step(
        self, inspirations: list[dict[str, Any]], key: str = "one_step", task_index: int = 0
    ) -> dict[str, Any] | None:
        """One-step baseline: question + survey + all inspirations -> one hypothesis.

        Goes through :meth:`~ideaharness.runner.steps.StepRunner.generate_step`: a model is sent the
        prompt (exactly :meth:`_call`); a system the composition task of condition ``key``, its
        ``sample_index`` ``task_index`` (:func:`.contract.composition_task`)."""
        from ideaharness.benchmarks.researchbench.contract import composition_task

        messages = render("researchbench_compose", **self.context, inspirations=inspirations)
        task = composition_task(
            self.instance_id, key, task_index, discipline=str(self.context["discipline"]),
            question=str(self.context["question"]), survey=self.context.get("survey"),
            inspirations=inspirations, seed=self.seed)
        return await self.steps.generate_step(
            STEP_GENERATE, self.instance_id, key, self.model, messages, parse_hypothesis, task=task,
            extra={"key": key}, temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed,
            sample_index=0,
        )

    async def pipeline(
        self, inspirations: list[dict[str, Any]], *, n_mutations: int = 2, n_refine: int = 1,
        key: str = "pipeline",
    ) -> dict[str, Any]:
        """Mutate -> refine -> recombine.

        Returns:
            ``{"final": hypothesis or None, "steps": [records, None = call failed for good],
            "recombined": bool, "complete": bool}``; a failed refinement keeps the previous version.

        Raises:
            ValueError: ``n_mutations < 1`` or ``n_refine < 0``.
        """
        if n_mutations < 1 or n_refine < 0:
            raise ValueError("need n_mutations >= 1 and n_refine >= 0")
        if self.is_system:
            raise ValueError("the pipeline is a model's method: a system answers one task per condition")

        async def branch(i: int, insp: dict[str, Any]) -> tuple[list[dict[str, Any] | None], list[str]]:
            steps: list[dict[str, Any] | None] = []
            finals: list[str] = []
            previous: list[str] = []
            for m in range(n_mutations):
                mutation = await self._call(
                    f"{key}/insp{i}/mut{m}", "researchbench_mutate", sample_index=m,
                    inspiration=insp, previous=list(previous),
                )
                steps.append(mutation)
                current = hypothesis_of(mutation)
                if current is None:
                    continue
                previous.append(current)
                for r in range(n_refine):
                    refined = await self._call(
                        f"{key}/insp{i}/mut{m}/ref{r}", "researchbench_refine",
                        inspirations=[insp], hypothesis=current,
                    )
                    steps.append(refined)
                    current = hypothesis_of(refined) or current
                finals.append(current)
            return steps, finals

        branches = await asyncio.gather(*(branch(i, insp) for i, insp in enumerate(inspirations)))
        steps = [s for b in branches for s in b[0]]
        candidates = [h for b in branches for h in b[1]]
        if len(candidates) <= 1:
            final = candidates[0] if candidates else None
            return {"final": final, "steps": steps, "recombined": False, "complete": None not in steps}
        combined = await self._call(f"{key}/recombine", "researchbench_recombine", hypotheses=candidates)
        steps.append(combined)
        final = hypothesis_of(combined)
        return {"final": final, "steps": steps, "recombined": True, "complete": None not in steps}


async def score_hypothesis(
    steps: StepRunner,
    judge_model: ChatModel,
    instance_id: str,
    key: str,
    *,
    proposed: str,
    gold: str,
    key_points: str,
    discipline: str,
    max_tokens: int | None = 384,
    seed: int = 0,
) -> dict[str, Any] | None:
    """Matched score (0-5, MOOSE-Chem ``evaluate.py``) of ``proposed`` against the gold hypothesis.

    Temperature 0, as published. ``max_tokens``: the answer cap, tokens (the model adds its
    reasoning budget); None sends no cap (``--parity``). Returns the record; its
    ``judgment.parsed`` is the integer score, or None (``parse_ok`` False) for a reply without a
    valid ``Matched score:`` line. None = the call failed for good (not recorded; a re-run retries).
    """
    messages = render(
        "researchbench_matched_score", discipline=discipline, proposed=proposed, gold=gold,
        key_points=key_points,
    )
    return await steps.judge_step(
        STEP_SCORE, instance_id, key, judge_model, messages, parse_matched_score,
        temperature=0.0, max_tokens=max_tokens, seed=seed,
    )
