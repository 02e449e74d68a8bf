"""``ideaharness tasks``: what an idea-generation system outside ideaharness is asked.

* ``tasks schema BENCHMARK [--out FILE]``: the benchmark's answer JSON Schema (its idea contract);
  ``tasks schema --all --out DIR`` writes ``<benchmark>.idea.v<N>.json`` for every benchmark
  (how ``docs/schemas/`` is made).
* ``tasks export BENCHMARK [the flags of run BENCHMARK] --out tasks.jsonl [--work DIR]``: the run's
  generation tasks, one task JSON per line, the exact text a ``cmd:`` system reads on stdin
  (:mod:`ideaharness.runner.export`: capture mode, and how the judge work before generation is reused).

Errors (unknown benchmark, a benchmark without a contract, an unwritable ``--out``) are one line, exit 1.
"""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from typing import Annotated, Any

import typer

from ideaharness.cli.app import new_app, register_app
from ideaharness.cli.generate import CONFIG_PARAM, config_parameter, make_command, option_parameters
from ideaharness.errors import UserError
from ideaharness.runner.options import ExecutionOptions

tasks_app = register_app(new_app(help="Generation tasks for systems outside ideaharness: the answer "
                                      "schema of a benchmark, and the tasks of a run."), "tasks")

TASKS_OUT = "tasks_out"
WORK = "work"


@tasks_app.command("schema")
def schema(
    benchmark: Annotated[str | None, typer.Argument(help="The benchmark (e.g. aiideabench).")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the schema to this file (with --all: "
                                                            "this folder) instead of printing it.")] = None,
    every: Annotated[bool, typer.Option("--all", help="Every benchmark's schema, into the --out folder "
                                                      "as <benchmark>.idea.v<N>.json.")] = False,
) -> None:
    """Print (or write) the JSON Schema of a benchmark's answers (its idea contract)."""
    from ideaharness.fileio import atomic_write_text
    from ideaharness.runner.export import benchmark_contract, schema_text, write_schemas

    if every:
        if benchmark is not None or out is None:
            raise UserError("tasks schema --all writes every schema into the --out folder; give --out DIR "
                            "and no benchmark")
        if out.exists() and not out.is_dir():
            raise UserError(f"--out {out}: not a folder")
        for path in write_schemas(out):
            typer.echo(f"wrote {path}")
        return
    if benchmark is None:
        raise UserError("tasks schema: give a benchmark (or --all --out DIR)")
    text = schema_text(benchmark_contract(benchmark))
    if out is None:
        typer.echo(text, nl=False)
        return
    if out.is_dir():
        raise UserError(f"--out {out}: is a folder; give the schema file to write")
    atomic_write_text(out, text)
    typer.echo(f"wrote {out}")


def export_command(name: str) -> Any:
    """The click command of ``tasks export <name>``: the flags of ``run <name>`` (but ``--out``, here
    the tasks file) plus ``--work``."""
    from ideaharness.runner.registry import get_benchmark

    bench = get_benchmark(name)
    parameters = [
        *option_parameters([bench.config_class, ExecutionOptions], skip=("out",)), config_parameter(),
        inspect.Parameter(TASKS_OUT, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
            Path | None, typer.Option("--out", help="The tasks file to write (JSON Lines, one task a "
                                                    "line).")]),
        inspect.Parameter(WORK, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
            Path | None, typer.Option("--work", help="Run directory of the export (resumable); default: a "
                                                     "temporary one, removed afterwards.")]),
    ]

    def handler(**values: Any) -> None:
        from ideaharness.runner.export import export_tasks

        out = values.pop(TASKS_OUT, None)
        if out is None:
            raise UserError(f"tasks export {name}: give --out FILE (the tasks file to write)")
        work = values.pop(WORK, None)
        config_file = values.pop(CONFIG_PARAM, None)
        done = asyncio.run(export_tasks(name, Path(out), work=work, config=config_file, **values))
        typer.echo(f"wrote {done['tasks']} task(s) of {done['contract']} to {done['out']}")

    single = new_app()
    single.command(name, help=f"Export the generation tasks of a run of {name}.")(
        make_command(parameters, handler, f"Export the generation tasks of a run of {name}."))
    return typer.main.get_command(single)


@tasks_app.command("export", context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                                               "help_option_names": []})
def export(
    ctx: typer.Context,
    benchmark: Annotated[str | None, typer.Argument(help="The benchmark; then its run flags, --out FILE "
                                                         "and --work DIR.")] = None,
) -> None:
    """Write a run's generation tasks (one task JSON per line) for a system to answer offline:
    tasks export BENCHMARK [the flags of run BENCHMARK] --out tasks.jsonl [--work DIR];
    'tasks export BENCHMARK --help' lists the flags."""
    if benchmark in (None, "--help", "-h"):
        typer.echo(ctx.get_help())
        return
    assert benchmark is not None
    from ideaharness.runner.export import benchmark_contract

    benchmark_contract(benchmark)  # one line for an unknown benchmark or one without contract
    command = export_command(benchmark)
    command.main(args=list(ctx.args), prog_name=f"ideaharness tasks export {benchmark}",
                 standalone_mode=False)
