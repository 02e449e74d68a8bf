"""MLR-Bench results from the records: per-task scores by stage, per-judge means, counts."""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import TYPE_CHECKING, Any

from ideaharness.benchmarks.mlrbench.parsers import DIMENSIONS
from ideaharness.benchmarks.mlrbench.published import published_comparison, published_model
from ideaharness.systems.spec import is_system, system_kind

if TYPE_CHECKING:
    from ideaharness.benchmarks.mlrbench.run import MLRBench
    from ideaharness.benchmarks.mlrbench.tasks import Task


def _mean(values: list[float]) -> float | None:
    return fmean(values) if values else None


def aggregate_run(bench: MLRBench, items: Sequence[Task]) -> dict[str, Any]:
    """The run's results block.

    Returns:
        ``{"system", "generator" (None for a system), "system_kind", "judges", "stage", "stages", "given",
        "per_task": {task: {"title", <stage>: {"scores": {dim: mean over parsed judges} | None,
        "judges": n parsed, "why": reason when unscored}}}, "per_judge": {judge: {stage:
        {"reviews", "parse_failures", dim: mean over tasks}}}, "counts": {...},
        "published_judges": the published judges beside this run for ``--ideas published:<model>``
        (:func:`~.published.published_comparison`), else None}``.
    """
    cfg = bench.config
    stages = cfg.stages()
    judges = cfg.judges()
    per_task: dict[str, Any] = {}
    per_judge: dict[str, dict[str, Any]] = {j: {s: {"reviews": 0, "parse_failures": 0,
                                                  **{d: [] for d in DIMENSIONS[s]}} for s in stages}
                                            for j in judges}
    counts: dict[str, int] = {f"{what}_{s}": 0 for s in stages
                              for what in ("texts", "generation_parse_failures", "reviews",
                                           "review_parse_failures")}
    for task in items:
        block: dict[str, Any] = {"title": task.title}
        for stage in stages:
            text = bench.text(task.id, stage)
            rec = bench.store.get(stage, task.id, "")
            if text is None:
                if rec is not None and not rec["judgment"]["parse_ok"]:
                    counts[f"generation_parse_failures_{stage}"] += 1
                why = (f"the {stage} reply never parsed" if rec is not None else
                       "no idea to develop" if stage == "proposal" and bench.text(task.id, "idea") is None
                       else f"no {stage}")
                block[stage] = {"scores": None, "judges": 0, "why": why}
                continue
            counts[f"texts_{stage}"] += 1
            parsed: list[dict[str, int]] = []
            for judge in judges:
                review = bench.store.get(f"review/{stage}", task.id, judge)
                if review is None:
                    continue
                counts[f"reviews_{stage}"] += 1
                per_judge[judge][stage]["reviews"] += 1
                if not review["judgment"]["parse_ok"]:
                    counts[f"review_parse_failures_{stage}"] += 1
                    per_judge[judge][stage]["parse_failures"] += 1
                    continue
                parsed.append(review["judgment"]["parsed"])
                for dim in DIMENSIONS[stage]:
                    per_judge[judge][stage][dim].append(review["judgment"]["parsed"][dim])
            scores = {d: fmean(p[d] for p in parsed) for d in DIMENSIONS[stage]} if parsed else None
            block[stage] = {"scores": scores, "judges": len(parsed),
                            "why": None if parsed else f"no {stage} review parsed"}
        per_task[task.id] = block
    for judge_block in per_judge.values():
        for stage, entry in judge_block.items():
            for dim in DIMENSIONS[stage]:
                entry[dim] = _mean(entry[dim])
    model = published_model(cfg.ideas)
    return {
        "published_judges": published_comparison(model, per_task) if model else None,
        "system": cfg.system_name(),
        "generator": None if is_system(cfg.generator_role) else cfg.generator,
        "system_kind": system_kind(cfg.generator_role),
        "judges": judges,
        "stage": cfg.stage,
        "stages": list(stages),
        "given": system_kind(cfg.generator_role) == "ideas-file",
        "per_task": per_task,
        "per_judge": per_judge,
        "counts": counts,
    }
