"""The ``ideaharness`` command run in the test process, as the CLI tests of every folder run it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from ideaharness.cli import main


def exit_status(args: list[str]) -> int:
    """``ideaharness ARGS`` in this process: its exit status (0 when ``main`` returns)."""
    try:
        main(args)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``ideaharness ARGS``: (exit status, stdout, stderr)."""
    code = exit_status(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def cli_output(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``ideaharness ARGS``: (exit status, stderr then stdout as one text)."""
    code, out, err = run_cli(args, capsys)
    return code, err + out


@contextlib.contextmanager
def offline_env(cache_dir: Path) -> Iterator[pytest.MonkeyPatch]:
    """For a module-scoped fixture (no ``monkeypatch``): no ``OPENAI_API_KEY`` or
    ``OPENAI_BASE_URL`` from the environment, the response cache in ``cache_dir``; undone on exit."""
    mp = pytest.MonkeyPatch()
    mp.delenv("OPENAI_API_KEY", raising=False)
    mp.delenv("OPENAI_BASE_URL", raising=False)
    mp.setenv("IDEAHARNESS_CACHE_DIR", str(cache_dir))
    try:
        yield mp
    finally:
        mp.undo()
