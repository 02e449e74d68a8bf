"""Blinding in AI Idea Bench: generators see the anonymised topic; decompositions carry no cues.

* Topic (Qiu et al. 2025, Sec. 3: generators get a topic that does not name the target's method).
  For data decomposed by the judge (TOMATO-Chem), the decomposition's anonymised ``topic`` is what
  generators, inspiration digests and the topic judges see; the dataset's own topic (TOMATO-Chem:
  the background question, which can name the target's method) only under ``parity``. Data that
  bring their own ground truth (the published ``target_paper_data.json``) bring their topic too:
  ``revised_topic`` when present, as in the published code. An instance whose decomposition failed
  has no anonymised topic: its ideas are not generated (counted), never from the published topic.
* Decompositions (the ground truth and, for IMCQ, the distractor papers: :mod:`.imcq`) are checked
  by :func:`parse_blind_decomposition`: motivation and plan within word bounds, the plan at least
  two steps one per line, no self-reference or reference-style opening, and no measured result in
  the motivation; a reply that fails is a parse failure (retried, then counted).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ideaharness.benchmarks._blinding import check_blind_text
from ideaharness.benchmarks.aiideabench.decompose import parse_decomposition
from ideaharness.data.aiideabench import needs_decomposition
from ideaharness.errors import ParseError
from ideaharness.schema import Instance

if TYPE_CHECKING:
    from ideaharness.benchmarks.aiideabench.run import AIIdeaBench

MOTIVATION_WORDS = (12, 160)
PLAN_WORDS = (12, 320)
MIN_PLAN_STEPS = 2


def parse_blind_decomposition(text: str) -> dict[str, str]:
    """:func:`~ideaharness.data.aiideabench.parse_decomposition` plus the blinding checks above.

    Raises:
        ParseError: the reply lacks a field, or a field fails a check.
    """
    out = parse_decomposition(text)
    check_blind_text(out["motivation"], what="'motivation'", min_words=MOTIVATION_WORDS[0],
                     max_words=MOTIVATION_WORDS[1])
    check_blind_text(out["experiment_plan"], what="'experiment_plan'", min_words=PLAN_WORDS[0],
                     max_words=PLAN_WORDS[1], results=False)
    steps = [line for line in out["experiment_plan"].splitlines() if line.strip()]
    if len(steps) < MIN_PLAN_STEPS:
        raise ParseError(f"'experiment_plan' has {len(steps)} line(s); expected a plan of at least "
                         f"{MIN_PLAN_STEPS} steps, one per line")
    return out


def generation_topic(bench: AIIdeaBench, inst: Instance) -> tuple[str | None, str]:
    """(topic shown to generators, its source): ``"anonymised"`` (the decomposition's topic),
    ``"dataset"`` (the data's own topic: parity, or data with their own ground truth) or
    ``"missing"`` (decomposition failed or not done: no topic, nothing is generated)."""
    if bench.config.parity or not needs_decomposition(inst):
        return inst.topic or inst.research_question or "", "dataset"
    rec = bench.store.get("decompose", inst.id)
    if rec and rec["judgment"]["parse_ok"]:
        return str(rec["judgment"]["parsed"]["topic"]), "anonymised"
    return None, "missing"


def judge_topic(bench: AIIdeaBench, inst: Instance) -> str:
    """The topic the judges (I2T, competition, keywords) see: the one generators saw, else the
    dataset's (judges, unlike generators, may see the target's method)."""
    topic, _ = generation_topic(bench, inst)
    return topic if topic is not None else (inst.topic or inst.research_question or "")
