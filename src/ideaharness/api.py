"""Python API mirroring the CLI: ``ideaharness.run("ideabench", generator=..., limit=3, ...)``.

Keyword arguments are the CLI flags with underscores (``n_ideas``, ``base_url``, ``no_cache`` or
``use_cache``, ``timeout`` or ``timeout_s``, ``max_retries``, ``max_prompt_tokens``);
``generator``/``judge`` also accept any :class:`~ideaharness.llm.types.ChatModel` object (e.g. a
:class:`~ideaharness.llm.scripted.ScriptedModel` or an already built client).

The returned results dict says whether the run is complete, as the CLI's exit status does:
``status`` is "complete" or "partial" and ``failed_units`` lists each unit that failed or was
skipped after retries (step, instance_id, key, status, last error).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from importlib import import_module
from typing import Any

from pydantic import BaseModel

from ideaharness.benchmarks._common import ExecutionOptions
from ideaharness.errors import UserError

# benchmark name -> (module, config class name, async run function name, extra runner arguments)
BENCHMARKS: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    "ideabench": ("ideaharness.benchmarks.ideabench", "IdeaBenchConfig", "run_ideabench_async", ()),
    "aiideabench": (
        "ideaharness.benchmarks.aiideabench",
        "AIIdeaBenchConfig",
        "run_aiideabench_async",
        ("compare", "scholar", "embed_fn"),
    ),
    "researchbench": (
        "ideaharness.benchmarks.researchbench",
        "ResearchBenchConfig",
        "run_researchbench_async",
        (),
    ),
    "ligbench": ("ideaharness.benchmarks.ligbench", "LigBenchConfig", "run_ligbench_async", ()),
}


def split_kwargs(
    config_cls: type[BaseModel], kwargs: dict[str, Any], runner_args: tuple[str, ...] = ()
) -> tuple[BaseModel, ExecutionOptions, dict[str, Any]]:
    """Split flat keyword arguments into (config, execution options, runner arguments).

    Model objects given as ``generator``/``judge`` become runner arguments (their ``model`` string
    goes into the config); ``runner_args`` names other arguments passed to the runner unchanged.
    """
    kwargs = dict(kwargs)
    models: dict[str, Any] = {name: kwargs.pop(name) for name in runner_args if name in kwargs}
    for role in ("generator", "judge"):
        value = kwargs.get(role)
        if value is not None and not isinstance(value, str):
            models[role] = value
            kwargs[role] = getattr(value, "model", type(value).__name__)
    if "no_cache" in kwargs:
        kwargs["use_cache"] = not kwargs.pop("no_cache")
    if "timeout" in kwargs:  # the CLI's --timeout
        kwargs["timeout_s"] = kwargs.pop("timeout")
    option_fields = set(ExecutionOptions.model_fields)
    config_fields = set(config_cls.model_fields)
    unknown = set(kwargs) - option_fields - config_fields
    if unknown:
        raise UserError(f"unknown argument(s) {', '.join(sorted(unknown))}")
    options = ExecutionOptions(**{k: v for k, v in kwargs.items() if k in option_fields})
    config = config_cls(**{k: v for k, v in kwargs.items() if k in config_fields})
    return config, options, models


def run(benchmark: str = "ideabench", **kwargs: Any) -> dict[str, Any]:
    """Run (or resume) a benchmark and return its results dict (also written to results.json).

    ``results["status"]`` is "partial" (the CLI's exit status 3) when units failed or were skipped
    after retries; ``results["failed_units"]`` names them with their last error.

    Raises:
        UserError: unknown benchmark or argument, bad data, missing key.
    """
    if benchmark not in BENCHMARKS:
        raise UserError(f"unknown benchmark {benchmark!r}; choose one of {', '.join(BENCHMARKS)}")
    module_name, config_name, runner_name, runner_args = BENCHMARKS[benchmark]
    module = import_module(module_name)
    if benchmark == "ligbench" and "generator" in kwargs:  # LigBench compares several generators
        generator = kwargs.pop("generator")
        if isinstance(generator, str):
            kwargs["generators"] = [generator]
        else:
            kwargs["generators"] = [generator.model]
            kwargs.setdefault("_generators", {generator.model: generator})
    config, options, models = split_kwargs(
        getattr(module, config_name), kwargs, (*runner_args, "_generators")
    )
    if "_generators" in models:
        models["generators"] = models.pop("_generators")
    runner: Callable[..., Any] = getattr(module, runner_name)
    return asyncio.run(runner(config, options, **models))
