"""CLI commands generated from pydantic models: ``ideaharness run <name>`` for every registered
benchmark, its flags from the benchmark's config model plus the shared
:class:`~ideaharness.runner.options.ExecutionOptions` and ``--config FILE``.

Every generated flag defaults to "not given": the values a run uses come from the model defaults,
then the ``--config`` file, then the flags given (see :mod:`ideaharness.runner.arguments`); the
help shows the model's default.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel

from ideaharness.runner.fields import Param, params
from ideaharness.runner.options import ExecutionOptions

CONFIG_PARAM = "config_file"


def option_parameters(models: Sequence[type[BaseModel]], *,
                      skip: Sequence[str] = ()) -> list[inspect.Parameter]:
    """Keyword parameters (typer options, default None = not given) for the flat parameters of
    ``models`` (see :func:`~ideaharness.runner.fields.params`), the first model's first.

    Raises:
        ValueError: two models declare a parameter of the same name.
    """
    out: list[inspect.Parameter] = []
    seen: set[str] = set(skip)
    for model in models:
        for param in params(model):
            if param.name in seen:
                if param.name in skip:
                    continue
                raise ValueError(f"{model.__name__}: parameter {param.name!r} declared twice")
            seen.add(param.name)
            out.append(_parameter(param))
    return out


def _parameter(param: Param) -> inspect.Parameter:
    cli_type: Any = list[param.cli_type] if param.multiple else param.cli_type  # type: ignore[name-defined]
    help_text = param.help + (f" [default: {param.default_text}]" if param.default_text is not None else "")
    option = typer.Option(param.flag, help=help_text.strip() or None, show_default=False,
                          metavar=_metavar(param))
    if param.cli_type is bool and "/" not in param.flag:  # an off-by-default switch
        return inspect.Parameter(param.name, inspect.Parameter.KEYWORD_ONLY, default=False,
                                 annotation=Annotated[bool, option])
    return inspect.Parameter(param.name, inspect.Parameter.KEYWORD_ONLY, default=None,
                             annotation=Annotated[cli_type | None, option])


def _metavar(param: Param) -> str | None:
    if param.cli_type is bool:
        return None
    return {int: "INT", float: "NUM", Path: "PATH"}.get(param.cli_type, "TEXT")


def config_parameter() -> inspect.Parameter:
    """``--config FILE``: settings from a YAML/JSON file (flags given override it)."""
    return inspect.Parameter(
        CONFIG_PARAM, inspect.Parameter.KEYWORD_ONLY, default=None,
        annotation=Annotated[Path | None, typer.Option(
            "--config", help="YAML or JSON file of settings (field or flag names); flags given on the "
            "command line override it.")],
    )


def given(values: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """The flags actually given: a value other than the parameter's default (None for a flag or a
    ``--yes/--no`` pair, so its "no" side counts; False for an off-by-default switch) that is not
    an empty list."""
    return {k: v for k, v in values.items()
            if v is not defaults.get(k) and not (isinstance(v, list | tuple) and not v)}


def make_command(parameters: list[inspect.Parameter], handler: Callable[..., None],
                 doc: str) -> Callable[..., None]:
    """A function typer can register whose signature is ``parameters``; it calls
    ``handler(**given flags)``."""

    defaults = {p.name: p.default for p in parameters}

    def command(**values: Any) -> None:
        from ideaharness.errors import Terminated

        try:
            handler(**given(values, defaults))
        except Terminated as exc:  # click would turn it into Ctrl-C's 130
            raise typer.Exit(exc.exit_code) from None

    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    command.__doc__ = doc
    return command


def benchmark_command(name: str) -> Callable[..., None]:
    """The ``ideaharness run <name>`` command: flags from the config model, execution options and
    ``--config``; prints the tables and exits 0, 3 (partial) or 1 (see :mod:`ideaharness.cli`)."""
    from ideaharness.runner.registry import get_benchmark

    bench = get_benchmark(name)
    parameters = [*option_parameters([bench.config_class, ExecutionOptions]), config_parameter()]

    def handler(**values: Any) -> None:
        from ideaharness.api import run
        from ideaharness.report.console import print_banner, print_reliability, print_tables
        from ideaharness.runner.run import default_out, finish_run

        config_file = values.pop(CONFIG_PARAM, None)
        results = run(name, config=config_file, **values)
        print_banner(results)
        print_tables(_tables(bench, results))
        print_reliability(results)
        from ideaharness.runner.leakage import leakage_lines

        for line in leakage_lines(results):  # the knowledge cutoff: excluded works, leaks, models
            print(line)
        out = Path(results.get("settings", {}).get("execution", {}).get("out") or default_out(name))
        finish_run(results, out)

    return make_command(parameters, handler, bench.summary or bench.title or name)


def _tables(bench: Any, results: dict[str, Any]) -> list[Any]:
    config = bench.config_class.model_validate(results["settings"]["config"])
    return bench(config).tables(results)
