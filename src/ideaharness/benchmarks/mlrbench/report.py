"""MLR-Bench tables, notes and examples for the console and the report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ideaharness.benchmarks.mlrbench.parsers import DIMENSIONS
from ideaharness.benchmarks.mlrbench.scores import metric_name
from ideaharness.tables import Section, Table

if TYPE_CHECKING:
    from ideaharness.benchmarks.mlrbench.run import MLRBench
    from ideaharness.benchmarks.mlrbench.tasks import Task

_ORDER = ("consistency", "clarity", "novelty", "soundness", "feasibility", "significance", "overall")


def _cells(metric: dict[str, Any] | None) -> list[Any]:
    """value, 95% CI, n of one headline metric (None where not computed or not in the rubric)."""
    if not metric:
        return [None, None, None]
    ci = metric.get("ci")
    value = metric.get("value")
    return [None if value is None else float(value), tuple(ci) if ci else metric.get("ci_why"),
            metric.get("n")]


def results_tables(results: dict[str, Any]) -> list[Table]:
    """The rubric table (dimension x stage, from the run's headline ``metrics``: mean over tasks
    with its 95% interval), the counts, and the per-judge means."""
    stages = results.get("stages") or []
    metrics = {m["metric"]: m for m in results.get("metrics") or [] if not m.get("group")}
    dims = [d for d in _ORDER if any(d in DIMENSIONS[s] for s in stages)]
    rows = [[d, *[c for s in stages for c in _cells(metrics.get(metric_name(s, d)) if d in DIMENSIONS[s]
                                                     else None)]] for d in dims]
    tables = [Table(title=f"MLR-Bench rubric scores of {results.get('system')}",
                    columns=["dimension", *[c for s in stages for c in (s, f"{s} 95% CI", f"{s} n")]],
                    rows=rows, note="judge scores 1-10; mean over tasks (each task: mean over judges), "
                    "95% interval over tasks as in the headline (a bounded-mean score interval; none below 5 "
                    "tasks: docs/statistics.md)")]
    c = results.get("counts") or {}
    tables.append(Table(title="Texts and reviews", columns=["quantity", *stages], rows=[
        [what.replace("_", " "), *[c.get(f"{what}_{s}", 0) for s in stages]]
        for what in ("texts", "generation_parse_failures", "reviews", "review_parse_failures")]))
    per_judge = results.get("per_judge") or {}
    for stage in stages:
        tables.append(Table(title=f"Per judge ({stage})", columns=["judge", "reviews", "parse failures",
                            *DIMENSIONS[stage]], rows=[
            [j, v[stage]["reviews"], v[stage]["parse_failures"], *[v[stage][d] for d in DIMENSIONS[stage]]]
            for j, v in per_judge.items()]))
    for judge, block in (results.get("published_judges") or {}).items():
        if block.get("tasks"):
            idea_dims = DIMENSIONS["idea"]
            rows = [[what, *[block[key][d] for d in idea_dims]] for what, key in (
                ("published", "published"), ("this run", "run"), ("mean |difference|", "mean_abs_diff"))]
            tables.append(Table(title=f"Published judge {judge} on the same ideas ({block['tasks']} tasks)",
                                columns=["", *idea_dims], rows=rows,
                                note="upstream agent_reviews; this run's task score is its panel mean"))
    return tables


def result_notes(results: dict[str, Any]) -> list[str]:
    """Parse failures (never scored), what differs from the published stepwise evaluation."""
    c, notes = results.get("counts") or {}, []
    for stage in results.get("stages") or []:
        if c.get(f"generation_parse_failures_{stage}"):
            notes.append(f"{c[f'generation_parse_failures_{stage}']} {stage} repl(ies) never parsed after "
                         "retries: those tasks are unscored for the stage")
        if c.get(f"review_parse_failures_{stage}"):
            notes.append(f"{c[f'review_parse_failures_{stage}']} {stage} review(s) never parsed after "
                         "retries: counted, never scored")
    if "proposal" in (results.get("stages") or []):
        notes.append("proposals are written and reviewed from the task and the idea only: the published "
                     "pipeline also gives a literature review (lit_review.py), which is not run here")
    if results.get("given"):
        notes.append("texts given with --ideas: no model was asked; the judges scored the file's texts "
                     "(checked as a generated text is)")
    return notes


def example_sections(bench: MLRBench, items: Sequence[Task], limit: int = 2) -> list[Section]:
    """The texts of the first tasks with their reviews (raw replies)."""
    out: list[tuple[str, str]] = []
    for task in list(items)[:limit]:
        parts = []
        for stage in bench.config.stages():
            text = bench.text(task.id, stage)
            if text is None:
                continue
            parts.append(f"{stage.capitalize()}:\n{text}")
            for judge in bench.config.judges():
                rec = bench.store.get(f"review/{stage}", task.id, judge)
                if rec:
                    parts.append(f"Review of the {stage} by {judge} (parsed: {rec['judgment']['parsed']}):\n"
                                 f"{rec['judgment']['raw_text']}")
        if parts:
            out.append((f"{task.id}: {task.title}", "\n\n".join(parts)))
    return [Section(title="Examples", items=out)] if out else []
