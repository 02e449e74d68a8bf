"""MLR-Bench per-task scores (the primary output of a run) and the metrics built on them.

One metric per stage and rubric dimension, ``mlrbench.<stage>_<dimension>`` (``mlrbench.idea_overall``,
``mlrbench.proposal_soundness``, ...): a task's score is its judges' mean score of the task's text
on that dimension (one judge: that judge's score), on the published 1-10 scale; the headline is
the mean over tasks with its 95% interval over tasks (the default interval of
:class:`~ideaharness.runner.MetricSpec`). A task whose text was never produced (the generation did
not parse) or whose reviews all failed to parse is unscored, with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ideaharness.benchmarks.mlrbench.parsers import DIMENSIONS, SCORE_SCALE
from ideaharness.runner import MetricSpec
from ideaharness.runner.registry import register_metric
from ideaharness.runs.scores import Record, Score

SOURCE = ("MLR-Bench, Chen et al. 2025 (arXiv 2505.19955), stepwise evaluation; rubric of "
          "chchenhui/mlrbench mlrbench/evals/review_{stage}.py ({label})")
_LABELS = {"overall": "Overall Assessment"}


def metric_name(stage: str, dim: str) -> str:
    """``mlrbench.<stage>_<dim>``."""
    return f"mlrbench.{stage}_{dim}"


def register_metrics() -> None:
    """Register the 13 MetricSpecs (idea: 6, proposal: 7)."""
    for stage, dims in DIMENSIONS.items():
        for dim in dims:
            label = _LABELS.get(dim, dim.upper())
            register_metric(MetricSpec(
                metric_name(stage, dim), higher_is_better=True, unit="task",
                range=(float(SCORE_SCALE[0]), float(SCORE_SCALE[1])),
                aggregation=f"judge score 1-10 of the {stage}, mean over judges per task, mean over tasks",
                source=SOURCE.format(stage=stage, label=label), judged_by=(f"review/{stage}[{dim}]",)))


def mlrbench_scores(records: Sequence[Record], results: dict[str, Any]) -> list[Score]:
    """One score per task, stage and dimension from ``results["per_task"]`` (what
    :func:`~.aggregate.aggregate_run` derived from the review records), unscored with a reason
    where the task has no text or no parsed review."""
    out: list[Score] = []
    for task, block in sorted((results.get("per_task") or {}).items()):
        for stage in results.get("stages") or ():
            entry = block.get(stage) or {}
            why = entry.get("why")
            for dim in DIMENSIONS[stage]:
                value = (entry.get("scores") or {}).get(dim)
                name = metric_name(stage, dim)
                out.append(Score(metric=name, instance_id=task, value=value) if value is not None
                           else Score.unscored(name, task, why or f"no {stage} review parsed"))
    return out
