"""LigBench's judgments as reliability views (``LigBench.judgment_adapters`` and
``JudgeAccuracy.judgment_adapters``).

=============================== ========= =====================================================
step                            kind      metric
=============================== ========= =====================================================
``ligbench/compare``            pairwise  ``ligbench/compare[<dim>]``
``ligbench/initial_score``      rating    ``ligbench/initial_score[<dim>]``
``ligbench/judge_pair``         pairwise  ``ligbench/judge_pair[<dim>]`` (human labels)
=============================== ========= =====================================================

``ligbench/judge_pair`` records carry ``human_preference``, per dimension 1 / 0.5 / 0 when the
paper shown first has the higher / equal / lower venue-debiased reviewer score: the views' human
labels. Generation, formalisation and rewrites are not judgments. The judged ideas' generator:
the ``ligbench/generate`` record of the idea.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ideaharness.metrics.reliability.adapters import (
    Adapters,
    Record,
    idea_generators,
    judgment_view,
    parsed_value,
)
from ideaharness.metrics.reliability.sampling import original_key
from ideaharness.metrics.reliability.views import JudgmentView


def lig_compare(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``ligbench/compare`` and ``ligbench/judge_pair``: one pairwise view per dimension (1 = A,
    the item shown first, better; 0.5 equal; 0 B better). Group: the pair without its order."""
    parsed = parsed_value(data)
    orig = original_key(key)[0]
    group = orig.rsplit("|", 1)[0] if step == "ligbench/compare" else ""
    dims = list(parsed) if parsed is not None else ["rating", "soundness", "contribution"]
    views = [
        judgment_view(
            f"{step}[{dim}]",
            iid,
            key,
            data,
            "pairwise",
            None if parsed is None else float(parsed[dim]),
            generators=gens,
            group=group,
        )
        for dim in dims
    ]
    human = data.get("human_preference")  # ligbench/judge_pair: 1 = the paper shown first scores higher
    if isinstance(human, dict):
        out = []
        for v in views:
            label = human.get(v.metric[len(step) + 1 : -1])
            shown = v.positions or ()
            if label in (0.0, 0.5, 1.0) and len(shown) == 2:
                v = replace(v, human_label="tie" if label == 0.5 else shown[0] if label == 1.0 else shown[1])
            out.append(v)
        views = out
    return views


def lig_initial_score(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``ligbench/initial_score``: one rating view per dimension (0–5); the calibration papers
    are the shown items."""
    parsed = parsed_value(data)
    dims = list(parsed) if parsed is not None else ["rating", "contribution", "soundness", "novelty"]
    return [
        judgment_view(
            f"{step}[{dim}]",
            iid,
            key,
            data,
            "rating",
            None if parsed is None else float(parsed[dim]),
            generators=gens,
            positions=data.get("calibration"),
        )
        for dim in dims
    ]


def generator_models(records: Sequence[Record]) -> dict[str, str]:
    """Idea id -> the model that generated it (``ligbench/generate`` and ``ideas`` records)."""
    out = idea_generators(records)
    for step, iid, _key, data in records:
        if step == "ligbench/generate" and isinstance(data.get("judgment"), dict):
            out.setdefault(iid, data["judgment"]["judge_model"])
    return out


JUDGMENT_ADAPTERS: Adapters = {
    "ligbench/compare": lig_compare,
    "ligbench/judge_pair": lig_compare,
    "ligbench/initial_score": lig_initial_score,
    "ligbench/generate": None,
    "ligbench/formalize": None,
    "ligbench/rewrite": None,
}
