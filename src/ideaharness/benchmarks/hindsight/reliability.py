"""HindSight's judgments as reliability views (``Hindsight.judgment_adapters``).

=============================== ========= =====================================================
step                            kind      metric
=============================== ========= =====================================================
``match``                       rating    ``match`` (1.0 the paper carries the idea out, 0.0 not)
``review``                      rating    ``review[novelty]``, ``review[quality]`` (1-10)
=============================== ========= =====================================================

A match judgment shows two texts, the idea and a future paper, in an order (``positions``: the
idea id and the paper id as shown); by default each pair is asked in both orders (keys
``<k>/<n>/idea_first`` and ``.../paper_first``), which share a group, so the block's position
consistency is the judge's agreement with itself when only the order changes. A judge that says
"match" to every pair is a constant judge (the block's ``constant_judge`` warning). A review shows
one idea. ``generate`` is the generation: not a judgment; its model is the judged ideas' generator
(self-preference when the judge is the generator).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ideaharness.benchmarks.hindsight.parsers import REVIEW_DIMENSIONS
from ideaharness.metrics.reliability.adapters import Adapters, Record, judgment_view, parsed_value
from ideaharness.metrics.reliability.sampling import original_key
from ideaharness.metrics.reliability.views import JudgmentView


def idea_id(topic_id: str, k: int | str) -> str:
    """The id of idea ``k`` of a topic: ``"<topic id>/<k>"``."""
    return f"{topic_id}/{k}"


def generator_models(records: Sequence[Record]) -> dict[str, str]:
    """Idea id -> the model (or system) that generated it, from the ``generate`` records."""
    return {idea_id(iid, key): data["judgment"]["judge_model"] for step, iid, key, data in records
            if step == "generate" and isinstance(data.get("judgment"), dict)}


def match_view(step: str, iid: str, key: str, data: dict[str, Any],
               gens: dict[str, str]) -> list[JudgmentView]:
    """``match``: the verdict as 1.0 / 0.0; both orders of one (idea, paper) pair share a group and
    the pair is the panel unit."""
    parsed = parsed_value(data)
    pair = "/".join(original_key(key)[0].split("/")[:2])
    return [judgment_view("match", iid, key, data, "rating", None if parsed is None else float(bool(parsed)),
                          generators=gens, gen_key=idea_id(iid, data.get("idea", pair.split("/")[0])),
                          group=pair, unit=f"{iid}|{pair}")]


def review_views(step: str, iid: str, key: str, data: dict[str, Any],
                 gens: dict[str, str]) -> list[JudgmentView]:
    """``review``: one 1-10 rating view per dimension; the unit is the idea."""
    parsed = parsed_value(data)
    idea = original_key(key)[0]
    return [judgment_view(f"review[{dim}]", iid, key, data, "rating",
                          None if parsed is None else float(parsed[dim]), generators=gens,
                          gen_key=idea_id(iid, idea), group=idea, unit=f"{iid}|{idea}")
            for dim in REVIEW_DIMENSIONS]


JUDGMENT_ADAPTERS: Adapters = {
    "match": match_view,
    "review": review_views,
    "generate": None,
}
