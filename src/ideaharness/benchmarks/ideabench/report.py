"""IdeaBench results as tables (the paper's Table 1 layout), a rank plot, examples and notes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ideaharness.benchmarks.ideabench.blinding import shown_target
from ideaharness.metrics.aggregate import ci_cell
from ideaharness.metrics.duplicates import DUPLICATE_COLUMNS, duplicate_note, duplicate_row
from ideaharness.metrics.surface import surface_rows
from ideaharness.report.html import Section, Table
from ideaharness.schema import Instance

if TYPE_CHECKING:
    from ideaharness.benchmarks.ideabench.run import IdeaBench


def results_tables(results: dict[str, Any]) -> list[Table]:
    """The paper's Table 1 layout (similarity p80, overlap p80, Insight Scores) plus counts."""
    indicators = list(dict.fromkeys(name for b in results["scenarios"].values() for name in b["insight"]))
    columns = ["generator", "scenario", "similarity p80", "overlap p80"]
    columns += [f"insight {name}" for name in indicators]
    columns += ["n", "m", "parse failures"]
    rows = []
    for scenario, block in results["scenarios"].items():
        ins = block["insight"]
        failures = (
            block["generation_parse_failures"]
            + block["overlap"]["parse_failures"]
            + sum(v["parse_failures"] for v in ins.values())
            + ((block.get("blinding") or {}).get("rewrite") or {}).get("failed", 0)
        )
        rows.append(
            [
                results["generator"],
                scenario,
                block["similarity"]["p80"],
                block["overlap"]["p80"],
                *[ins[name]["insight_score"] for name in indicators],
                results["n"],
                min((v["m"] for v in ins.values()), default=0),
                failures,
            ]
        )
    detail_rows = []
    for scenario, block in results["scenarios"].items():
        for label, summary in (
            ("similarity (BERTScore F1)", block["similarity"]),
            ("overlap (1–10)", block["overlap"]),
        ):
            detail_rows.append(
                [
                    f"{scenario}: {label}",
                    summary["n"],
                    summary["mean"],
                    summary["median"],
                    summary["p80"],
                    ci_cell(summary.get("ci95p80"), summary.get("ci95p80_why")),
                    ci_cell(summary["ci95_mean"], summary.get("ci95_mean_why")),
                ]
            )
        for name, v in block["insight"].items():
            detail_rows.append(
                [f"{scenario}: insight {name}", v["m"], v["insight_score"], None, None, None,
                 ci_cell(v["ci95"], v.get("ci95_why"))]
            )
            for model, b in (v.get("by_rewriter") or {}).items():
                detail_rows.append([f"{scenario}: insight {name}, target written by {model}", b["m"],
                                    b["insight_score"], None, None, None,
                                    ci_cell(b["ci95"], b.get("ci95_why"))])
    blind_rows = []
    for scenario, block in results["scenarios"].items():
        blinding = block.get("blinding")
        if blinding:
            before = blinding["surface_published"] if blinding["reference_text"] == "rewritten" else None
            blind_rows += surface_rows(scenario, blinding["surface"], before)
    duplicates = [[scenario, *duplicate_row(block["duplicates"])] for scenario, block in
                  results["scenarios"].items() if block.get("duplicates")]
    return [
        Table(
            title="IdeaBench (Table 1 layout)",
            columns=columns,
            rows=rows,
            note=f"judge {results['judge']}; similarity {results['similarity_settings']['model']} "
            f"layer {results['similarity_settings']['num_layers']} (not comparable with the "
            "paper's deberta-xlarge-mnli BERTScores); Insight Score 0 = target idea always "
            "ranked first.",
        ),
        Table(
            title="Details with 95% intervals over instances (the headline's: none below 5 instances)",
            columns=["metric", "count", "mean", "median", "p80", "95% CI of p80", "95% CI of mean"],
            rows=detail_rows,
            note="Percentile bootstrap over instances (method and resamples under 'bootstrap' in "
            "results.json); p80 is the statistic the paper reports.",
        ),
        Table(
            title="Blinding check: target idea vs generated ideas in the Insight ranking",
            columns=["scenario", "surface feature", "target ideas", "generated ideas", "separation",
                     "separation (published text)"],
            rows=blind_rows,
            note="Share of texts with the feature (words: mean count) and how well the feature alone "
            "tells the target idea from generated ones (balanced accuracy, 0.5 = not at all, 1 = "
            "always). The ranking shows the target idea rewritten into the generated ideas' form "
            "(parity: the published text).",
        ),
        *([Table(title="Duplicate ideas among the n per instance", columns=["scenario", *DUPLICATE_COLUMNS],
                 rows=duplicates, note=duplicate_note())] if duplicates else []),
    ]


def rank_figure(results: dict[str, Any]) -> Any:
    """Bar chart: where the target idea lands in the judge's rankings, per indicator and scenario."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    n = results["n"]
    panels = [(s, name, v) for s, b in results["scenarios"].items() for name, v in b["insight"].items()]
    fig, axes = plt.subplots(1, max(1, len(panels)), figsize=(4 * max(1, len(panels)), 3), squeeze=False)
    for ax, (scenario, name, v) in zip(axes[0], panels, strict=False):
        positions = list(range(1, n + 2))
        ax.bar(positions, [v["rank_counts"].get(str(p), 0) for p in positions], color="#4c72b0")
        ax.set_xticks(positions)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("rank of the target idea (1 = best)")
        ax.set_ylabel("instances")
        ax.set_title(f"{name} ({scenario})")
    fig.tight_layout()
    return fig


def example_sections(bench: IdeaBench, instances: Sequence[Instance], limit: int = 3) -> list[Section]:
    items: list[tuple[str, str]] = []
    for inst in list(instances)[:limit]:
        for scenario in bench.config.scenarios:
            ideas = bench.ideas(inst, scenario)
            target, _ = bench.target_text(inst)
            if not ideas:
                continue
            shown = shown_target(bench, inst, scenario)
            body = f"Target idea:\n{target}\n\n"
            if shown != target:
                body += f"Target idea as ranked (rewritten):\n{shown}\n\n"
            body += "\n\n".join(
                f"Generated idea {i + 1}: {idea.title or ''}\n{idea.text}" for i, idea in enumerate(ideas)
            )
            overlap = bench.store.get(f"overlap/{scenario}", inst.id)
            if overlap:
                body += f"\n\nOverlap judge reply:\n{overlap['judgment']['raw_text']}"
            items.append((f"{inst.id} — {inst.target.title} ({scenario})", body))
    return [Section(title="Examples", items=items)] if items else []


def skip_notes(results: dict[str, Any]) -> list[str]:
    notes = []
    for scenario, block in results["scenarios"].items():
        for reason, count in block["skipped"].items():
            notes.append(f"{scenario}: {count} instance(s) skipped: {reason}")
        if block["references_truncated"]:
            notes.append(
                f"{scenario}: references of {block['references_truncated']} instance(s) were truncated "
                "to fit the model's context (max_prompt_tokens)"
            )
        blinding = block.get("blinding") or {}
        rewrite = blinding.get("rewrite") or {}
        failed = rewrite.get("failed")
        why = "; ".join(rewrite.get("errors") or [])
        why = f" (final, not re-asked by a later run: {why})" if why else ""
        if rewrite.get("drop_warning"):
            tried = rewrite["rewritten"] + rewrite["failed"]
            notes.append(f"WARNING {scenario}: the rewrite check dropped {failed} of {tried} target ideas "
                         f"({rewrite['dropped_share']:.0%}, above {rewrite['drop_threshold']:.0%}): the "
                         f"Insight Score rests on the {rewrite['rewritten']} left (rewriter "
                         f"{', '.join(rewrite.get('rewriters') or {}) or results.get('rewriter')}){why}")
        elif failed:
            notes.append(f"{scenario}: the target idea of {failed} instance(s) could not be rewritten into "
                         f"the generated ideas' form (parse failure): dropped, not ranked{why}")
        for name, ins in block["insight"].items():
            if ins["m"] < 2:
                shown = "no value" if ins["insight_score"] is None else f"{ins['insight_score']:.3f}"
                notes.append(f"WARNING {scenario}: insight {name} is {shown} from m = {ins['m']} ranked "
                             f"instance(s) of {ins.get('instances', results['instances'])}: no interval, "
                             "not a result to compare")
        judge = results.get("judge")
        for name, ins in block["insight"].items():
            if judge and judge in (ins.get("by_rewriter") or {}):
                notes.append(f"{scenario}: insight {name}: the target ideas were rewritten by the judge "
                             f"({judge}) itself; a judge may prefer its own text (give --rewriter)")
                break
        for name in (blinding.get("surface") or {}).get("separating", []):
            notes.append(f"{scenario}: the surface feature {name!r} alone tells the target idea from the "
                         "generated ideas (separation >= 0.75): the ranking is not blind")
        if block["not_done"]:
            notes.append(f"{scenario}: {block['not_done']} instance(s) not done yet; re-run to resume")
    return notes
