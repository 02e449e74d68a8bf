"""``ideaharness export`` and ``ideaharness compare``: read saved run directories (no model calls)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ideaharness.cli.app import app
from ideaharness.errors import PartialRunError, StorageError, UserError
from ideaharness.fileio import atomic_write_text
from ideaharness.report.compare import comparison_tables
from ideaharness.report.console import print_tables

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


__all__ = ["comparison_tables", "compare", "export"]
