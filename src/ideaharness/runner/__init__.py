"""One protocol, one runner, registries: how every benchmark runs.

* :class:`Benchmark` (:mod:`.protocol`): what a benchmark declares;
* :func:`register_benchmark`, :func:`register_metric`, :func:`register_enricher` (:mod:`.registry`);
* :class:`ExecutionOptions` (:mod:`.options`): the options every run shares;
* :func:`arun_benchmark` (:mod:`.run`): the runner; :class:`StepRunner` (:mod:`.steps`): recorded steps.
"""

from ideaharness.runner import reliability as _reliability  # noqa: F401, I001  (registers the enricher)
from ideaharness.runner import leakage as _leakage  # noqa: F401, I001  (registers the enricher)
from ideaharness.runner.options import ExecutionOptions
from ideaharness.runner.protocol import (
    Benchmark,
    BenchmarkConfig,
    Competition,
    Enricher,
    MetricSpec,
    MetricValue,
    RunContext,
)
from ideaharness.runner.registry import (
    benchmarks,
    get_benchmark,
    metrics,
    register_benchmark,
    register_enricher,
    register_metric,
)
from ideaharness.runner.run import arun_benchmark, select_items
from ideaharness.runner.steps import DEFAULT_MAX_PROMPT_TOKENS, Executor, LocalExecutor, StepRunner

__all__ = [
    "DEFAULT_MAX_PROMPT_TOKENS",
    "Benchmark",
    "BenchmarkConfig",
    "Competition",
    "Enricher",
    "ExecutionOptions",
    "Executor",
    "LocalExecutor",
    "MetricSpec",
    "MetricValue",
    "RunContext",
    "StepRunner",
    "arun_benchmark",
    "benchmarks",
    "get_benchmark",
    "metrics",
    "register_benchmark",
    "register_enricher",
    "register_metric",
    "select_items",
]
