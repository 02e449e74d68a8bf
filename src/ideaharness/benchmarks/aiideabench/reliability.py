"""AI Idea Bench 2025's judgments as reliability views (``AIIdeaBench.judgment_adapters``).

=============================== ========= =====================================================
step                            kind      metric
=============================== ========= =====================================================
``imcq``                        choice    ``imcq[<component>]`` (ground-truth option = gold)
``i2i``                         rating    ``i2i[<component>]`` (1–5)
``i2t``                         rating    ``i2t[motivation]``, ``i2t[experiment_plan]``
``compete``                     pairwise  ``compete`` (items = the two systems)
=============================== ========= =====================================================

Generation, decomposition, digests, keywords, concepts, distractor decompositions and rewrites are
recorded through the judge call but are not judgments. The judged ideas' generator: the
``ideas`` records (:func:`~ideaharness.metrics.reliability.adapters.idea_generators`).
"""

from __future__ import annotations

from typing import Any

from ideaharness.metrics.reliability.adapters import Adapters, judgment_view, parsed_value
from ideaharness.metrics.reliability.sampling import original_key
from ideaharness.metrics.reliability.views import JudgmentView


def aiib_imcq(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``imcq``: option letter -> chosen position; the ground-truth option is gold."""
    parsed = parsed_value(data)
    comp = original_key(key)[0].split("/")[0]
    value = (ord(str(parsed).upper()) - ord("A"),) if parsed is not None else None
    answer = data.get("answer")
    gold = ord(str(answer).upper()) - ord("A") if answer else None
    return [
        judgment_view(
            f"imcq[{comp}]",
            iid,
            key,
            data,
            "choice",
            value,
            generators=gens,
            gen_key=data.get("idea_id"),
            gold=gold,
        )
    ]


def aiib_i2i(step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]) -> list[JudgmentView]:
    """``i2i``: 1–5 alignment rating of one component."""
    parsed = parsed_value(data)
    comp = original_key(key)[0].split("/")[0]
    return [
        judgment_view(
            f"i2i[{comp}]",
            iid,
            key,
            data,
            "rating",
            None if parsed is None else float(parsed),
            generators=gens,
            gen_key=data.get("idea_id"),
        )
    ]


def aiib_i2t(step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]) -> list[JudgmentView]:
    """``i2t``: one view per rated component (motivation, experiment_plan)."""
    parsed = parsed_value(data)
    return [
        judgment_view(
            f"i2t[{dim}]",
            iid,
            key,
            data,
            "rating",
            None if parsed is None else float(parsed[dim]),
            generators=gens,
            gen_key=data.get("idea_id"),
        )
        for dim in ("motivation", "experiment_plan")
    ]


def aiib_compete(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``compete``: ``final_choice`` 0 (idea 0 shown first wins) -> 1.0, 1 -> 0.0; items are the
    systems; self-preference when the judge model names one of the two systems."""
    parsed = parsed_value(data)
    systems = (data["idea0_system"], data["idea1_system"])
    value = None if parsed is None else 1.0 - float(parsed["final_choice"])
    judge = data["judgment"]["judge_model"]
    return [
        judgment_view(
            step,
            iid,
            key,
            data,
            "pairwise",
            value,
            generators=gens,
            positions=systems,
            group="|".join(sorted(systems)),
            generator=judge if judge in systems else None,
        )
    ]


JUDGMENT_ADAPTERS: Adapters = {
    "imcq": aiib_imcq,
    "i2i": aiib_i2i,
    "i2t": aiib_i2t,
    "compete": aiib_compete,
    "generate": None,
    "decompose": None,
    "decompose_distractor": None,
    "digest": None,
    "keywords": None,
    "concepts": None,
    "rewrite": None,
    "rewrite/": None,
}
