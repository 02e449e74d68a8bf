"""LiveIdeaBench's judgments as reliability views (``LiveIdeaBench.judgment_adapters``).

=============================== ========= =====================================================
step                            kind      metric
=============================== ========= =====================================================
``critique``                    rating    ``critique[<dimension>]`` (1–10: originality,
                                          feasibility, clarity; v1 without clarity)
``fluency``                     rating    ``fluency`` (grade A–D as the metric's value of the
                                          record's protocol: v2 10/7/4/1, v1 10/6.67/3.33/0,
                                          :func:`~.metrics.fluency_value`)
=============================== ========= =====================================================

A critique shows one idea (no positions); the panel's judges of one idea share a unit, so the
block's panel α is their agreement. A fluency judgment shows two ideas of one keyword; by default
each judge grades a pair in both orders (keys ``<pair>/<judge>/AB`` and ``.../BA``), which is
its position consistency (the same grade both times), and the judges of a pair share a unit.
``idea`` and ``idea_fallback`` are the generations: not judgments; their model is the judged
ideas' generator (self-preference when a panel judge is the generator).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ideaharness.benchmarks.liveideabench.metrics import fluency_value
from ideaharness.benchmarks.liveideabench.parsers import DIMENSIONS
from ideaharness.metrics.reliability.adapters import Adapters, Record, judgment_view, parsed_value
from ideaharness.metrics.reliability.sampling import original_key
from ideaharness.metrics.reliability.views import JudgmentView


def generator_models(records: Sequence[Record]) -> dict[str, str]:
    """``"<keyword>/<idea index>"`` -> the model that generated that idea."""
    return {f"{iid}/{key}": data["judgment"]["judge_model"] for step, iid, key, data in records
            if step in ("idea", "idea_fallback") and isinstance(data.get("judgment"), dict)}


def critique_views(step: str, iid: str, key: str, data: dict[str, Any],
                   gens: dict[str, str]) -> list[JudgmentView]:
    """``critique``: one 1–10 rating view per dimension of the record's protocol (v2 when the
    record does not say); the unit is the idea (``<keyword>|<k>``), shared by its judges."""
    parsed = parsed_value(data)
    idea = str(data.get("idea", original_key(key)[0].split("/")[0]))
    dims = list(parsed) if parsed is not None else list(DIMENSIONS[str(data.get("protocol", "v2"))])
    return [
        judgment_view(f"critique[{dim}]", iid, key, data, "rating",
                      None if parsed is None else float(parsed[dim]), generators=gens,
                      gen_key=f"{iid}/{idea}", group=f"{idea}/{data.get('judge', '')}",
                      unit=f"{iid}|{idea}")
        for dim in dims
    ]


def fluency_view(step: str, iid: str, key: str, data: dict[str, Any],
                 gens: dict[str, str]) -> list[JudgmentView]:
    """``fluency``: the grade as the fluency metric values it (:func:`~.metrics.fluency_value` of the
    record's ``protocol``, v2 when the record does not say, as :func:`critique_views`), so the
    reliability table's modal answer is on the headline's scale; both orders of one judge's pair
    share a group."""
    parsed = parsed_value(data)
    pair, judge = original_key(key)[0].split("/")[:2]
    first = (data.get("pair") or [None])[0]
    value = None if parsed is None else fluency_value(str(parsed), str(data.get("protocol", "v2")))
    return [judgment_view("fluency", iid, key, data, "rating", value, generators=gens,
                          gen_key=f"{iid}/{first}", group=f"{pair}/{judge}", unit=f"{iid}|{pair}")]


JUDGMENT_ADAPTERS: Adapters = {
    "critique": critique_views,
    "fluency": fluency_view,
    "idea": None,
    "idea_fallback": None,
}
