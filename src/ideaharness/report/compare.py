"""The console tables of ``ideaharness compare``: the systems compared (name, how their ideas
were produced, the instances they answered), then one leaderboard per metric.

Reads only the dict :func:`ideaharness.analysis.compare.compare_runs` returns, as ``--json``
prints it and ``compare --html`` (:func:`ideaharness.report.viewer.render_compare`) shows it.
"""

from __future__ import annotations

from typing import Any

from ideaharness.tables import Table

SYSTEM_COLUMNS = [
    "system",
    "kind",
    "spec",
    "run",
    "instances scored",
    "missing",
    "extra",
    "judgments",
    "parse-failure rate",
    "retry rate",
    "reliability warnings",
]
"""Columns of the "Systems compared" table (console and HTML)."""


def system_row(system: dict[str, Any], reliability: dict[str, Any]) -> list[Any]:
    """One row of :data:`SYSTEM_COLUMNS`: ``missing``/``extra`` are None (–) for a run saved
    before results.json recorded its idea sources."""
    return [
        system["label"],
        system.get("kind_label"),
        system.get("spec"),
        system["run_dir"],
        system.get("instances_scored"),
        system.get("missing"),
        system.get("extra"),
        reliability["judgments"],
        reliability["parse_failure_rate"],
        reliability["retry_rate"],
        "; ".join(reliability["reliability_warnings"]) or "–",
    ]


def missing_lines(result: dict[str, Any]) -> list[str]:
    """One line per system that gave no answer for some instances: those are failed units of its
    run, never scored as zeros; it is ranked on the instances it was scored on (n) and compared
    with each other system on the instances both were scored on (n shared)."""
    out = []
    for s in result["systems"]:
        missing = (s.get("answers") or {}).get("missing") or []
        if missing:
            shown = ", ".join(str(m) for m in missing[:5]) + (", …" if len(missing) > 5 else "")
            out.append(f"{s['label']} ({s.get('kind_label') or 'system'}) gave no answer for "
                       f"{len(missing)} instance(s) ({shown}): failed units, not scored; its value is over "
                       "the n instances it was scored on, each difference over the n shared instances")
    return out


def comparison_tables(result: dict[str, Any]) -> list[Table]:
    """Console tables of a comparison: the systems (name, kind, spec, run, instances scored,
    missing and extra instances, judge reliability), then one table per metric."""
    rel = result["reliability"]
    notes = []
    if result["settings_mismatch"]:
        notes.append("settings differ (--allow-mismatch): " + ", ".join(result["settings_mismatch"]))
    notes += missing_lines(result)
    tables = [
        Table(
            title=f"Systems compared ({result['benchmark']})",
            columns=SYSTEM_COLUMNS,
            rows=[system_row(s, rel[s["label"]]) for s in result["systems"]],
            note="\n".join(notes) or None,
        )
    ]
    method = result["method"]
    for metric, block in result["metrics"].items():
        best = block["leaderboard"][0]["system"] if block["leaderboard"] else None
        vs_best = {p["b"]: p for p in block["paired"] if p["a"] == best}
        rows = []
        for b in block["leaderboard"]:
            p = vs_best.get(b["system"])
            rows.append(
                [
                    b.get("rank"),
                    b["system"],
                    b["n"],
                    b["mean"],
                    _ci(b["ci95"]),
                    None if p is None or p["mean_diff"] is None else 0.0 - p["mean_diff"],
                    None if p is None else p["n_shared"],
                    None
                    if p is None
                    else _ci([0.0 - p["ci95"][1], 0.0 - p["ci95"][0]] if p["ci95"] else None),
                    None if p is None else p["p_value"],
                    None if p is None else p["p_holm"],
                    None if p is None else _verdict(p),
                    evidence_cell(b.get("evidence")),
                ]
            )
        statistic = block.get("statistic", "mean over instances")
        tables.append(
            Table(
                title=metric if statistic == "mean over instances" else f"{metric} ({statistic})",
                columns=[
                    "rank",
                    "system",
                    "n",
                    "value" if statistic != "mean over instances" else "mean",
                    "95% CI",
                    "Δ vs best (paired)",
                    "n shared",
                    "Δ 95% CI",
                    "p",
                    "p (Holm)",
                    "significant",
                    "run verdict",
                ],
                rows=rows,
                note=f"{method['interval']}, {method['n_resamples']} resamples over instances; "
                "Δ paired over the instances both systems were scored on; p: paired permutation test "
                f"(exact up to 13 shared instances), Holm over the {method['family_size']} comparisons "
                f"with at least {method['min_n']} shared instances; * = p (Holm) < {method['alpha']:g}; "
                f"no mark below {method['min_n']} shared instances. All pairs and the method: --json.",
            )
        )
    return tables


def evidence_cell(evidence: dict[str, Any] | None) -> str | None:
    """The "run verdict" cell of a leaderboard row: the verdict of the system's own run for the
    metric (evidence, weak, not evidence) with its first reason; None (–) when its run has none."""
    if not evidence:
        return None
    reasons = [r for r in evidence.get("reasons") or [] if not str(r).startswith("coverage unknown")]
    return str(evidence["verdict"]) + (f": {reasons[0]}" if reasons else "")


def _verdict(pair: dict[str, Any]) -> str:
    if pair["significant"]:
        return "yes *"
    if pair["verdict"] == "not significant":
        return "no"
    return str(pair["verdict"])


def _ci(value: list[float] | None) -> str | None:
    return None if value is None else f"[{value[0]:.3f}, {value[1]:.3f}]"


__all__ = ["SYSTEM_COLUMNS", "comparison_tables", "evidence_cell", "missing_lines", "system_row"]
