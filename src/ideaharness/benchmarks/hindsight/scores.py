"""HindSight's per-topic scores and registered metrics.

Every metric's unit is a topic; its value is the topic's mean over its ideas and its weight the
number of ideas that mean is over, so the headline is the mean over all ideas (a pooled ratio,
:data:`~ideaharness.metrics.aggregate.ratio`) and its percentile bootstrap interval resamples whole
topics (the ideas of one topic are not independent).
"""

from __future__ import annotations

from typing import Any

from ideaharness.benchmarks.hindsight.parsers import REVIEW_DIMENSIONS
from ideaharness.metrics.aggregate import ratio
from ideaharness.runner import MetricSpec
from ideaharness.runner.registry import register_metric
from ideaharness.runs.scores import Score

SOURCE = ("HindSight, Jiang 2026 (arXiv 2603.15164): ideas matched against papers of the 30 months "
          "after the cutoff; no released code, our implementation (docs/hindsight.md)")
METRICS = ("match_rate", "impact_score", *(f"judge_{d}" for d in REVIEW_DIMENSIONS))


def register_metrics() -> None:
    """Register ``hindsight.match_rate``, ``hindsight.impact_score``, ``hindsight.judge_novelty``
    and ``hindsight.judge_quality``."""
    register_metric(MetricSpec(
        "hindsight.match_rate", higher_is_better=True, aggregate=ratio, unit="topic", range=(0.0, 1.0),
        aggregation="share of decided ideas matched by a paper of the window (pooled over topics)",
        source=SOURCE, judged_by=("match",)))
    register_metric(MetricSpec(
        "hindsight.impact_score", higher_is_better=True, aggregate=ratio, unit="topic", range=(0.0, None),
        aggregation="mean over ideas of the matched paper's field- and age-normalised citations (0 when "
        "unmatched; pooled over topics)",
        source=f"{SOURCE}; normalised citation score after Waltman et al. 2011 (J. Informetrics 5(1))",
        judged_by=("match",)))  # the citations of the paper the judge matched
    for dim in REVIEW_DIMENSIONS:
        register_metric(MetricSpec(
            f"hindsight.judge_{dim}", higher_is_better=True, aggregate=ratio, unit="topic", range=(1.0, 10.0),
            aggregation=f"LLM judge's {dim} score 1-10, mean over ideas (pooled over topics)", source=SOURCE,
            judged_by=(f"review[{dim}]",)))


def _score(metric: str, topic: str, total: float, n: int, why: str) -> Score:
    if n == 0:
        return Score.unscored(metric, topic, why)
    return Score(metric=metric, instance_id=topic, value=total / n, weight=float(n))


def hindsight_scores(results: dict[str, Any]) -> list[Score]:
    """One score per topic and metric from ``results["per_topic"]`` (:func:`.aggregate.aggregate_run`):
    match rate over the topic's decided ideas, impact-weighted score over its ideas with a value,
    judge scores over its parsed reviews; unscored (with the reason) when the topic has none."""
    out: list[Score] = []
    for topic, row in sorted((results.get("per_topic") or {}).items()):
        out.append(_score("hindsight.match_rate", topic, float(row["matched"]), int(row["decided"]),
                          "no idea decided (no idea, no candidates, or match judgments unparsed)"))
        out.append(_score("hindsight.impact_score", topic, float(row["impact_sum"]), int(row["impact_n"]),
                          "no idea with an impact (undecided, or matched papers without citation counts)"))
        for dim in REVIEW_DIMENSIONS:
            total, n = row["review"][dim]
            out.append(_score(f"hindsight.judge_{dim}", topic, float(total), int(n), "no review parsed"))
    return out
