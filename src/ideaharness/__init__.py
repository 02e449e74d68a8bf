"""ideaharness: benchmarks for research-idea generation over one vocabulary.

``ideaharness.run("ideabench", generator="local/qwen2.5-coder-0.5b", limit=2)`` runs a benchmark
from Python with the CLI's parameters (``await ideaharness.arun(...)`` in a notebook); see
:mod:`ideaharness.api`.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def run(benchmark: str = "ideabench", **kwargs: Any) -> dict[str, Any]:
    """Run a benchmark; see :func:`ideaharness.api.run`."""
    from ideaharness.api import run as _run

    return _run(benchmark, **kwargs)


def load_run(path: object) -> object:
    """Load a run directory as DataFrames; see :func:`ideaharness.analysis.load.load_run`."""
    from ideaharness.analysis.load import load_run as _load_run

    return _load_run(path)  # type: ignore[arg-type]


async def arun(benchmark: str = "ideabench", **kwargs: Any) -> dict[str, Any]:
    """Run a benchmark from async code (notebooks); see :func:`ideaharness.api.arun`."""
    from ideaharness.api import arun as _arun

    return await _arun(benchmark, **kwargs)
