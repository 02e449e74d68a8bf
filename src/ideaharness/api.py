"""Python API mirroring the CLI: ``ideaharness.run("ideabench", generator=..., limit=3, ...)``.

Keyword arguments are the CLI flags with underscores (``n_ideas``, ``base_url``, ``no_cache``,
``timeout``, ``max_retries``, ``max_attempts``, ``price=(1, 2)`` or ``"1,2"``, ``shard="0/2"``);
``config=`` takes a YAML/JSON file or a dict of the same settings (keywords override it), or a
config object of the benchmark. ``generator``/``judge`` also accept any
:class:`~ideaharness.llm.types.ChatModel` object (e.g. a :class:`~ideaharness.llm.scripted.ScriptedModel`);
``models={role: client}`` sets any role. Benchmarks are looked up in the registry
(:mod:`ideaharness.runner.registry`), so a registered third-party benchmark runs the same way.

The returned results dict says whether the run is complete, as the CLI's exit status does:
``status`` is "complete" or "partial" and ``failed_units`` lists each unit that failed or was
skipped after retries (step, instance_id, key, status, last error).
"""

from __future__ import annotations

import asyncio
from typing import Any

from ideaharness.errors import UserError
from ideaharness.runner.arguments import resolve
from ideaharness.runner.registry import benchmarks, get_benchmark
from ideaharness.runner.run import arun_benchmark

IN_LOOP_MESSAGE = (
    "ideaharness.run() was called inside a running event loop (a Jupyter notebook, an async "
    "application): use `results = await ideaharness.arun(...)` there, with the same arguments"
)


async def arun(benchmark: str = "ideabench", *, config: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Run (or resume) a benchmark from async code; same arguments as :func:`run`.

    Raises:
        UserError: unknown benchmark or argument, bad data, missing key.
    """
    bench = get_benchmark(benchmark)
    handle_sigterm = bool(kwargs.pop("_handle_sigterm", False))
    args = resolve(bench, config=config, **kwargs)
    return await arun_benchmark(bench, args, handle_sigterm=handle_sigterm)


def run(benchmark: str = "ideabench", *, config: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Run (or resume) a benchmark and return its results dict (also written to results.json).

    ``results["status"]`` is "partial" (the CLI's exit status 3) when units failed or were skipped
    after retries; ``results["failed_units"]`` names them with their last error. SIGTERM is
    handled like Ctrl-C (results and report written, then :class:`~ideaharness.errors.Terminated`).

    Raises:
        UserError: unknown benchmark or argument, bad data, missing key, or called inside a
            running event loop (use :func:`arun` there).
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise UserError(IN_LOOP_MESSAGE)
    return asyncio.run(arun(benchmark, config=config, _handle_sigterm=True, **kwargs))


def available_benchmarks() -> list[str]:
    """Names of every registered benchmark (built-in and from entry points)."""
    return sorted(benchmarks())
