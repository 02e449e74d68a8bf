"""AI Idea Bench 2025 (Qiu et al., arXiv 2504.14191): IMCQ, I2I, I2T, competition, NA and FA.

Public API re-exported from the modules of this package: :class:`AIIdeaBenchConfig`,
:class:`AIIdeaBench` (the registered benchmark: ``ideaharness.run("aiideabench", ...)``),
:func:`results_tables`.
"""

from ideaharness.benchmarks.aiideabench.config import ALL_METRICS, BENCHMARK_VERSION, AIIdeaBenchConfig
from ideaharness.benchmarks.aiideabench.report import results_tables
from ideaharness.benchmarks.aiideabench.run import AIIdeaBench, load_aiideabench_instances

__all__ = [
    "ALL_METRICS",
    "BENCHMARK_VERSION",
    "AIIdeaBench",
    "AIIdeaBenchConfig",
    "load_aiideabench_instances",
    "results_tables",
]
