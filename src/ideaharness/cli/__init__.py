"""Command line: ``ideaharness run <benchmark>|data|cache|demo|score-idea``. Flags mirror the
Python API (:mod:`ideaharness.api`).

``run <benchmark>`` commands are generated for every registered benchmark; other commands register
on the apps of :mod:`ideaharness.cli.app`. Exit statuses: 0 complete; 1 usage or input error (one
line, no traceback); 3 partial run (units failed or were skipped after retries, listed in
results.json); 130 Ctrl-C and 143 SIGTERM, with everything finished kept on disk and the report
written. Every message is redacted (:func:`ideaharness.redaction.redact`).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import TextIO

from pydantic import ValidationError

from ideaharness.cli.app import app, load_commands
from ideaharness.errors import EXIT_INTERRUPTED, EXIT_USER_ERROR, DataWarning, Terminated, UserError
from ideaharness.redaction import redact

INTERRUPTED = "interrupted: finished work is saved; run the same command again to resume"
TERMINATED = "terminated (SIGTERM): finished work is saved; run the same command again to resume"


def main(argv: list[str] | None = None) -> None:
    """Console entry point: runs the typer app and turns every expected failure into one line."""
    try:
        load_commands()
        with warnings.catch_warnings():
            warnings.showwarning = _data_warnings_as_lines(warnings.showwarning)
            code = app(args=argv, standalone_mode=False)
        # flush now: at interpreter exit llama.cpp's finaliser points fd 1/2 at /dev/null for a
        # moment, and output still buffered then (stdout to a file or pipe) would be lost
        sys.stdout.flush()
    except UserError as exc:
        _fail(f"error: {exc}", exc.exit_code)
    except Terminated as exc:
        _fail(TERMINATED, exc.exit_code)
    except KeyboardInterrupt:
        _fail(INTERRUPTED, EXIT_INTERRUPTED)
    except ValidationError as exc:
        error = exc.errors()[0]
        if exc.title.endswith(("Config", "Options", "Settings")):  # a flag value refused (--rpm -5)
            loc = tuple(str(p) for p in error["loc"] if not isinstance(p, int))
            value = error.get("input")
            shown = f" {value!r}" if isinstance(value, str | int | float) and not isinstance(value,
                                                                                             bool) else ""
            _fail(f"error: {_flag_of(loc)}{shown}: {error['msg']}", EXIT_USER_ERROR)
        # anything else is data that reached a model unchecked: name the model and field, no flag
        field = ".".join(str(p) for p in error["loc"]) or "(value)"
        _fail(f"error: invalid {exc.title}, field '{field}': {error['msg']}", EXIT_USER_ERROR)
    except Exception as exc:
        # typer's own click raises usage errors with .show()/.exit_code (typer._click in
        # typer >= 0.20, click before): show the usage line and the error, no traceback
        show, exit_code = getattr(exc, "show", None), getattr(exc, "exit_code", None)
        if callable(show) and isinstance(exit_code, int):
            show()
            sys.exit(EXIT_USER_ERROR if exit_code else 0)
        if type(exc).__name__ == "Abort":  # click turns KeyboardInterrupt (and Terminated) into Abort
            if isinstance(exc.__cause__ or exc.__context__, Terminated):
                _fail(TERMINATED, Terminated.exit_code)
            _fail(INTERRUPTED, EXIT_INTERRUPTED)
        raise
    if code == EXIT_INTERRUPTED:  # typer turns Ctrl-C into Exit(130)
        _fail(INTERRUPTED, EXIT_INTERRUPTED)
    if code == Terminated.exit_code:  # a generated command turns SIGTERM into Exit(143)
        _fail(TERMINATED, Terminated.exit_code)
    if isinstance(code, int) and code:
        sys.exit(code)


def _flag_of(loc: tuple[str, ...]) -> str:
    """The CLI flag of a config or option field at ``loc`` (a nested path for nested settings)."""
    from pydantic import BaseModel

    from ideaharness.runner.fields import params
    from ideaharness.runner.options import ExecutionOptions
    from ideaharness.runner.registry import benchmarks

    if not loc:
        return "a value"
    models: list[type[BaseModel]] = [ExecutionOptions, *(b.config_class for b in benchmarks().values())]
    for model in models:
        for param in params(model):
            if param.path == loc[: len(param.path)] and len(param.path) == len(loc):
                return param.flag.split("/")[0]
    return "--" + loc[-1].replace("_", "-")


def _data_warnings_as_lines(show: Callable[..., None]) -> Callable[..., None]:
    """A ``warnings.showwarning`` printing our data warnings as one line ``warning: ...`` on
    stderr and passing any other warning to ``show``."""

    def show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                     file: TextIO | None = None, line: str | None = None) -> None:
        if issubclass(category, DataWarning):
            print(f"warning: {redact(message)}", file=sys.stderr)
        else:
            show(message, category, filename, lineno, file, line)

    return show_warning


def _fail(message: str, code: int) -> None:
    sys.stdout.flush()
    print(redact(message), file=sys.stderr)
    sys.exit(code)
