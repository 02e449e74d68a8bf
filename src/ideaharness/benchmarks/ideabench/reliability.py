"""IdeaBench's judgments as reliability views (``IdeaBench.judgment_adapters``).

=============================== ========= =====================================================
step                            kind      metric
=============================== ========= =====================================================
``rank/<scenario>/<indicator>`` ranking   ``rank/<s>/<ind>`` (target = gold)
``overlap/<scenario>``          rating    ``overlap/<s>`` (1–10)
=============================== ========= =====================================================

``target_idea``, ``generate/<scenario>`` and ``rewrite/<scenario>`` are recorded through the judge
call but are not judgments; ``placement/<scenario>`` (the target's position) is no model call.
The judged ideas' generator: the ``generate/<scenario>`` record of the
instance (:func:`generator_models`, key ``"<scenario>|<instance>"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ideaharness.metrics.reliability.adapters import (
    Adapters,
    Record,
    judgment_view,
    parsed_value,
)
from ideaharness.metrics.reliability.views import JudgmentView


def ideabench_rank(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``rank/<scenario>/<indicator>``: labels in ranking order -> item ids best first (the
    target's rewriter, ``reference_by``, as the view's reference model)."""
    labels, shown = data["labels"], data["judgment"]["positions"]
    parsed = parsed_value(data)
    value = tuple(shown[labels.index(label)] for label in parsed) if parsed is not None else None
    scenario = step.split("/")[1]
    view = judgment_view(
        step,
        iid,
        key,
        data,
        "ranking",
        value,
        generators=gens,
        gen_key=f"{scenario}|{iid}",
        gold=labels.index(data["target_label"]),
    )
    return [replace(view, reference_model=data.get("reference_by"))]


def ideabench_overlap(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``overlap/<scenario>``: the 1–10 overlap rating."""
    parsed = parsed_value(data)
    scenario = step.split("/")[1]
    return [
        judgment_view(
            step,
            iid,
            key,
            data,
            "rating",
            None if parsed is None else float(parsed["rating"]),
            generators=gens,
            gen_key=f"{scenario}|{iid}",
        )
    ]


def generator_models(records: Sequence[Record]) -> dict[str, str]:
    """``"<scenario>|<instance>"`` -> the model that generated that scenario's ideas."""
    return {f"{step.split('/')[1]}|{iid}": data["judgment"]["judge_model"]
            for step, iid, _key, data in records
            if step.startswith("generate/") and isinstance(data.get("judgment"), dict)}


JUDGMENT_ADAPTERS: Adapters = {
    "rank/": ideabench_rank,
    "overlap/": ideabench_overlap,
    "target_idea": None,
    "generate/": None,
    "rewrite/": None,
    "placement/": None,
}
