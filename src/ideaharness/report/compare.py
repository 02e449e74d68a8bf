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
    "coverage",
    "judgments",
    "parse-failure rate",
    "retry rate",
    "reliability warnings",
]
"""Columns of the "Systems compared" table (console and HTML)."""


def system_row(system: dict[str, Any], reliability: dict[str, Any]) -> list[Any]:
    """One row of :data:`SYSTEM_COLUMNS`: ``missing`` counts the instances without a usable answer
    (missing, failed or unparsed generations); ``missing``/``extra``/``coverage`` are None (–) for a
    run saved before results.json recorded its idea sources. Coverage: ``answered/asked (rate)``,
    marked ``!`` when it differs from the best-covered system's (:func:`coverage_lines`)."""
    return [
        system["label"],
        system.get("kind_label"),
        system.get("spec"),
        system["run_dir"],
        system.get("instances_scored"),
        system.get("missing"),
        system.get("extra"),
        coverage_cell(system),
        reliability["judgments"],
        reliability["parse_failure_rate"],
        reliability["retry_rate"],
        "; ".join(reliability["reliability_warnings"]) or "–",
    ]


def coverage_cell(system: dict[str, Any]) -> str | None:
    """``"answered/asked (rate)"`` of a system's coverage, ``!`` appended when it is marked; None
    when the run recorded none."""
    cov = system.get("coverage")
    if not cov or cov.get("asked") is None:
        return None
    rate = cov.get("rate")
    text = f"{cov['answered']}/{cov['asked']}" + (f" ({rate:.3f})" if rate is not None else "")
    return text + (" !" if system.get("coverage_differs") else "")


def missing_lines(result: dict[str, Any]) -> list[str]:
    """One line per system that gave no usable answer for some instances (missing from its file,
    a failed call or a reply that did not parse): those are failed units of its run, never scored
    as zeros; every system is ranked on the instances all were scored on (n), its own value over
    its own instances beside it, and compared with each other system on the instances both were
    scored on (n shared). Then :func:`coverage_lines`."""
    out = []
    for s in result["systems"]:
        answers = s.get("answers") or {}
        missing = answers.get("failed") or answers.get("missing") or []
        if missing:
            shown = ", ".join(str(m) for m in missing[:5]) + (", …" if len(missing) > 5 else "")
            out.append(f"{s['label']} ({s.get('kind_label') or 'system'}) gave no answer for "
                       f"{len(missing)} instance(s) ({shown}): failed units (missing, failed or unparsed), "
                       "not scored; ranked on the n instances every system was scored on, each difference "
                       "over the n shared instances")
    return out + coverage_lines(result)


def coverage_lines(result: dict[str, Any]) -> list[str]:
    """One line per system marked ``coverage_differs``: its coverage, the best one, the threshold
    and that the leaderboards rank on the instances every system was scored on."""
    systems = [s for s in result["systems"] if s.get("coverage") and s["coverage"].get("rate") is not None]
    if not systems:
        return []
    best = max(s["coverage"]["rate"] for s in systems)
    gap = (result.get("method") or {}).get("coverage_gap")
    out = []
    for s in systems:
        if s.get("coverage_differs"):
            cov = s["coverage"]
            out.append(f"! {s['label']}: coverage {cov['answered']}/{cov['asked']} ({cov['rate']:.3f}), "
                       "below the "
                       f"best-covered system's {best:.3f} by more than {gap if gap is not None else 0.05:g}: "
                       "its value over its own instances rests on those it could answer; the leaderboards "
                       "rank every system on the instances all were scored on (n), its own value beside")
    return out


def format_p_value(value: float | None) -> str | None:
    """A p-value as compare prints it: 3 decimals, ``<0.001`` below 0.001 (never ``0.000``: a
    permutation test's p is never 0), None (–) when there is none."""
    if value is None:
        return None
    return "<0.001" if value < 0.001 else f"{value:.3f}"


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
                    _ci(b["ci95"]) or b.get("ci_why"),
                    b.get("own_mean"),
                    b.get("own_n"),
                    _rate(b),
                    None if p is None or p["mean_diff"] is None else 0.0 - p["mean_diff"],
                    None if p is None else p["n_shared"],
                    None
                    if p is None
                    else _ci([0.0 - p["ci95"][1], 0.0 - p["ci95"][0]] if p["ci95"] else None),
                    None if p is None else format_p_value(p["p_value"]),
                    None if p is None else format_p_value(p["p_holm"]),
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
                    "own value",
                    "own n",
                    "coverage",
                    "Δ vs best (paired)",
                    "n shared",
                    "Δ 95% CI",
                    "p",
                    "p (Holm)",
                    "significant",
                    "run verdict",
                ],
                rows=rows,
                note=f"{_basis(block)}95% interval: {block.get('interval') or method['interval']}; Δ: paired "
                f"percentile bootstrap, {method['n_resamples']} resamples over instances; "
                "Δ paired over the instances both systems were scored on; p: paired permutation test "
                f"(exact up to 13 shared instances), Holm over the {method['family_size']} comparisons "
                f"with at least {method['min_n']} shared instances; * = p (Holm) < {method['alpha']:g}; "
                f"no mark below {method['min_n']} shared instances. All pairs and the method: --json.",
            )
        )
    return tables


def _basis(block: dict[str, Any]) -> str:
    """The first words of a leaderboard's note: which instances its n and value are over."""
    if block.get("ranked_on") == "shared":
        return (f"value and n over the {block.get('n_shared_all')} instances every system was scored on "
                "(own value, own n: over all its own; coverage: answered/asked generations, ! = more "
                "than the stated gap below the best); ")
    if block.get("ranked_on") == "own":
        return "the systems share no instance: each over its own instances; "
    return ""


def _rate(row: dict[str, Any]) -> str | None:
    rate = row.get("coverage")
    if rate is None:
        return None
    return f"{rate:.3f}" + (" !" if row.get("coverage_differs") else "")


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


__all__ = ["SYSTEM_COLUMNS", "comparison_tables", "coverage_cell", "coverage_lines", "format_p_value",
           "missing_lines", "system_row"]
