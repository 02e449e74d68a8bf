"""Command line: ``ideaharness run|data|cache|demo|score-idea``. Flags mirror the Python API.

Each command module registers its commands on the apps in :mod:`ideaharness.cli.app`.
User errors print one line and exit 2; Ctrl-C exits 130 with everything finished kept on disk.
"""

from __future__ import annotations

import sys

from ideaharness.cli import (  # noqa: F401  (imported to register their commands)
    aiideabench,
    common,
    ideabench,
    ligbench,
    researchbench,
    scholarly,
)
from ideaharness.cli.app import app
from ideaharness.errors import UserError


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    try:
        code = app(args=argv, standalone_mode=False)
        # flush now: at interpreter exit llama.cpp's finaliser points fd 1/2 at /dev/null for a
        # moment, and output still buffered then (stdout to a file or pipe) would be lost
        sys.stdout.flush()
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("interrupted: finished work is saved; run the same command again to resume", file=sys.stderr)
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as exc:  # click usage errors and the like
        import click

        if isinstance(exc, click.exceptions.Abort):
            print("interrupted: finished work is saved; run the same command again to resume",
                  file=sys.stderr)
            sys.exit(130)
        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise
    if isinstance(code, int) and code:
        sys.exit(code)
