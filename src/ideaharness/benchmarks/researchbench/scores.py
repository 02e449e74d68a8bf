"""ResearchBench per-instance scores (the primary output of a run), from the ``per_instance``
block the benchmark derives from its records.

Per paper: ``researchbench.hit_ratio`` and ``researchbench.hit_ratio_top1`` per screening round
(group ``round k``; §4.1 and the published ``calculate_average_ratio_top1_top2``),
``researchbench.negative_selection_ratio`` per round and negative level (``round k/<level>``),
``researchbench.matched_score`` per composition method (0-5, zeros included, §4.2),
``researchbench.rank_score`` Rank/(k+1) and ``researchbench.rank_score_paper`` (the paper's
per-order reading, §4.3), and ``researchbench.directional_accuracy``: the paper's share of parsed
pairwise judgments choosing the gold hypothesis, weighted by its parsed judgments, so the pooled
:data:`~ideaharness.metrics.aggregate.ratio` over papers is the share over all judgments.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ideaharness.metrics.pairwise_ranking import PairResult, rank_score, rank_score_per_order_mean
from ideaharness.runs.scores import Record, Score


def _score(metric: str, group: str, iid: str, value: Any, reason: str, weight: float = 1.0) -> Score:
    if value is None:
        return Score.unscored(metric, iid, reason, group=group)
    return Score(metric=metric, group=group, instance_id=iid, value=float(value), weight=weight)


def researchbench_scores(records: Sequence[Record], results: dict[str, Any]) -> list[Score]:
    """Scores of a ResearchBench run (module docstring); a value that could not be determined (a
    window reply that matched nothing, a judgment that did not parse) is unscored."""
    out: list[Score] = []
    for iid, block in (results.get("per_instance") or {}).items():
        for rnd in (block.get("retrieval") or {}).get("rounds") or []:
            group = f"round {rnd['round']}"
            out.append(_score("researchbench.hit_ratio", group, iid, rnd.get("hit_ratio"),
                              "gold inspirations undetermined"))
            out.append(_score("researchbench.hit_ratio_top1", group, iid, rnd.get("hit_ratio_top1"),
                              "gold inspirations undetermined"))
            for level, value in (rnd.get("negative_selection_ratio") or {}).items():
                out.append(_score("researchbench.negative_selection_ratio", f"{group}/{level}", iid, value,
                                  "no negatives of the level determined"))
        for method, entry in (block.get("composition") or {}).items():
            if isinstance(entry, dict) and "score" in entry:
                why = ("not done" if not entry.get("done") else
                       "no hypothesis" if entry.get("hypothesis") is None else "score reply unparsed")
                out.append(_score("researchbench.matched_score", method, iid, entry["score"], why))
        ranking = block.get("ranking") or {}
        if "skipped" in ranking:  # asked for but not rankable: unscored, so the headline says why
            for metric in ("researchbench.rank_score", "researchbench.rank_score_paper",
                           "researchbench.directional_accuracy"):
                out.append(Score.unscored(metric, iid, str(ranking["skipped"])))
        elif "pairs" in ranking:
            pairs = [PairResult.model_validate(p) for p in ranking["pairs"]]
            rs = rank_score(pairs, ranking["orders"])
            out.append(_score("researchbench.rank_score", "", iid, None if rs is None else rs[2],
                              "a pair undetermined (reply unparsed)"))
            out.append(_score("researchbench.rank_score_paper", "", iid,
                              rank_score_per_order_mean(pairs, ranking["orders"]), "a pair unparsed"))
            choices = [c for p in pairs for c in p.choices.values() if c is not None]
            gold = sum(c == "gold" for c in choices)
            out.append(_score("researchbench.directional_accuracy", "", iid,
                              gold / len(choices) if choices else None, "no judgment parsed",
                              weight=float(len(choices) or 1)))
    return out
