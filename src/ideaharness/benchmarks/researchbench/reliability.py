"""ResearchBench's judgments as reliability views (``ResearchBench.judgment_adapters``).

=============================== ========= =====================================================
step                            kind      metric
=============================== ========= =====================================================
``researchbench_rank_pair``     pairwise  ``researchbench_rank_pair`` (gold hypothesis = gold)
``researchbench_screen_window`` choice    ``researchbench_screen_window`` (several chosen)
``researchbench_matched_score`` rating    ``researchbench_matched_score`` (0–5)
=============================== ========= =====================================================

Hypothesis generation (``researchbench_generate``) and rewrites are not judgments. The judged
hypotheses' generator: the instance's ``researchbench_generate`` records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ideaharness.metrics.reliability.adapters import (
    Adapters,
    Record,
    judgment_view,
    parsed_value,
)
from ideaharness.metrics.reliability.sampling import original_key
from ideaharness.metrics.reliability.views import JudgmentView


def rb_rank_pair(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``researchbench_rank_pair``: candidate 1 (shown first) -> 1.0, candidate 2 -> 0.0."""
    parsed = parsed_value(data)
    shown = data["judgment"]["positions"]
    orig = original_key(key)[0]
    return [
        judgment_view(
            step,
            iid,
            key,
            data,
            "pairwise",
            None if parsed is None else (1.0 if parsed == 1 else 0.0),
            generators=gens,
            group=orig.split("/")[0],
            gold=shown.index("gold") if "gold" in shown else None,
        )
    ]


def rb_screen_window(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``researchbench_screen_window``: the chosen positions of one window."""
    parsed = parsed_value(data)
    value = tuple(sorted(int(p) for p in parsed["selected"])) if parsed is not None else None
    return [judgment_view(step, iid, key, data, "choice", value, generators=gens)]


def rb_matched_score(
    step: str, iid: str, key: str, data: dict[str, Any], gens: dict[str, str]
) -> list[JudgmentView]:
    """``researchbench_matched_score``: the 0–5 matched score."""
    parsed = parsed_value(data)
    value = None if parsed is None else float(parsed)
    return [judgment_view(step, iid, key, data, "rating", value, generators=gens)]


def generator_models(records: Sequence[Record]) -> dict[str, str]:
    """Instance id -> the model that generated its hypotheses (first generation record)."""
    out: dict[str, str] = {}
    for step, iid, _key, data in records:
        if step == "researchbench_generate" and isinstance(data.get("judgment"), dict):
            out.setdefault(iid, data["judgment"]["judge_model"])
    return out


JUDGMENT_ADAPTERS: Adapters = {
    "researchbench_rank_pair": rb_rank_pair,
    "researchbench_screen_window": rb_screen_window,
    "researchbench_matched_score": rb_matched_score,
    "researchbench_generate": None,
    "researchbench_rewrite": None,
}
