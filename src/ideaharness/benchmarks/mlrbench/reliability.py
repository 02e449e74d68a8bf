"""MLR-Bench's judgments as reliability views (``MLRBench.judgment_adapters``).

=============================== ========= =====================================================
step                            kind      metric
=============================== ========= =====================================================
``review/idea``                 rating    ``review/idea[<dimension>]`` (1-10: consistency,
                                          clarity, novelty, feasibility, significance, overall)
``review/proposal``             rating    ``review/proposal[<dimension>]`` (the same and
                                          soundness)
=============================== ========= =====================================================

A review shows one text (no positions, so no consistency re-ask); the panel's judges of one text
share a unit (``<task>|<stage>``), so the block's panel agreement is theirs. ``idea`` and
``proposal`` are the generations: not judgments; their model is the judged texts' generator
(self-preference when a judge is the generator). For a system (``--ideas``, ``cmd:``, ``http://``)
the review records carry the model its answer names (``provenance.model``; an ``--ideas`` file's
``model``) as ``generator_model``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ideaharness.benchmarks.mlrbench.parsers import DIMENSIONS
from ideaharness.metrics.reliability.adapters import Adapters, Record, judgment_view, parsed_value
from ideaharness.metrics.reliability.views import JudgmentView


def generator_models(records: Sequence[Record]) -> dict[str, str]:
    """``"<task>/<stage>"`` -> the model that wrote that task's idea or proposal (the generation
    records' model, else a review record's ``generator_model``)."""
    out: dict[str, str] = {}
    for step, iid, _key, data in records:
        if step.startswith("review/") and data.get("generator_model"):
            out.setdefault(f"{iid}/{data.get('stage', step.split('/', 1)[1])}", str(data["generator_model"]))
    for step, iid, _key, data in records:
        # a system's generation record names the system, not a model: the model its answer names
        # (the reviews' generator_model), if any, stands
        if step in DIMENSIONS and isinstance(data.get("judgment"), dict) and not data.get("system_task"):
            out[f"{iid}/{step}"] = data["judgment"]["judge_model"]
    return out


def review_views(step: str, iid: str, key: str, data: dict[str, Any],
                 gens: dict[str, str]) -> list[JudgmentView]:
    """``review/<stage>``: one 1-10 rating view per rubric dimension; the unit is the reviewed text
    (``<task>|<stage>``), shared by the panel's judges."""
    stage = str(data.get("stage") or step.split("/", 1)[1])
    parsed = parsed_value(data)
    return [
        judgment_view(f"{step}[{dim}]", iid, key, data, "rating",
                      None if parsed is None else float(parsed[dim]), generators=gens,
                      gen_key=f"{iid}/{stage}", group=f"{stage}/{data.get('judge', key)}",
                      unit=f"{iid}|{stage}")
        for dim in DIMENSIONS[stage]
    ]


JUDGMENT_ADAPTERS: Adapters = {
    "review/": review_views,
    "idea": None,
    "proposal": None,
}
