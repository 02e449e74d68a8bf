"""The typer applications commands register on, and the registry of command groups.

* ``ideaharness run <benchmark>``: one command per registered benchmark, generated from its config
  model (:func:`add_benchmark_commands`; nothing to add here for a new benchmark);
* other commands and groups register with one line: ``app.command("name")(fn)`` in a module
  listed in :data:`COMMAND_MODULES`, or ``register_app(typer_app, "name")`` for a group; a
  third-party package adds a module through the entry-point group ``ideaharness.commands``
  (imported before the CLI runs).

Help is plain text wrapped to the terminal width (no table cells cut with "…").
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Annotated, Any

import typer

from ideaharness import __version__

COMMAND_MODULES = (
    "ideaharness.cli.common",
    "ideaharness.cli.ligbench",
    "ideaharness.cli.scholarly",
    "ideaharness.cli.analysis",
    "ideaharness.cli.batch",
    "ideaharness.cli.doctor",
    "ideaharness.cli.tasks",
    "ideaharness.cli.check",
)
"""Modules that register commands on the apps below when imported."""
ENTRY_POINT_GROUP = "ideaharness.commands"


def new_app(**kwargs: Any) -> typer.Typer:
    """A typer app with the project's settings: plain help (wrapped, never cut), no completion."""
    return typer.Typer(rich_markup_mode=None, add_completion=False, pretty_exceptions_enable=False,
                       no_args_is_help=True, **kwargs)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ideaharness {__version__}")
        raise typer.Exit()


app = new_app(
    name="ideaharness",
    help="Benchmark research-idea generation: IdeaBench, AI Idea Bench 2025, ResearchBench, LigBench, "
    "LiveIdeaBench and every registered benchmark.",
)


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Benchmark research-idea generation (``ideaharness run --help`` lists the benchmarks)."""


run_app = new_app(help="Run a benchmark into a run directory (re-running resumes).")
data_app = new_app(help="Build and validate datasets.")
cache_app = new_app(help="The LLM response cache.")


def register_app(sub: typer.Typer, name: str) -> typer.Typer:
    """Add a command group ``ideaharness <name> ...``; returns ``sub``."""
    app.add_typer(sub, name=name)
    return sub


register_app(run_app, "run")
register_app(data_app, "data")
register_app(cache_app, "cache")

_LOADED: set[str] = set()


def load_commands() -> None:
    """Import the command modules and entry points once, and add a ``run`` command for every
    registered benchmark not yet added."""
    for module in COMMAND_MODULES:
        if module not in _LOADED:
            importlib.import_module(module)
            _LOADED.add(module)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.value not in _LOADED:
            ep.load()
            _LOADED.add(ep.value)
    add_benchmark_commands()


def add_benchmark_commands() -> None:
    """``ideaharness run <name>`` for every registered benchmark (see :mod:`ideaharness.cli.generate`)."""
    from ideaharness.cli.generate import benchmark_command
    from ideaharness.runner.registry import benchmarks

    present = {c.name for c in run_app.registered_commands}
    for name, bench in sorted(benchmarks().items()):
        if name not in present:
            run_app.command(name, help=bench.summary or bench.title or name)(benchmark_command(name))
