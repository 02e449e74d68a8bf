"""``ideaharness export`` and ``ideaharness compare``: read saved run directories (no model calls)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from ideaharness.cli.app import app
from ideaharness.errors import PartialRunError, StorageError, UserError
from ideaharness.fileio import atomic_write_text
from ideaharness.report.console import print_tables
from ideaharness.report.html import Table

BaseUrlOption = Annotated[
    str | None, typer.Option(help="OpenAI-compatible endpoint for openai/ models (else OPENAI_BASE_URL).")
]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Bypass the response cache.")]


@app.command("export")
def export(
    run_dir: Annotated[Path, typer.Argument(help="A run directory (the --out of a run).")],
    fmt: Annotated[str, typer.Option("--format", help="parquet, csv or jsonl.")] = "parquet",
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder to write into (default RUN_DIR/export).")
    ] = None,
) -> None:
    """Write the run's per-instance scores and its judgments as tables (columns: docs/export.md)."""
    from ideaharness.analysis.export import export_run

    for path in export_run(run_dir, fmt, out):
        typer.echo(str(path))


@app.command("compare")
def compare(
    run_dirs: Annotated[
        list[Path], typer.Argument(help="Run directories of one benchmark (2 or more systems).")
    ],
    allow_mismatch: Annotated[
        bool, typer.Option("--allow-mismatch", help="Compare although result-changing settings differ.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="Also write a self-contained HTML page.")
    ] = None,
    resamples: Annotated[int, typer.Option("--resamples", min=100, help="Bootstrap resamples.")] = 2000,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the bootstrap and of the permutation test.")
    ] = 0,
    min_n: Annotated[
        int,
        typer.Option("--min-n", min=2, help="Fewest shared instances for a significance mark (default 10)."),
    ] = 10,
    judge: Annotated[
        str | None,
        typer.Option(
            "--judge",
            help="Also play the benchmark's competition between the runs' ideas with this judge "
            "(AI Idea Bench: Swiss tournament + Bradley-Terry; incremental: only pairs not judged "
            "before are asked). Refused for a benchmark that declares no competition.",
        ),
    ] = None,
    base_url: BaseUrlOption = None,
    tournament_dir: Annotated[
        Path | None,
        typer.Option(
            "--tournament-dir",
            help="Where competition judgments are kept (AI Idea Bench default: "
            "beside the first run, aiideabench-tournament-<judge>).",
        ),
    ] = None,
    no_cache: NoCacheOption = False,
    force: Annotated[
        bool, typer.Option("--force", help="Start a new --tournament-dir if it holds another judge's.")
    ] = False,
) -> None:
    """Leaderboard of systems with n, bootstrap 95% CIs and paired differences over shared instances
    (permutation test, Holm-adjusted; no significance mark below --min-n shared instances)."""
    from ideaharness.analysis.compare import compare_runs

    result = compare_runs(run_dirs, allow_mismatch=allow_mismatch, n_resamples=resamples, seed=seed,
                          min_n=min_n)
    competition = None
    if judge is not None or tournament_dir is not None:
        from ideaharness.runner.options import ExecutionOptions
        from ideaharness.runner.registry import get_benchmark

        competition = get_benchmark(result["benchmark"]).cross_run_competition
        if competition is None:
            raise UserError(
                f"--judge: {result['benchmark']} declares no competition between runs "
                "(a benchmark's Benchmark.cross_run_competition hook; AI Idea Bench has one)"
            )
        options = ExecutionOptions(base_url=base_url, no_cache=no_cache, force=force, progress=False)
        result["tournament"] = competition.play(
            run_dirs,
            judge=judge,
            tournament_dir=tournament_dir,
            options=options,
            allow_mismatch=allow_mismatch,
            n_resamples=resamples,
        )
    if html is not None:
        from ideaharness.report.viewer import render_compare

        try:
            atomic_write_text(html, render_compare(result))
        except OSError as exc:
            raise StorageError(f"--html {html}: cannot be written ({exc.strerror or exc})") from None
    if as_json:
        typer.echo(json.dumps(result, indent=2))
    else:
        tables = comparison_tables(result)
        if competition is not None:
            tables.append(competition.table(result["tournament"]))
        print_tables(tables, Console(width=200) if not Console().is_terminal else None)
        if html is not None:
            typer.echo(f"wrote {html}")
    if result.get("tournament", {}).get("status") == "partial":
        raise PartialRunError(
            f"partial competition: {len(result['tournament']['failed_units'])} judgment(s) failed (listed "
            f"in {result['tournament']['tournament_dir']}/results.json); run the same command again to retry"
        )


def comparison_tables(result: dict[str, Any]) -> list[Table]:
    """Console tables of a comparison: systems with judge reliability, then one table per metric."""
    rel = result["reliability"]
    tables = [
        Table(
            title=f"Systems compared ({result['benchmark']})",
            columns=[
                "system",
                "run",
                "judgments",
                "parse-failure rate",
                "retry rate",
                "reliability warnings",
            ],
            rows=[
                [
                    s["label"],
                    s["run_dir"],
                    rel[s["label"]]["judgments"],
                    rel[s["label"]]["parse_failure_rate"],
                    rel[s["label"]]["retry_rate"],
                    "; ".join(rel[s["label"]]["reliability_warnings"]) or "–",
                ]
                for s in result["systems"]
            ],
            note=("settings differ (--allow-mismatch): " + ", ".join(result["settings_mismatch"]))
            if result["settings_mismatch"]
            else None,
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


def _verdict(pair: dict[str, Any]) -> str:
    if pair["significant"]:
        return "yes *"
    if pair["verdict"] == "not significant":
        return "no"
    return str(pair["verdict"])


def _ci(value: list[float] | None) -> str | None:
    return None if value is None else f"[{value[0]:.3f}, {value[1]:.3f}]"


__all__ = ["comparison_tables", "compare", "export"]
