"""The typer applications that command modules register on (no commands here)."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="ideaharness",
    help="Benchmark research-idea generation: IdeaBench, AI Idea Bench 2025, ResearchBench, LigBench.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
run_app = typer.Typer(help="Run a benchmark into a run directory (re-running resumes).", no_args_is_help=True)
data_app = typer.Typer(help="Build and validate datasets.", no_args_is_help=True)
cache_app = typer.Typer(help="The LLM response cache.", no_args_is_help=True)
app.add_typer(run_app, name="run")
app.add_typer(data_app, name="data")
app.add_typer(cache_app, name="cache")
